package engine

import "sort"

// fingerSearch returns the first index in [0, n) at which after is true (n
// if none), for an after that is false and then true over the indexes, as
// sort.Search(n, after) does. It starts at finger, where a previous search
// ended (anything out of range: nowhere), and gallops away from it before
// the binary search: a translation looks up the Services of its routes'
// backendRefs, and the sources of its routes, in the order of the routes'
// namespaces and names, so the next answer is mostly a step or two from
// the last. A plain binary search read ~15 Services of 20,000, far apart
// in memory, for every backendRef (issue 42, session 21).
func fingerSearch(n, finger int, after func(i int) bool) int {
	lo, hi := 0, n // the answer is in [lo, hi]
	if finger >= 0 && finger < n {
		if after(finger) {
			hi = finger
			for step := 1; finger-step >= 0; step *= 2 {
				i := finger - step
				if !after(i) {
					lo = i + 1
					break
				}
				hi = i
			}
		} else {
			lo = finger + 1
			for step := 1; finger+step < n; step *= 2 {
				i := finger + step
				if after(i) {
					hi = i
					break
				}
				lo = i + 1
			}
		}
	}
	return lo + sort.Search(hi-lo, func(j int) bool { return after(lo + j) })
}
