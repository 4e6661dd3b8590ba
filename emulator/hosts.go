package emulator

import "strings"

// hostIndex finds the most specific hostname pattern that matches a host:
// an exact name, then the longest matching "*." wildcard, then the catch-all
// "". It is used for listeners within a port and for virtual hosts within a
// listener; both follow the same precedence, so a request never falls back
// from a more specific entry to a less specific one (Listener Isolation).
type hostIndex struct {
	exact map[string]int
	// wild is keyed by the wildcard's suffix including its dot
	// ("*.example.com" is stored as ".example.com").
	wild map[string]int
	any  int // -1: no catch-all
}

// newHostIndex indexes hostnames by position; the first of duplicates wins.
func newHostIndex(hostnames []string) hostIndex {
	x := hostIndex{exact: map[string]int{}, wild: map[string]int{}, any: -1}
	for i, h := range hostnames {
		h = strings.ToLower(h)
		switch {
		case h == "" || h == "*":
			if x.any < 0 {
				x.any = i
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

// lookup returns the index of the best match for host (lower case, no
// port), or -1.
func (x *hostIndex) lookup(host string) int {
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
	return x.any
}

// requestHost returns the request's host without port, lower case and
// without a trailing dot.
func requestHost(hostport string) string {
	h := hostport
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			h = h[1:i]
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.IndexByte(h, ':') == i {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	for i := 0; i < len(h); i++ {
		if c := h[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}
