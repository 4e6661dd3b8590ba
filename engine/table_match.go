package engine

import (
	"net/textproto"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// compileHTTPMatch compiles an HTTPRouteMatch into the table's form,
// deciding the spec's defaults: no path is PathPrefix "/", a path without a
// type is PathPrefix, a header or query param match without a type is
// Exact. PathPrefix values lose their trailing slashes ("/foo/" and "/foo"
// match the same paths), header names become canonical, and of several
// header or query param entries with equivalent names only the first is
// kept ("only the first entry with an equivalent name MUST be considered").
func compileHTTPMatch(m *gwv1.HTTPRouteMatch) *table.HTTPMatch {
	out := &table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix}}
	if p := m.Path; p != nil {
		if p.Type != nil {
			out.Path.Type = table.MatchType(*p.Type)
		}
		if p.Value != nil {
			out.Path.Value = *p.Value
		} else {
			out.Path.Value = "/"
		}
	}
	if out.Path.Type == table.MatchPathPrefix {
		out.Path.Value = strings.TrimRight(out.Path.Value, "/")
	}
	if m.Method != nil {
		out.Method = string(*m.Method)
	}
	out.Headers = valueMatches(m.Headers, func(h gwv1.HTTPHeaderMatch) (string, *gwv1.HeaderMatchType, string) {
		return textproto.CanonicalMIMEHeaderKey(string(h.Name)), h.Type, h.Value
	})
	out.QueryParams = valueMatches(m.QueryParams, func(q gwv1.HTTPQueryParamMatch) (string, *gwv1.QueryParamMatchType, string) {
		return string(q.Name), q.Type, q.Value
	})
	return out
}

// compileGRPCMatch compiles a GRPCRouteMatch: a method match without a
// type is Exact, an empty service or method matches any, header names are
// canonical and unique as for HTTPRoute.
func compileGRPCMatch(m *gwv1.GRPCRouteMatch) *table.GRPCMatch {
	out := &table.GRPCMatch{}
	if mm := m.Method; mm != nil {
		if mm.Service != nil {
			out.Service = *mm.Service
		}
		if mm.Method != nil {
			out.Method = *mm.Method
		}
		if out.Service != "" || out.Method != "" {
			out.Type = table.MatchExact
			if mm.Type != nil {
				out.Type = table.MatchType(*mm.Type)
			}
		}
	}
	out.Headers = valueMatches(m.Headers, func(h gwv1.GRPCHeaderMatch) (string, *gwv1.GRPCHeaderMatchType, string) {
		return textproto.CanonicalMIMEHeaderKey(string(h.Name)), h.Type, h.Value
	})
	return out
}

// valueMatches compiles header or query param matches; part gives an
// entry's normalised name, its type (nil: Exact) and its value. Only the
// first entry of a name is kept.
func valueMatches[T any, M ~string](in []T, part func(T) (string, *M, string)) []table.ValueMatch {
	var out []table.ValueMatch
	for _, e := range in {
		name, typ, value := part(e)
		dup := false
		for _, o := range out {
			dup = dup || o.Name == name
		}
		if dup {
			continue
		}
		t := table.MatchExact
		if typ != nil && *typ != "" {
			t = table.MatchType(*typ)
		}
		out = append(out, table.ValueMatch{Name: name, Type: t, Value: value})
	}
	return out
}
