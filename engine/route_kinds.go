package engine

import (
	"fmt"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// collectRoutes wraps every route of every kind in a routeState, in a fixed
// order: by kind, then namespace/name.
func (t *translator) collectRoutes() {
	add := func(kind string, o object, gen int64, refs []gwv1.ParentReference, hosts []gwv1.Hostname, withHosts bool) *routeState {
		r := &routeState{kind: kind, key: ObjectKey{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()},
			obj: o, gen: gen, parentRefs: refs}
		if withHosts {
			r.hostnames = []string{}
			for _, h := range hosts {
				r.hostnames = append(r.hostnames, strings.ToLower(string(h)))
			}
			if len(r.hostnames) == 0 {
				r.hostnames = nil
			}
		}
		t.routes = append(t.routes, r)
		return r
	}
	for _, o := range t.out.HTTPRoutes {
		add("HTTPRoute", o, o.Generation, o.Spec.ParentRefs, o.Spec.Hostnames, true)
	}
	for _, o := range t.out.GRPCRoutes {
		add("GRPCRoute", o, o.Generation, o.Spec.ParentRefs, o.Spec.Hostnames, true)
	}
	for _, o := range t.out.TLSRoutes {
		add("TLSRoute", o, o.Generation, o.Spec.ParentRefs, o.Spec.Hostnames, true)
	}
	for _, o := range t.out.TCPRoutes {
		add("TCPRoute", o, o.Generation, o.Spec.ParentRefs, nil, false)
	}
	for _, o := range t.out.UDPRoutes {
		add("UDPRoute", o, o.Generation, o.Spec.ParentRefs, nil, false)
	}
}

// ruleName builds "<kind>/<ns>/<name>/rule/<i>".
func ruleName(r *routeState, i int) string {
	return strings.ToLower(r.kind) + "/" + r.key.Namespace + "/" + r.key.Name + "/rule/" + itoa(i)
}

// compileRoute turns a route's rules into table entries with resolved
// backends and records ResolvedRefs and Accepted failures.
func (t *translator) compileRoute(r *routeState) {
	switch o := r.obj.(type) {
	case *gwv1.HTTPRoute:
		t.compileHTTPRoute(r, o)
	case *gwv1.GRPCRoute:
		t.compileGRPCRoute(r, o)
	case *gwv1.TLSRoute:
		for i, rule := range o.Spec.Rules {
			name := ruleName(r, i)
			r.sni = append(r.sni, &SNIRoute{Name: name, Route: r.key, Source: t.source(r.key),
				Backends: t.resolveBackendRefs(r, name, rule.BackendRefs)})
		}
	case *gwv1.TCPRoute:
		for i, rule := range o.Spec.Rules {
			name := ruleName(r, i)
			r.stream = append(r.stream, &StreamRoute{Name: name, Route: r.key, Source: t.source(r.key),
				Backends: t.resolveBackendRefs(r, name, rule.BackendRefs)})
		}
	case *gwv1.UDPRoute:
		for i, rule := range o.Spec.Rules {
			name := ruleName(r, i)
			r.stream = append(r.stream, &StreamRoute{Name: name, Route: r.key, Source: t.source(r.key),
				Backends: t.resolveBackendRefs(r, name, rule.BackendRefs)})
		}
	}
}

// resolveBackendRefs resolves plain backendRefs (TLS, TCP, UDP routes).
func (t *translator) resolveBackendRefs(r *routeState, rule string, refs []gwv1.BackendRef) []*Backend {
	var out []*Backend
	for k, ref := range refs {
		b, f := t.resolveBackendRef(r, rule+"/backend/"+itoa(k), ref.BackendObjectReference, ref.Weight)
		if f != nil {
			r.refFailures = append(r.refFailures, *f)
		}
		out = append(out, b)
	}
	return out
}

// compileHTTPRoute builds one RouteRule per match of every rule.
func (t *translator) compileHTTPRoute(r *routeState, o *gwv1.HTTPRoute) {
	for i := range o.Spec.Rules {
		rule := &o.Spec.Rules[i]
		name := ruleName(r, i)
		proto := &RouteRule{Route: r.key, Source: t.source(r.key), Timeouts: rule.Timeouts, Retry: rule.Retry,
			SessionPersistence: rule.SessionPersistence, Filters: rule.Filters}
		if rule.Name != nil {
			proto.RuleName = string(*rule.Name)
		}
		t.checkFilters(r, proto, name, rule.Filters)
		for k, br := range rule.BackendRefs {
			b, f := t.resolveBackendRef(r, name+"/backend/"+itoa(k), br.BackendObjectReference, br.Weight)
			if f != nil {
				r.refFailures = append(r.refFailures, *f)
			}
			b.Filters = br.Filters
			t.checkFilters(r, nil, b.Name, br.Filters)
			proto.Backends = append(proto.Backends, b)
		}
		t.finishRuleResponse(proto, rule.Filters)
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwv1.HTTPRouteMatch{{}}
		}
		for j := range matches {
			m := matches[j].DeepCopy()
			if m.Path == nil {
				pt, v := gwv1.PathMatchPathPrefix, "/"
				m.Path = &gwv1.HTTPPathMatch{Type: &pt, Value: &v}
			}
			rr := *proto
			rr.Name = name + "/match/" + itoa(j)
			rr.HTTP = m
			r.rules = append(r.rules, &rr)
		}
	}
}

