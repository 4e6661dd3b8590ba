package engine

import (
	"cmp"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// rulePosition carries what orders rules from different routes: the route
// (creation time, then namespace/name) and the rule's position in it.
type rulePosition struct {
	rule  *RouteRule
	route *routeState
	order int // index in the route's compiled rules
	// pathLen is the HTTP match's path length as written (writtenPathLen).
	pathLen int
	// hostRank is the hostnameRank of the route's own hostname that gives
	// the virtual host (routeHostnameFor).
	hostRank int
}

// sortRules orders a virtual host's rules by the spec's precedence. For
// HTTPRoute: Exact path, then RegularExpression (longest first, a documented
// gwdev choice), then PathPrefix (longest first); then a method match; then
// the most header matches; then the most query param matches. For GRPCRoute:
// the longest matched service, then method, then the most header matches.
// Ties go to the oldest route, then namespace/name, then rule and match order.
// Before all of these, the rules of a route whose own hostname is more
// specific go first (GatewayRouteHostnameIntersectionPrecedence, v1.7.0:
// precedence by "original route hostname specificity rather than the
// calculated listener/route hostname intersection"): on a listener
// abc.example.com, a route for abc.example.com takes its requests before
// one for *.example.com, whatever their paths and ages, and what it does not
// match falls through to the other.
func sortRules(rs []rulePosition) {
	slices.SortStableFunc(rs, func(a, b rulePosition) int {
		if a.hostRank != b.hostRank {
			return cmp.Compare(b.hostRank, a.hostRank)
		}
		if c := compareMatch(a.rule, b.rule, a.pathLen, b.pathLen); c != 0 {
			return c
		}
		if a.route != b.route {
			return compareOlder(a.route.obj, b.route.obj)
		}
		return cmp.Compare(a.order, b.order)
	})
}

// compareMatch returns -1 when a takes precedence over b, 1 for the reverse,
// 0 when the match alone does not decide. la and lb are the HTTP matches'
// path lengths as written.
func compareMatch(a, b *RouteRule, la, lb int) int {
	if a.HTTP != nil && b.HTTP != nil {
		return compareHTTPMatch(a.HTTP, b.HTTP, la, lb)
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

// pathRank orders path types: Exact, then RegularExpression, then
// PathPrefix.
func pathRank(m *table.HTTPMatch) int {
	switch m.Path.Type {
	case table.MatchExact:
		return 3
	case table.MatchRegularExpression:
		return 2
	}
	return 1
}

// writtenPathLen is the length of a match's path value as written ("/"
// when there is none), which the "largest number of characters" criterion
// compares: a PathPrefix "/foo/" is longer than "/foo", although the table
// drops the trailing slash of both.
func writtenPathLen(m *gwv1.HTTPRouteMatch) int {
	if m.Path == nil || m.Path.Value == nil {
		return 1
	}
	return len(*m.Path.Value)
}

// compareHTTPMatch orders two HTTP matches whose paths as written are la
// and lb characters long.
func compareHTTPMatch(a, b *table.HTTPMatch, la, lb int) int {
	if c := cmpDesc(pathRank(a), pathRank(b)); c != 0 {
		return c
	}
	if c := cmpDesc(la, lb); c != 0 {
		return c
	}
	if c := cmpDesc(boolInt(a.Method != ""), boolInt(b.Method != "")); c != 0 {
		return c
	}
	if c := cmpDesc(len(a.Headers), len(b.Headers)); c != 0 {
		return c
	}
	return cmpDesc(len(a.QueryParams), len(b.QueryParams))
}

func compareGRPCMatch(a, b *table.GRPCMatch) int {
	if c := cmpDesc(len(a.Service), len(b.Service)); c != 0 {
		return c
	}
	if c := cmpDesc(len(a.Method), len(b.Method)); c != 0 {
		return c
	}
	return cmpDesc(len(a.Headers), len(b.Headers))
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

// routeHostnameFor is the route's own hostname that yields the virtual host
// h on a listener: h itself when the route names it, else the most specific
// of the route's wildcards that covers h ("": the route has no hostnames).
func routeHostnameFor(r *routeState, h string) string { return ownHostname(r.hostnames, h) }

// ownHostname is routeHostnameFor over a route's hostnames.
func ownHostname(hostnames []string, h string) string {
	best := ""
	for _, rh := range hostnames {
		if rh == h {
			return h
		}
		if hostnameMatches(rh, h) && (best == "" || hostnameLess(rh, best)) {
			best = rh
		}
	}
	return best
}

// objectHostnames are an HTTPRoute's or GRPCRoute's spec.hostnames in
// lower case (nil for other objects).
func objectHostnames(o object) []string {
	var hs []gwv1.Hostname
	switch x := o.(type) {
	case *gwv1.HTTPRoute:
		hs = x.Spec.Hostnames
	case *gwv1.GRPCRoute:
		hs = x.Spec.Hostnames
	}
	var out []string
	for _, h := range hs {
		out = append(out, strings.ToLower(string(h)))
	}
	return out
}
