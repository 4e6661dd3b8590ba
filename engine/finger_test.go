package engine

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// fingerSearch finds what sort.Search finds, from any finger: before, at
// or after the answer, out of range, on lists of every small length with
// repeated values.
func TestFingerSearchIsSortSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		for range 50 {
			vals := make([]int, n)
			v := 0
			for i := range vals {
				v += rng.IntN(3) // repeats and gaps
				vals[i] = v
			}
			for target := -1; target <= v+2; target++ {
				after := func(i int) bool { return vals[i] >= target }
				want := sort.Search(n, after)
				for finger := -2; finger <= n+1; finger++ {
					if got := fingerSearch(n, finger, after); got != want {
						t.Fatalf("%v: first >= %d from finger %d: %d, want %d", vals, target, finger, got, want)
					}
				}
			}
		}
	}
}

// A search from a near finger looks at a few elements, not the ~15 of a
// binary search over 20,000; a far one at most about twice those.
func TestFingerSearchNearTheFingerIsShort(t *testing.T) {
	vals := make([]int, 20000)
	for i := range vals {
		vals[i] = 2 * i
	}
	for _, c := range []struct{ finger, target, most int }{
		{100, 200, 2}, {100, 202, 3}, {100, 206, 5}, {100, 198, 3}, {100, 201, 3}, {0, 39998, 30},
	} {
		looked := 0
		got := fingerSearch(len(vals), c.finger, func(i int) bool { looked++; return vals[i] >= c.target })
		if want := (c.target + 1) / 2; got != want {
			t.Errorf("finger %d, target %d: %d, want %d", c.finger, c.target, got, want)
		}
		if looked > c.most {
			t.Errorf("finger %d, target %d: %d comparisons, want at most %d", c.finger, c.target, looked, c.most)
		}
	}
}
