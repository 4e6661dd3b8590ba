package engine

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// collectRoutes wraps every route of every kind in a routeState, in a fixed
// order: by kind (registry order), then namespace/name.
func (t *translator) collectRoutes() {
	finger := -1 // the routes come in the order of their sources
	t.out.EachRoute(func(rt Route) {
		t.routes = append(t.routes, newRouteState(rt, len(t.routes), t.in.sourceRefFrom(rt.Key(), &finger)))
	})
}

// newRouteState wraps a route read from src, the index-th route of its
// translation.
func newRouteState(rt Route, index int, src *Source) *routeState {
	o, key := rt.Object(), rt.Key()
	r := &routeState{kind: key.Kind, key: key, index: int32(index), src: src, name: lowerKind(key.Kind) + "/" + key.Namespace + "/" + key.Name,
		obj: o, route: rt, gen: o.GetGeneration(), parentRefs: rt.ParentRefs(), useDefaultGateways: rt.commonSpec().UseDefaultGateways}
	for _, h := range rt.Hostnames() {
		r.hostnames = append(r.hostnames, strings.ToLower(string(h)))
	}
	return r
}

// lowerKind is a route kind in lower case, as names start (the kinds'
// own without a copy each).
func lowerKind(kind string) string {
	switch kind {
	case KindHTTPRoute:
		return "httproute"
	case KindGRPCRoute:
		return "grpcroute"
	}
	return strings.ToLower(kind)
}

// ruleName builds "<kind>/<ns>/<name>/rule/<i>".
func ruleName(r *routeState, i int) string {
	return r.name + "/rule/" + itoa(i)
}

// ruleSource is where rule i of the route was read from.
func (r *routeState) ruleSource(i int) Source {
	if r.src == nil {
		return Source{}
	}
	return r.src.At(rulePath(i))
}

// compileRoute turns a route's rules into table entries with resolved
// backends and records ResolvedRefs and Accepted failures.
func (t *translator) compileRoute(r *routeState) { r.route.compile(t, r) }

// compileTLSRoute builds one SNIRoute per rule.
func (t *translator) compileTLSRoute(r *routeState, o *gwv1.TLSRoute) {
	for i, rule := range o.Spec.Rules {
		name := ruleName(r, i)
		r.sni = append(r.sni, &SNIRoute{Name: name, Route: r.key, Source: r.ruleSource(i), Index: &table.RuleIndex{Rule: i, Match: -1},
			Backends: t.resolveBackendRefs(r, i, name, rule.BackendRefs)})
	}
}

// compileTCPRoute builds one StreamRoute per rule.
func (t *translator) compileTCPRoute(r *routeState, o *gwv1.TCPRoute) {
	for i, rule := range o.Spec.Rules {
		t.compileStreamRule(r, i, rule.BackendRefs)
	}
}

// compileUDPRoute builds one StreamRoute per rule.
func (t *translator) compileUDPRoute(r *routeState, o *gwv1.UDPRoute) {
	for i, rule := range o.Spec.Rules {
		t.compileStreamRule(r, i, rule.BackendRefs)
	}
}

// compileStreamRule builds the StreamRoute of rule i of a TCP or UDP route.
func (t *translator) compileStreamRule(r *routeState, i int, refs []gwv1.BackendRef) {
	name := ruleName(r, i)
	r.stream = append(r.stream, &StreamRoute{Name: name, Route: r.key, Source: r.ruleSource(i), Index: &table.RuleIndex{Rule: i, Match: -1},
		Backends: t.resolveBackendRefs(r, i, name, refs)})
}

// resolveBackendRefs resolves plain backendRefs (TLS, TCP, UDP routes).
func (t *translator) resolveBackendRefs(r *routeState, i int, rule string, refs []gwv1.BackendRef) []*Backend {
	var out []*Backend
	for k, ref := range refs {
		b, f := t.resolveBackendRef(r, rule+"/backend/"+itoa(k), ref.BackendObjectReference, ref.Weight)
		if f != nil {
			r.refFailures = append(r.refFailures, f.at(backendRefPath(i, k)))
		}
		out = append(out, b)
	}
	return out
}

