// Package cors is the data plane's CORS: the table's resolved CORS filter
// (table.CORS) compiled into a Policy that says whether a request's
// Origin is allowed, whether the request is a preflight the gateway
// answers itself, and which headers the answer carries, as the Gateway
// API's HTTPCORSFilter or ingress-nginx's enable-cors (table.NginxCORS)
// has them. The emulator's exchange calls it; it records nothing in
// traces itself.
package cors

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// Policy is a compiled HTTPCORSFilter. Wildcards are answered with the
// request's own origin, method or headers, which the spec allows with and
// without credentials.
type Policy struct {
	anyOrigin   bool
	origins     []originPattern
	credentials bool
	anyMethod   bool
	methods     string
	anyHeader   bool
	headers     string
	anyExpose   bool
	expose      string
	maxAge      string
	// nginx answers as ingress-nginx's enable-cors does (table.NginxCORS);
	// preflightStatus is its preflight status.
	nginx           bool
	preflightStatus int
}

// originPattern is one allowed origin with its wildcard host compiled.
type originPattern struct {
	table.CORSOrigin
	hostRE *regexp.Regexp
}

// Compile readies the table's CORS filter: lists joined into header
// values, wildcard hosts compiled with compile (the data plane's cache of
// regular expressions); a host that does not compile allows nothing.
func Compile(f *table.CORS, compile func(expr string) (*regexp.Regexp, error)) *Policy {
	p := &Policy{anyOrigin: f.AnyOrigin, credentials: f.AllowCredentials,
		anyMethod: f.AnyMethod, methods: strings.Join(f.AllowMethods, ", "),
		anyHeader: f.AnyHeader, headers: strings.Join(f.AllowHeaders, ", "),
		anyExpose: f.ExposeAny, expose: strings.Join(f.ExposeHeaders, ", "),
		maxAge: strconv.Itoa(int(f.MaxAge))}
	wildcard := `.*`
	if f.Nginx != nil {
		p.nginx, p.preflightStatus = true, f.Nginx.PreflightStatus
		wildcard = `[A-Za-z0-9-]+` // one DNS label, as ingress-nginx's origin regex
	}
	for _, o := range f.AllowOrigins {
		op := originPattern{CORSOrigin: o}
		if strings.Contains(o.Host, "*") {
			expr := strings.ReplaceAll(regexp.QuoteMeta(o.Host), `\*`, wildcard)
			re, err := compile(expr)
			if err != nil {
				continue
			}
			op.hostRE = re
		}
		p.origins = append(p.origins, op)
	}
	return p
}

// Allows reports whether the request Origin is allowed.
func (p *Policy) Allows(origin string) bool {
	if p.anyOrigin && p.nginx {
		return true // ingress-nginx answers "*" with or without an Origin
	}
	if origin == "" {
		return false
	}
	if p.anyOrigin {
		return true
	}
	req, ok := table.ParseOrigin(strings.ToLower(origin))
	if !ok {
		return false
	}
	for i := range p.origins {
		o := &p.origins[i]
		if o.Scheme != req.Scheme || o.Port != req.Port {
			continue
		}
		if o.hostRE != nil && o.hostRE.MatchString(req.Host) || o.hostRE == nil && o.Host == req.Host {
			return true
		}
	}
	return false
}

// isPreflight reports whether r is a CORS preflight request.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" &&
		r.Header.Get("Access-Control-Request-Method") != ""
}

// IsPreflight reports whether the policy answers r as a preflight:
// ingress-nginx answers every OPTIONS request from an allowed origin.
func (p *Policy) IsPreflight(r *http.Request) bool {
	if p.nginx {
		return r.Method == http.MethodOptions && p.Allows(r.Header.Get("Origin"))
	}
	return isPreflight(r)
}

// PreflightStatus is the status of an allowed preflight answer.
func (p *Policy) PreflightStatus() int {
	if p.nginx && p.preflightStatus != 0 {
		return p.preflightStatus
	}
	return http.StatusOK
}

// PreflightHeaders sets the headers of an allowed preflight answer.
func (p *Policy) PreflightHeaders(h http.Header, r *http.Request) {
	if p.nginx {
		p.nginxHeaders(h, r.Header.Get("Origin"))
		h.Set("Content-Type", "text/plain charset=UTF-8")
		return
	}
	p.ActualHeaders(h, r.Header.Get("Origin"))
	if p.anyMethod {
		h.Set("Access-Control-Allow-Methods", r.Header.Get("Access-Control-Request-Method"))
	} else if p.methods != "" {
		h.Set("Access-Control-Allow-Methods", p.methods)
	}
	if p.anyHeader {
		if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
			h.Set("Access-Control-Allow-Headers", rh)
		}
	} else if p.headers != "" {
		h.Set("Access-Control-Allow-Headers", p.headers)
	}
	h.Set("Access-Control-Max-Age", p.maxAge)
}

// ActualHeaders sets the headers of a response to an allowed cross-origin
// request.
func (p *Policy) ActualHeaders(h http.Header, origin string) {
	if p.nginx {
		p.nginxHeaders(h, origin)
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if p.credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	switch {
	case p.anyExpose && !p.credentials:
		h.Set("Access-Control-Expose-Headers", "*")
	case p.anyExpose:
		// "*" is not allowed with credentials; nothing to list.
	case p.expose != "":
		h.Set("Access-Control-Expose-Headers", p.expose)
	}
	h.Add("Vary", "Origin")
}

// nginxHeaders sets the headers ingress-nginx's CORS block sets on every
// answer to an allowed origin, preflight or not: the lists as written,
// "*" for any origin, no Vary.
func (p *Policy) nginxHeaders(h http.Header, origin string) {
	if p.anyOrigin {
		origin = "*"
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if p.credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", p.methods)
	h.Set("Access-Control-Allow-Headers", p.headers)
	if p.expose != "" {
		h.Set("Access-Control-Expose-Headers", p.expose)
	}
	h.Set("Access-Control-Max-Age", p.maxAge)
}

// Nginx reports whether the policy answers as ingress-nginx's enable-cors
// does (every OPTIONS request from an allowed origin is a preflight).
func (p *Policy) Nginx() bool { return p.nginx }
