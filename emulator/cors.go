package emulator

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// corsPolicy is a compiled HTTPCORSFilter. Wildcards are answered with the
// request's own origin, method or headers, which the spec allows with and
// without credentials.
type corsPolicy struct {
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
}

// originPattern is one allowed origin: scheme, host (exact or with "*"
// matching any number of labels to its left) and port (the scheme's default
// when absent).
type originPattern struct {
	scheme string
	host   string
	hostRE *regexp.Regexp
	port   string
}

func compileCORS(f *table.HTTPCORSFilter, rc *regexCache) *corsPolicy {
	p := &corsPolicy{maxAge: "5"}
	if f == nil {
		return p
	}
	for _, o := range f.AllowOrigins {
		s := strings.ToLower(strings.TrimSpace(string(o)))
		if s == "*" {
			p.anyOrigin = true
			continue
		}
		scheme, host, port, ok := splitOrigin(s)
		if !ok {
			continue
		}
		op := originPattern{scheme: scheme, host: host, port: port}
		if strings.Contains(host, "*") {
			expr := strings.ReplaceAll(regexp.QuoteMeta(host), `\*`, `.*`)
			re, err := rc.compile(expr)
			if err != nil {
				continue
			}
			op.hostRE = re
		}
		p.origins = append(p.origins, op)
	}
	p.credentials = f.AllowCredentials != nil && *f.AllowCredentials
	p.methods, p.anyMethod = joinCORSList(f.AllowMethods)
	p.headers, p.anyHeader = joinCORSList(f.AllowHeaders)
	p.expose, p.anyExpose = joinCORSList(f.ExposeHeaders)
	if f.MaxAge > 0 {
		p.maxAge = strconv.Itoa(int(f.MaxAge))
	}
	return p
}

// splitOrigin parses "<scheme>://<host>[:<port>]" (lower case).
func splitOrigin(s string) (scheme, host, port string, ok bool) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || rest == "" {
		return "", "", "", false
	}
	host = strings.TrimSuffix(rest, "/")
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host, port = host[:i], host[i+1:]
	}
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme, host, port, true
}

// allows reports whether the request Origin is allowed.
func (p *corsPolicy) allows(origin string) bool {
	if origin == "" {
		return false
	}
	if p.anyOrigin {
		return true
	}
	scheme, host, port, ok := splitOrigin(strings.ToLower(origin))
	if !ok {
		return false
	}
	for i := range p.origins {
		o := &p.origins[i]
		if o.scheme != scheme || o.port != port {
			continue
		}
		if o.hostRE != nil && o.hostRE.MatchString(host) || o.hostRE == nil && o.host == host {
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

// preflightHeaders sets the headers of an allowed preflight answer.
func (p *corsPolicy) preflightHeaders(h http.Header, r *http.Request) {
	p.actualHeaders(h, r.Header.Get("Origin"))
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

// actualHeaders sets the headers of a response to an allowed cross-origin
// request.
func (p *corsPolicy) actualHeaders(h http.Header, origin string) {
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

// joinCORSList renders a CORS list as a header value and reports whether it
// holds the "*" wildcard.
func joinCORSList[T ~string](vals []T) (string, bool) {
	any := false
	out := make([]string, len(vals))
	for i, v := range vals {
		if v == "*" {
			any = true
		}
		out[i] = string(v)
	}
	return strings.Join(out, ", "), any
}