// compileHTTPRoute builds one RouteRule per match of every rule gwdev can
// implement; the others are dropped (see httpRuleUnsupported).
func (t *translator) compileHTTPRoute(r *routeState, o *gwv1.HTTPRoute) {
	r.ruleCount = len(o.Spec.Rules)
	for i := range o.Spec.Rules {
		rule := &o.Spec.Rules[i]
		// The rule's name is its first match's without "/match/0" (a rule
		// has one at least): one string for both (0.6 MB fewer for 10,000
		// HTTPRoutes).
		match0 := r.name + "/rule/" + itoa(i) + "/match/0" // ruleName, then the match
		name := match0[:len(match0)-len("/match/0")]
		if why := httpRuleUnsupported(rule); why != "" {
			r.dropRule(i, rule.Name, why)
			continue
		}
		proto := &RouteRule{Route: r.key, Source: r.ruleSource(i), Timeouts: compileTimeouts(rule.Timeouts), Retry: compileRetry(rule.Retry),
			SessionPersistence: compileSession(rule.SessionPersistence)}
		if rule.SessionPersistence != nil {
			t.noteSessionDeprecated(r.key, rule.SessionPersistence, "spec.rules["+itoa(i)+"].sessionPersistence")
		}
		if rule.Name != nil {
			proto.RuleName = string(*rule.Name)
		}
		t.applyRuleFilters(r, proto, name, rule.Filters)
		if len(rule.BackendRefs) > 0 {
			proto.Backends = slices.Grow(proto.Backends, len(rule.BackendRefs))
		}
		for k, br := range rule.BackendRefs {
			b, f := t.resolveBackendRef(r, name+"/backend/"+itoa(k), br.BackendObjectReference, br.Weight)
			if f != nil {
				r.refFailures = append(r.refFailures, f.at(backendRefPath(i, k)))
			}
			t.applyBackendFilters(r, b, br.Filters)
			proto.Backends = append(proto.Backends, b)
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwv1.HTTPRouteMatch{{}}
		}
		for j := range matches {
			rr := *proto
			rr.Name = match0
			if j > 0 {
				rr.Name = name + "/match/" + itoa(j)
			}
			rr.Index = &table.RuleIndex{Rule: i, Match: j}
			rr.HTTP = compileHTTPMatch(&matches[j])
			rr.Filters = compileFilters(rule.Filters, rr.HTTP)
			rr.Backends = backendsForMatch(proto.Backends, rule.BackendRefs, rr.HTTP, j)
			finishRuleResponse(&rr)
			r.rules = append(r.rules, &rr)
			r.pathLens = append(r.pathLens, writtenPathLen(&matches[j]))
		}
	}
}

// backendsForMatch gives the rule's backends their filters compiled for
// match j (m): the first match's are set on the backends themselves; a
// backend whose filters depend on the match is copied for every later one.
func backendsForMatch(bs []*Backend, refs []gwv1.HTTPBackendRef, m *table.HTTPMatch, j int) []*Backend {
	out, copied := bs, false
	for k, b := range bs {
		switch {
		case j == 0:
			b.Filters = compileFilters(refs[k].Filters, m)
		case filtersDependOnMatch(refs[k].Filters):
			if !copied {
				out, copied = slices.Clone(bs), true
			}
			c := *b
			c.Filters = compileFilters(refs[k].Filters, m)
			out[k] = &c
		}
	}
	return out
}

// compileGRPCRoute builds one RouteRule per match; filters are converted to
// their HTTPRoute equivalents (the shapes are the same).
func (t *translator) compileGRPCRoute(r *routeState, o *gwv1.GRPCRoute) {
	r.ruleCount = len(o.Spec.Rules)
	for i := range o.Spec.Rules {
		rule := &o.Spec.Rules[i]
		match0 := r.name + "/rule/" + itoa(i) + "/match/0" // as for HTTPRoutes (ruleName)
		name := match0[:len(match0)-len("/match/0")]
		if why := grpcRuleUnsupported(rule); why != "" {
			r.dropRule(i, rule.Name, why)
			continue
		}
		filters := grpcFilters(rule.Filters)
		proto := &RouteRule{Route: r.key, Source: r.ruleSource(i), SessionPersistence: compileSession(rule.SessionPersistence),
			Filters: compileFilters(filters, nil)}
		if rule.SessionPersistence != nil {
			t.noteSessionDeprecated(r.key, rule.SessionPersistence, "spec.rules["+itoa(i)+"].sessionPersistence")
		}
		if rule.Name != nil {
			proto.RuleName = string(*rule.Name)
		}
		t.applyRuleFilters(r, proto, name, filters)
		for k, br := range rule.BackendRefs {
			b, f := t.resolveBackendRef(r, name+"/backend/"+itoa(k), br.BackendObjectReference, br.Weight)
			if f != nil {
				r.refFailures = append(r.refFailures, f.at(backendRefPath(i, k)))
			}
			bf := grpcFilters(br.Filters)
			b.Filters = compileFilters(bf, nil)
			t.applyBackendFilters(r, b, bf)
			proto.Backends = append(proto.Backends, b)
		}
		finishRuleResponse(proto)
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwv1.GRPCRouteMatch{{}}
		}
		for j := range matches {
			rr := *proto
			rr.Name = match0
			if j > 0 {
				rr.Name = name + "/match/" + itoa(j)
			}
			rr.Index = &table.RuleIndex{Rule: i, Match: j}
			rr.GRPC = compileGRPCMatch(&matches[j])
			r.rules = append(r.rules, &rr)
			r.pathLens = append(r.pathLens, 0)
		}
	}
}

