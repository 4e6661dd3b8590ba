package table

import "strings"

// HostnameMatches reports whether a concrete host (no wildcard) matches a
// listener, route or virtual host hostname pattern: "" (and "*") match
// anything; "*.example.com" matches a host with at least one more label
// ending in ".example.com"; anything else matches itself, ignoring case.
func HostnameMatches(pattern, host string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	if strings.HasPrefix(pattern, "*.") {
		suffix := pattern[1:] // ".example.com"
		return len(host) > len(suffix) && hasSuffixFold(host, suffix)
	}
	return strings.EqualFold(pattern, host)
}

// hasSuffixFold is strings.HasSuffix ignoring ASCII case.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// HostIndex finds the most specific hostname pattern that matches a host:
// an exact name, then the longest matching "*." wildcard, then the catch-all
// ("" or "*"). Every pattern it returns is one HostnameMatches accepts for
// the host. The data plane uses it for listeners within a port and for
// virtual hosts within a listener; both follow the same precedence, so a
// request never falls back from a more specific entry to a less specific one
// (Listener Isolation). The zero value matches nothing.
type HostIndex struct {
	exact map[string]int
	// wild is keyed by the wildcard's suffix including its dot
	// ("*.example.com" is stored as ".example.com").
	wild   map[string]int
	any    int // the catch-all's position (see hasAny)
	hasAny bool
}

// NewHostIndex indexes hostnames by position; the first of duplicates wins.
func NewHostIndex(hostnames []string) HostIndex {
	x := HostIndex{exact: map[string]int{}, wild: map[string]int{}}
	for i, h := range hostnames {
		h = strings.ToLower(h)
		switch {
		case h == "" || h == "*":
			if !x.hasAny {
				x.any, x.hasAny = i, true
			}
		case strings.HasPrefix(h, "*."):
			if _, ok := x.wild[h[1:]]; !ok {
				x.wild[h[1:]] = i
			}
		default:
			if _, ok := x.exact[h]; !ok {
				x.exact[h] = i
			}
		}
	}
	return x
}

// Lookup returns the position of the best match for host (lower case, no
// port), or -1.
func (x *HostIndex) Lookup(host string) int {
	if i, ok := x.exact[host]; ok {
		return i
	}
	if len(x.wild) > 0 {
		// The leftmost dot gives the longest suffix: the most specific
		// wildcard. A wildcard needs at least one label before its suffix.
		for i := 1; i < len(host); i++ {
			if host[i] == '.' {
				if j, ok := x.wild[host[i:]]; ok {
					return j
				}
			}
		}
	}
	if x.hasAny {
		return x.any
	}
	return -1
}
