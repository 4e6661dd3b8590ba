package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// TestCompileHTTPMatch: the engine decides the spec's defaults and
// normalisations, so the table holds plain values.
func TestCompileHTTPMatch(t *testing.T) {
	prefix, exact, re := gwv1.PathMatchPathPrefix, gwv1.PathMatchExact, gwv1.HeaderMatchRegularExpression
	get := gwv1.HTTPMethodGet
	for _, c := range []struct {
		name string
		in   gwv1.HTTPRouteMatch
		want table.HTTPMatch
	}{
		{"no path is PathPrefix /", gwv1.HTTPRouteMatch{},
			table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix, Value: ""}}},
		{"prefix loses trailing slashes", gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: new("/foo//")}},
			table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix, Value: "/foo"}}},
		{"a path without a type is PathPrefix", gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Value: new("/a/")}},
			table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix, Value: "/a"}}},
		{"exact keeps its slash", gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: &exact, Value: new("/a/")}, Method: &get},
			table.HTTPMatch{Path: table.PathMatch{Type: table.MatchExact, Value: "/a/"}, Method: "GET"}},
		{"headers: canonical names, Exact by default, first of equivalent names",
			gwv1.HTTPRouteMatch{Headers: []gwv1.HTTPHeaderMatch{
				{Name: "x-env", Value: "dev"}, {Name: "X-ENV", Value: "prod"}, {Name: "x-v", Type: &re, Value: "[0-9]+"}},
				QueryParams: []gwv1.HTTPQueryParamMatch{{Name: "q", Value: "1"}, {Name: "Q", Value: "2"}, {Name: "q", Value: "3"}}},
			table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix},
				Headers: []table.ValueMatch{{Name: "X-Env", Type: table.MatchExact, Value: "dev"},
					{Name: "X-V", Type: table.MatchRegularExpression, Value: "[0-9]+"}},
				QueryParams: []table.ValueMatch{{Name: "q", Type: table.MatchExact, Value: "1"}, {Name: "Q", Type: table.MatchExact, Value: "2"}}}},
	} {
		if d := cmp.Diff(&c.want, compileHTTPMatch(&c.in)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}

// TestCompileGRPCMatch: a method match is Exact unless it says otherwise;
// empty parts match any.
func TestCompileGRPCMatch(t *testing.T) {
	re := gwv1.GRPCMethodMatchRegularExpression
	for _, c := range []struct {
		in   gwv1.GRPCRouteMatch
		want table.GRPCMatch
	}{
		{gwv1.GRPCRouteMatch{}, table.GRPCMatch{}},
		{gwv1.GRPCRouteMatch{Method: &gwv1.GRPCMethodMatch{Service: new("a.S"), Method: new("")}},
			table.GRPCMatch{Type: table.MatchExact, Service: "a.S"}},
		{gwv1.GRPCRouteMatch{Method: &gwv1.GRPCMethodMatch{Type: &re, Method: new("Get.*")},
			Headers: []gwv1.GRPCHeaderMatch{{Name: "x-a", Value: "1"}, {Name: "X-A", Value: "2"}}},
			table.GRPCMatch{Type: table.MatchRegularExpression, Method: "Get.*",
				Headers: []table.ValueMatch{{Name: "X-A", Type: table.MatchExact, Value: "1"}}}},
	} {
		if d := cmp.Diff(&c.want, compileGRPCMatch(&c.in)); d != "" {
			t.Errorf("%+v (-want +got):\n%s", c.in, d)
		}
	}
}
