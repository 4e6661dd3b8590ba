package ingressnginx

import (
	"strconv"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file converts the rule settings of features.go: CORS to the
// HTTPRoute CORS filter, affinity to sessionPersistence, the proxy timeouts
// to timeouts.backendRequest; basic auth, rate limits and a body limit have
// no Gateway API field and are listed.

// dropPolicy lists the rule policy settings the Gateway API cannot say.
func (m *migrator) dropPolicy(r *engine.RouteRule, p *table.RulePolicy) {
	if p.BasicAuth != nil {
		m.drop(r, AnnotationPrefix+"auth-type", "ingress-nginx asks for a user and password (basic auth, users of Secret "+p.BasicAuth.Secret+
			"); the Gateway API has no basic auth: use your implementation's policy (Envoy Gateway's SecurityPolicy basicAuth reads the same htpasswd Secret) "+
			"or an ExternalAuth filter; the route lets every client in")
	}
	if rl := p.RateLimit; rl != nil {
		var what []string
		if rl.PerSecond > 0 {
			what = append(what, strconv.Itoa(rl.PerSecond)+" requests per second")
		}
		if rl.PerMinute > 0 {
			what = append(what, strconv.Itoa(rl.PerMinute)+" per minute")
		}
		if rl.Connections > 0 {
			what = append(what, strconv.Itoa(rl.Connections)+" requests in progress")
		}
		var names []string
		for _, f := range p.From {
			if strings.HasPrefix(f, AnnotationPrefix+"limit-") {
				names = append(names, f)
			}
		}
		m.drop(r, strings.Join(names, ", "), "ingress-nginx limits each client address to "+strings.Join(what, ", ")+
			" (503 beyond); the Gateway API has no rate limit: use your implementation's policy (Envoy Gateway's BackendTrafficPolicy rateLimit, for one)")
	}
	for _, f := range p.From {
		if f == AnnotationPrefix+"proxy-body-size" {
			m.drop(r, f, "ingress-nginx refuses request bodies over "+strconv.FormatInt(p.MaxRequestBody, 10)+" bytes with 413 (0: no limit); "+
				"the Gateway API has no body limit: use your implementation's policy (Envoy Gateway's ClientTrafficPolicy, for one)")
		}
	}
}

// ruleSettings carries affinity and the proxy timeouts over, and lists
// custom-http-errors, which the Gateway API cannot say.
func (m *migrator) ruleSettings(r *engine.RouteRule, rule *gwv1.HTTPRouteRule) {
	if ep := r.ErrorPages; ep != nil {
		codes := make([]string, len(ep.Codes))
		for i, c := range ep.Codes {
			codes[i] = strconv.Itoa(c)
		}
		by := "ingress-nginx's own default backend (404)"
		if ep.Backend != nil {
			by = "the default backend " + ep.Backend.Service.String()
		}
		m.drop(r, AnnotationPrefix+"custom-http-errors", "ingress-nginx replaces the backend's answers "+strings.Join(codes, ", ")+" with the answer of "+by+
			" (sent X-Code, X-Format, X-Original-URI and the location's names); the Gateway API has no error-page filter: use your implementation's error-page policy "+
			"if it has one, or let the application render its own error pages (the route passes the backend's answers)")
	}

	if s := r.SessionPersistence; s != nil && s.Type == table.SessionCookie {
		typ := gwv1.CookieBasedSessionPersistence
		name, path := gwv1.CookieName(s.Name), s.Path
		life := gwv1.SessionCookieLifetimeType
		sp := &gwv1.SessionPersistence{Type: &typ, Cookie: &gwv1.CookieConfig{Name: &name, Path: &path, LifetimeType: &life}}
		if s.Lifetime == table.LifetimePermanent {
			life = gwv1.PermanentCookieLifetimeType
			d := gwv1.Duration(table.FormatDuration(s.AbsoluteTimeout))
			sp.AbsoluteTimeout = &d
		}
		rule.SessionPersistence = sp
		m.notes = append(m.notes, "affinity cookie "+s.Name+" became sessionPersistence: the cookie's value is the implementation's, so sessions ingress-nginx started do not carry over")
	}
	if t := r.Timeouts; t != nil && t.BackendRequest > 0 {
		d := gwv1.Duration(table.FormatDuration(t.BackendRequest))
		rule.Timeouts = &gwv1.HTTPRouteTimeouts{BackendRequest: &d}
		m.notes = append(m.notes, "timeouts.backendRequest "+string(d)+" is the sum of proxy-connect-, -send- and -read-timeout: it bounds the whole "+
			"backend request, where nginx bounds each connect, write and read (a response streaming longer is cut)")
	}
}

// migrateCORS is an ingress-nginx CORS setting as the HTTPRoute CORS
// filter; the lists are split on commas.
func (m *migrator) migrateCORS(c *table.CORS) *gwv1.HTTPCORSFilter {
	out := &gwv1.HTTPCORSFilter{MaxAge: c.MaxAge}
	if c.AllowCredentials {
		t := true
		out.AllowCredentials = &t
	}
	if c.AnyOrigin {
		out.AllowOrigins = []gwv1.CORSOrigin{"*"}
	}
	for _, o := range c.AllowOrigins {
		origin := o.Scheme + "://" + o.Host
		if (o.Scheme != "http" || o.Port != "80") && (o.Scheme != "https" || o.Port != "443") && o.Port != "" {
			origin += ":" + o.Port
		}
		out.AllowOrigins = append(out.AllowOrigins, gwv1.CORSOrigin(origin))
	}
	split := func(l []string) []string {
		var out []string
		for _, v := range l {
			for _, e := range strings.Split(v, ",") {
				if e = strings.TrimSpace(e); e != "" {
					out = append(out, e)
				}
			}
		}
		return out
	}
	for _, v := range split(c.AllowMethods) {
		out.AllowMethods = append(out.AllowMethods, gwv1.HTTPMethodWithWildcard(strings.ToUpper(v)))
	}
	for _, v := range split(c.AllowHeaders) {
		out.AllowHeaders = append(out.AllowHeaders, gwv1.HTTPHeaderName(v))
	}
	for _, v := range split(c.ExposeHeaders) {
		out.ExposeHeaders = append(out.ExposeHeaders, gwv1.HTTPHeaderName(v))
	}
	if c.Nginx != nil {
		m.notes = append(m.notes, "enable-cors became a CORS filter, which answers preflights 200 (ingress-nginx: 204, to any OPTIONS from an "+
			"allowed origin), sends Allow-Methods, Allow-Headers and Max-Age on preflights only, answers an allowed origin with itself where ingress-nginx answers \"*\" to cors-allow-origin \"*\", "+
			"and lets \"*.\" in an origin match more than one label")
	}
	return out
}

// migrateMirror is mirror-target as a RequestMirror filter of the Service
// the URL names; a URL naming no Service of the manifests is listed.
func (m *migrator) migrateMirror(r *engine.RouteRule, b *engine.Backend) []gwv1.HTTPRouteFilter {
	if b.Invalid != "" {
		m.drop(r, AnnotationPrefix+"mirror-target", b.Invalid+": mirror to a Service (a RequestMirror filter's backendRef), or use your implementation's mirroring")
		return nil
	}
	ns := gwv1.Namespace(b.Service.Namespace)
	port := gwv1.PortNumber(b.Port)
	m.notes = append(m.notes, "mirror-target became a RequestMirror of "+b.Service.String()+": the copy carries the request's Host and the path the backend gets, "+
		"where nginx sends $request_uri with mirror-host or the target's host name")
	if b.TLS != nil {
		m.drop(r, AnnotationPrefix+"mirror-target", "ingress-nginx mirrors over TLS without verifying "+b.Service.String()+
			"; write a BackendTLSPolicy for the Service with its CA and hostname")
	}
	return []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestMirror, RequestMirror: &gwv1.HTTPRequestMirrorFilter{
		BackendRef: gwv1.BackendObjectReference{Name: gwv1.ObjectName(b.Service.Name), Namespace: &ns, Port: &port}}}}
}