// compileGRPCRoute builds one RouteRule per match; filters are converted to
// their HTTPRoute equivalents (the shapes are the same).
func (t *translator) compileGRPCRoute(r *routeState, o *gwv1.GRPCRoute) {
	for i := range o.Spec.Rules {
		rule := &o.Spec.Rules[i]
		name := ruleName(r, i)
		proto := &RouteRule{Route: r.key, Source: t.source(r.key), SessionPersistence: rule.SessionPersistence,
			Filters: grpcFilters(rule.Filters)}
		if rule.Name != nil {
			proto.RuleName = string(*rule.Name)
		}
		t.checkFilters(r, proto, name, proto.Filters)
		for k, br := range rule.BackendRefs {
			b, f := t.resolveBackendRef(r, name+"/backend/"+itoa(k), br.BackendObjectReference, br.Weight)
			if f != nil {
				r.refFailures = append(r.refFailures, *f)
			}
			b.Filters = grpcFilters(br.Filters)
			t.checkFilters(r, nil, b.Name, b.Filters)
			proto.Backends = append(proto.Backends, b)
		}
		t.finishRuleResponse(proto, proto.Filters)
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwv1.GRPCRouteMatch{{}}
		}
		for j := range matches {
			rr := *proto
			rr.Name = name + "/match/" + itoa(j)
			rr.GRPC = matches[j].DeepCopy()
			r.rules = append(r.rules, &rr)
		}
	}
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

// checkFilters resolves mirror backends and refuses what gwdev cannot do:
// extensionRef filters (requests get a 500, as the spec requires for
// unresolved extensions) and ExternalAuth (not emulated).
func (t *translator) checkFilters(r *routeState, rr *RouteRule, where string, filters []gwv1.HTTPRouteFilter) {
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
			if rr != nil {
				rr.Mirrors = append(rr.Mirrors, b)
			}
		case gwv1.HTTPRouteFilterExtensionRef:
			name := ""
			if f.ExtensionRef != nil {
				name = string(f.ExtensionRef.Group) + "/" + string(f.ExtensionRef.Kind) + " " + string(f.ExtensionRef.Name)
			}
			msg := fmt.Sprintf("%s: filters[%d]: extensionRef %s is not supported by gwdev; matching requests get 500", where, i, name)
			r.refFailures = append(r.refFailures, routeFailure{gwv1.RouteReasonInvalidKind, msg})
			if rr != nil {
				rr.DirectStatus, rr.DirectReason = 500, msg
			}
		case gwv1.HTTPRouteFilterExternalAuth:
			r.acceptFailures = append(r.acceptFailures, routeFailure{gwv1.RouteReasonUnsupportedValue,
				fmt.Sprintf("%s: filters[%d]: ExternalAuth is not emulated by gwdev", where, i)})
		}
	}
}

// finishRuleResponse decides the spec's 500 for a rule that cannot forward:
// no backendRefs and no redirect, or every backendRef invalid.
func (t *translator) finishRuleResponse(rr *RouteRule, filters []gwv1.HTTPRouteFilter) {
	if rr.DirectStatus != 0 {
		return
	}
	for _, f := range filters {
		if f.Type == gwv1.HTTPRouteFilterRequestRedirect {
			return
		}
	}
	if len(rr.Backends) == 0 {
		rr.DirectStatus, rr.DirectReason = 500, "the rule has no backendRefs"
		return
	}
	for _, b := range rr.Backends {
		if b.Invalid == "" {
			return
		}
	}
	rr.DirectStatus, rr.DirectReason = 500, "no backendRef of the rule is valid: "+rr.Backends[0].Invalid
}
