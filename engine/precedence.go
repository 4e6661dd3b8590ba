package engine

import (
	"cmp"
	"slices"

	"github.com/gwdev/gwdev/engine/table"
)

// rulePosition carries what orders rules from different routes: the route
// (creation time, then namespace/name) and the rule's position in it.
type rulePosition struct {
	rule  *RouteRule
	route *routeState
	order int // index in the route's compiled rules
}

// sortRules orders a virtual host's rules by the spec's precedence. For
// HTTPRoute: Exact path, then RegularExpression (longest first, a documented
// gwdev choice), then PathPrefix (longest first); then a method match; then
// the most header matches; then the most query param matches. For GRPCRoute:
// the longest matched service, then method, then the most header matches.
// Ties go to the oldest route, then namespace/name, then rule and match order.
func sortRules(rs []rulePosition) {
	slices.SortStableFunc(rs, func(a, b rulePosition) int {
		if c := compareMatch(a.rule, b.rule); c != 0 {
			return c
		}
		if a.route != b.route {
			return compareOlder(a.route.obj, b.route.obj)
		}
		return cmp.Compare(a.order, b.order)
	})
}

// compareMatch returns -1 when a takes precedence over b, 1 for the reverse,
// 0 when the match alone does not decide.
func compareMatch(a, b *RouteRule) int {
	if a.HTTP != nil && b.HTTP != nil {
		return compareHTTPMatch(a.HTTP, b.HTTP)
	}
	if a.GRPC != nil && b.GRPC != nil {
		return compareGRPCMatch(a.GRPC, b.GRPC)
	}
	// HTTPRoute and GRPCRoute rules never share a hostname once cross-serving
	// conflicts are settled (resolveCrossServing); should they meet anyway,
	// gRPC rules go first, since they only match gRPC requests.
	if a.GRPC != nil {
		return -1
	}
	return 1
}

func pathRank(m *table.HTTPRouteMatch) (int, int) {
	if m.Path == nil || m.Path.Type == nil || m.Path.Value == nil {
		return 1, 1
	}
	n := len(*m.Path.Value)
	switch *m.Path.Type {
	case table.PathMatchExact:
		return 3, n
	case table.PathMatchRegularExpression:
		return 2, n
	}
	return 1, n
}

func compareHTTPMatch(a, b *table.HTTPRouteMatch) int {
	ta, la := pathRank(a)
	tb, lb := pathRank(b)
	if c := cmpDesc(ta, tb); c != 0 {
		return c
	}
	if c := cmpDesc(la, lb); c != 0 {
		return c
	}
	if c := cmpDesc(boolInt(a.Method != nil), boolInt(b.Method != nil)); c != 0 {
		return c
	}
	if c := cmpDesc(len(a.Headers), len(b.Headers)); c != 0 {
		return c
	}
	return cmpDesc(len(a.QueryParams), len(b.QueryParams))
}

func compareGRPCMatch(a, b *table.GRPCRouteMatch) int {
	sa, ma := grpcMethodLens(a)
	sb, mb := grpcMethodLens(b)
	if c := cmpDesc(sa, sb); c != 0 {
		return c
	}
	if c := cmpDesc(ma, mb); c != 0 {
		return c
	}
	return cmpDesc(len(a.Headers), len(b.Headers))
}

func grpcMethodLens(m *table.GRPCRouteMatch) (int, int) {
	if m.Method == nil {
		return 0, 0
	}
	s, meth := 0, 0
	if m.Method.Service != nil {
		s = len(*m.Method.Service)
	}
	if m.Method.Method != nil {
		meth = len(*m.Method.Method)
	}
	return s, meth
}

// cmpDesc compares so that larger values come first.
func cmpDesc(a, b int) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
