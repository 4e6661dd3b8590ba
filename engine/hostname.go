package engine

import (
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// hostnameMatches reports whether a concrete host (no wildcard) matches a
// listener or route hostname pattern (table.HostnameMatches, the one
// matcher the data plane and the CLI use too).
func hostnameMatches(pattern, host string) bool { return table.HostnameMatches(pattern, host) }

// intersectHostname returns the intersection of a listener hostname and a
// route hostname, and whether they intersect. The result is the more specific
// of the two: a listener "*.example.com" and a route "foo.example.com" give
// "foo.example.com"; a listener "" and a route "*.example.com" give the route's.
func intersectHostname(listener, route string) (string, bool) {
	switch {
	case listener == "":
		return route, true
	case route == "":
		return listener, true
	case listener == route:
		return route, true
	}
	lw, rw := strings.HasPrefix(listener, "*."), strings.HasPrefix(route, "*.")
	switch {
	case !lw && !rw:
		return "", false
	case lw && !rw:
		return route, hostnameMatches(listener, route)
	case !lw && rw:
		return listener, hostnameMatches(route, listener)
	}
	// Both wildcards: the longer one, if it lies inside the shorter.
	if len(listener) >= len(route) {
		return listener, strings.HasSuffix(listener, route[1:])
	}
	return route, strings.HasSuffix(route, listener[1:])
}

// effectiveHostnames intersects a route's hostnames with a listener's. A route
// without hostnames takes the listener's hostname ("" : any). The result is
// deduplicated, in route order; ok is false when nothing intersects.
func effectiveHostnames(listener string, routeHosts []string) ([]string, bool) {
	if len(routeHosts) == 0 {
		return []string{listener}, true
	}
	var out []string
	seen := map[string]bool{}
	for _, rh := range routeHosts {
		h, ok := intersectHostname(listener, rh)
		if !ok || seen[h] {
			continue
		}
		seen[h] = true
		out = append(out, h)
	}
	return out, len(out) > 0
}

// hostnameLess orders hostnames by precedence: exact before wildcard, more
// labels before fewer, "" (any) last; ties broken alphabetically.
func hostnameLess(a, b string) bool {
	ra, rb := hostnameRank(a), hostnameRank(b)
	if ra != rb {
		return ra > rb
	}
	return a < b
}

// hostnameRank gives a number that is higher for more specific hostnames.
// Exact hostnames rank above every wildcard; among wildcards the number of
// dots to the right of the "*" decides, as the spec requires; "" ranks last.
func hostnameRank(h string) int {
	switch {
	case h == "":
		return 0
	case strings.HasPrefix(h, "*"):
		return 1 + strings.Count(h, ".")
	default:
		return 1 << 20
	}
}
