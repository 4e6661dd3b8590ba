package ingressnginx

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file is the canary family: canary, canary-by-header(-value,
// -pattern), canary-by-cookie and canary-weight(-total), which attach a
// canary Ingress's locations to the main Ingress's and split the traffic
// as ingress-nginx's Lua balancer does.

// ingressCanary is how a canary Ingress takes requests from the main
// Ingress of the same host and path, in ingress-nginx's order: header,
// cookie, weight.
type ingressCanary struct {
	// header names the request header ("": none); headerValue, else
	// headerPattern, replaces "always" as the value that picks the canary.
	header, headerValue, headerPattern string
	// cookie names the cookie whose value always or never decides ("": none).
	cookie string
	// weight of total requests go to the canary when nothing above decided.
	weight, total int32
}

// parseIngressCanary reads the canary-* annotations.
func parseIngressCanary(str func(string) string, warn func(name, msg string)) *ingressCanary {
	c := &ingressCanary{header: str("canary-by-header"), headerValue: str("canary-by-header-value"),
		headerPattern: str("canary-by-header-pattern"), cookie: str("canary-by-cookie"), total: 100}
	number := func(name string, into *int32) {
		v := str(name)
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			warn(name, "invalid number "+strconv.Quote(v)+"; ingress-nginx ignores it")
			return
		}
		*into = int32(n)
	}
	number("canary-weight", &c.weight)
	number("canary-weight-total", &c.total)
	if c.total == 0 {
		c.total = 100
	}
	if c.headerPattern != "" {
		if _, err := regexp.Compile(c.headerPattern); err != nil {
			warn("canary-by-header-pattern", "not an RE2 expression ("+err.Error()+"); gwdev ignores it")
			c.headerPattern = ""
		}
	}
	return c
}

// attachCanaries gives each location the canary Ingress path of the same
// host, kind and path (one per location, as ingress-nginx allows); a canary
// path without a main one is noted and not served.
func (t *translator) attachCanaries(c *ingressClass, byHost map[string]*nginxServer) {
	for _, st := range c.ingresses {
		if st.ann.canary == nil {
			continue
		}
		for i, r := range st.obj.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for j, p := range r.HTTP.Paths {
				field := "spec.rules[" + itoa(i) + "].http.paths[" + itoa(j) + "]"
				attached := false
				for _, lp := range nginxLocationPaths(p) {
					s := byHost[r.Host]
					if s == nil {
						continue
					}
					for _, l := range s.locations {
						if l.exact != lp.exact || l.path != lp.path || l.ing == nil {
							continue
						}
						if l.canary != nil && l.canary.ing != st {
							t.note(engine.SeverityWarning, st.key, field, "canary: the path already has the canary "+l.canary.ing.key.Namespace+"/"+
								l.canary.ing.key.Name+"; ingress-nginx applies one canary per path")
							continue
						}
						l.canary = &nginxLocation{ing: st, key: st.key, field: field, backend: &r.HTTP.Paths[j].Backend, ns: st.obj.Namespace,
							name: "ingress/" + st.obj.Namespace + "/" + st.obj.Name + "/rule/" + itoa(i) + "/path/" + itoa(j)}
						attached = true
					}
				}
				if !attached {
					t.note(engine.SeverityWarning, st.key, field, "canary: no main Ingress has host "+engine.Quote(r.Host)+" path "+engine.Quote(p.Path)+"; ingress-nginx ignores the canary")
				}
			}
		}
	}
}

// canaryRules are the rules that send a location's requests to its canary,
// placed before the location's own rule r and sharing its match and
// filters: the header's never (to r's backend) and always (or the
// header value or pattern), the cookie's never and always, then, with a
// weight, r itself becomes a weighted split.
func (t *translator) canaryRules(r *engine.RouteRule, canary *nginxLocation) []*engine.RouteRule {
	c := canary.ing.ann.canary
	probe := &engine.RouteRule{Name: canary.name}
	t.nginxBackend(probe, canary)
	if probe.DirectStatus != 0 || r.DirectStatus != 0 {
		return nil // the note says why; the location keeps its own answer
	}
	var out []*engine.RouteRule
	with := func(suffix string, vm table.ValueMatch, toCanary bool) {
		m := *r.HTTP
		m.Headers = append(slices.Clone(m.Headers), vm)
		rr := &engine.RouteRule{Name: canary.name + "/canary/" + suffix, Route: canary.key, Source: t.locationSource(canary), HTTP: &m,
			Filters: r.Filters, ExternalAuth: r.ExternalAuth, Policy: r.Policy, Backends: r.Backends,
			SessionPersistence: r.SessionPersistence, Timeouts: r.Timeouts, Mirrors: r.Mirrors, ErrorPages: r.ErrorPages}
		if toCanary {
			rr.Backends = probe.Backends
		} else {
			rr.Name, rr.Route, rr.Source = r.Name+"/canary-never/"+suffix, r.Route, r.Source
		}
		out = append(out, rr)
	}
	if c.header != "" {
		name := textprotoCanonical(c.header)
		switch {
		case c.headerValue != "":
			with("header", table.ValueMatch{Name: name, Type: table.MatchExact, Value: c.headerValue}, true)
		case c.headerPattern != "":
			with("header", table.ValueMatch{Name: name, Type: table.MatchRegularExpression, Value: anyRest + "(?:" + c.headerPattern + ")" + anyRest}, true)
		default:
			with("header", table.ValueMatch{Name: name, Type: table.MatchExact, Value: "never"}, false)
			with("header", table.ValueMatch{Name: name, Type: table.MatchExact, Value: "always"}, true)
		}
	}
	if c.cookie != "" {
		cookie := func(v string) table.ValueMatch {
			return table.ValueMatch{Name: "Cookie", Type: table.MatchRegularExpression,
				Value: "(?:|.*;)[ \\t]*" + regexp.QuoteMeta(c.cookie) + "=" + v + "[ \\t]*(?:;.*)?"}
		}
		with("cookie", cookie("never"), false)
		with("cookie", cookie("always"), true)
	}
	if c.weight > 0 {
		main := *r.Backends[0]
		main.Weight = max(c.total-c.weight, 0)
		can := *probe.Backends[0]
		can.Weight = min(c.weight, c.total)
		r.Backends = []*engine.Backend{&main, &can}
	}
	return out
}