// dropRule records a rule gwdev leaves out of the table.
func (r *routeState) dropRule(i int, name *gwv1.SectionName, why string) {
	d := droppedRule{index: i, why: why}
	if name != nil {
		d.name = string(*name)
	}
	r.dropped = append(r.dropped, d)
}

// httpRuleUnsupported says why gwdev cannot implement an HTTPRoute rule: a
// regular expression Go's RE2 engine cannot compile. "" means the rule is
// fine.
func httpRuleUnsupported(rule *gwv1.HTTPRouteRule) string {
	for j, m := range rule.Matches {
		if m.Path != nil && m.Path.Type != nil && *m.Path.Type == gwv1.PathMatchRegularExpression && m.Path.Value != nil {
			if why := badRegex(matchPath(j)+".path", *m.Path.Value); why != "" {
				return why
			}
		}
		for h, hm := range m.Headers {
			if hm.Type != nil && *hm.Type == gwv1.HeaderMatchRegularExpression {
				if why := badRegex(fmt.Sprintf("%s.headers[%d]", matchPath(j), h), hm.Value); why != "" {
					return why
				}
			}
		}
		for q, qm := range m.QueryParams {
			if qm.Type != nil && *qm.Type == gwv1.QueryParamMatchRegularExpression {
				if why := badRegex(fmt.Sprintf("%s.queryParams[%d]", matchPath(j), q), qm.Value); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// matchPath is the field path of match j of a rule, for messages.
func matchPath(j int) string { return "matches[" + itoa(j) + "]" }

// grpcRuleUnsupported is httpRuleUnsupported for GRPCRoute rules: method
// and header regular expressions must compile.
func grpcRuleUnsupported(rule *gwv1.GRPCRouteRule) string {
	for j, m := range rule.Matches {
		if mm := m.Method; mm != nil && mm.Type != nil && *mm.Type == gwv1.GRPCMethodMatchRegularExpression {
			if mm.Service != nil {
				if why := badRegex(matchPath(j)+".method.service", *mm.Service); why != "" {
					return why
				}
			}
			if mm.Method != nil {
				if why := badRegex(matchPath(j)+".method.method", *mm.Method); why != "" {
					return why
				}
			}
		}
		for h, hm := range m.Headers {
			if hm.Type != nil && *hm.Type == gwv1.GRPCHeaderMatchRegularExpression {
				if why := badRegex(fmt.Sprintf("%s.headers[%d]", matchPath(j), h), hm.Value); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// badRegex reports a regular expression the data plane (Go RE2 syntax)
// cannot compile.
func badRegex(at, expr string) string {
	if _, err := regexp.Compile(expr); err != nil {
		return fmt.Sprintf("%s: regular expression %q is not valid RE2 syntax, which gwdev uses: %v", at, expr, err)
	}
	return ""
}

func grpcFilters(in []gwv1.GRPCRouteFilter) []gwv1.HTTPRouteFilter {
	var out []gwv1.HTTPRouteFilter
	for _, f := range in {
		out = append(out, gwv1.HTTPRouteFilter{
			Type:                   gwv1.HTTPRouteFilterType(f.Type),
			RequestHeaderModifier:  f.RequestHeaderModifier,
			ResponseHeaderModifier: f.ResponseHeaderModifier,
			RequestMirror:          f.RequestMirror,
			ExtensionRef:           f.ExtensionRef,
		})
	}
	return out
}

// applyRuleFilters resolves a rule's mirror and ExternalAuth backends and
// makes the rule answer 500 for a filter whose reference gwdev cannot
// resolve (the spec: "requests that would have been processed by that
// filter MUST receive a HTTP error response").
func (t *translator) applyRuleFilters(r *routeState, rr *RouteRule, where string, filters []gwv1.HTTPRouteFilter) {
	rf := t.resolveFilters(r, where, filters)
	rr.Mirrors, rr.ExternalAuth = rf.mirrors, rf.auths
	if rf.unresolved != "" {
		rr.DirectStatus, rr.DirectReason = 500, rf.unresolved
	}
}

// applyBackendFilters is applyRuleFilters for a backendRef's own filters:
// an unresolvable reference makes that backend invalid, so the requests
// that pick it get a 500.
func (t *translator) applyBackendFilters(r *routeState, b *Backend, filters []gwv1.HTTPRouteFilter) {
	rf := t.resolveFilters(r, b.Name, filters)
	b.Mirrors, b.ExternalAuth = rf.mirrors, rf.auths
	if rf.unresolved != "" && b.Invalid == "" {
		b.Invalid, b.Target = rf.unresolved, nil
	}
}

// resolvedFilters is what resolveFilters found in a filter list.
type resolvedFilters struct {
	mirrors []*Backend
	auths   []*ExternalAuth
	// unresolved is the first filter whose reference cannot be resolved.
	unresolved string
}

// resolveFilters resolves RequestMirror and ExternalAuth backends and
// reports the first filter whose reference gwdev cannot resolve (an
// extensionRef, an invalid auth backend); every problem also goes to the
// route's ResolvedRefs failures.
func (t *translator) resolveFilters(r *routeState, where string, filters []gwv1.HTTPRouteFilter) resolvedFilters {
	var rf resolvedFilters
	for i, f := range filters {
		switch f.Type {
		case gwv1.HTTPRouteFilterRequestMirror:
			if f.RequestMirror == nil {
				continue
			}
			b, fail := t.resolveBackendRef(r, fmt.Sprintf("%s/filter/%d/mirror", where, i), f.RequestMirror.BackendRef, nil)
			if fail != nil {
				r.refFailures = append(r.refFailures, *fail)
			}
			rf.mirrors = append(rf.mirrors, b)
		case gwv1.HTTPRouteFilterExternalAuth:
			if f.ExternalAuth == nil {
				continue
			}
			a, unresolved := t.resolveExternalAuth(r, where, i, f.ExternalAuth)
			rf.auths = append(rf.auths, a)
			if rf.unresolved == "" {
				rf.unresolved = unresolved
			}
		case gwv1.HTTPRouteFilterExtensionRef:
			name := ""
			if f.ExtensionRef != nil {
				name = string(f.ExtensionRef.Group) + "/" + string(f.ExtensionRef.Kind) + " " + string(f.ExtensionRef.Name)
			}
			msg := fmt.Sprintf("%s: filters[%d]: extensionRef %s is not supported by gwdev; matching requests get 500", where, i, name)
			r.refFailures = append(r.refFailures, routeFailure{reason: gwv1.RouteReasonInvalidKind, msg: msg})
			if rf.unresolved == "" {
				rf.unresolved = msg
			}
		}
	}
	return rf
}

// finishRuleResponse decides the spec's 500 for a rule that cannot forward:
// no backendRefs and no redirect, every backendRef invalid, or every
// backendRef with weight 0 ("no traffic should be forwarded for this entry").
// It runs again once BackendTLSPolicies may have invalidated backends.
func finishRuleResponse(rr *RouteRule) {
	if rr.DirectStatus != 0 {
		return
	}
	for _, f := range rr.Filters {
		if f.Type == table.FilterRequestRedirect {
			return
		}
	}
	if len(rr.Backends) == 0 {
		rr.DirectStatus, rr.DirectReason = 500, "the rule has no backendRefs"
		return
	}
	valid := 0
	for _, b := range rr.Backends {
		if b.Invalid == "" {
			valid++
		}
	}
	switch {
	case valid == 0:
		rr.DirectStatus, rr.DirectReason = 500, "no backendRef of the rule is valid: "+firstInvalid(rr.Backends)
	case allWeightsZero(rr.Backends):
		rr.DirectStatus, rr.DirectReason = 500, "every backendRef of the rule has weight 0"
	}
}

func firstInvalid(bs []*Backend) string {
	for _, b := range bs {
		if b.Invalid != "" {
			return b.Invalid
		}
	}
	return ""
}

func allWeightsZero(bs []*Backend) bool {
	for _, b := range bs {
		if b.Weight != 0 {
			return false
		}
	}
	return true
}

// rulePath is the field path of rule i, for sources.
func rulePath(i int) string { return "spec.rules[" + itoa(i) + "]" }
