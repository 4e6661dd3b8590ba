package table

import "testing"

func TestHostnameMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, host string
		want          bool
	}{
		{"", "a.example.com", true},
		{"*", "a.example.com", true},
		{"a.example.com", "a.example.com", true},
		{"A.example.com", "a.EXAMPLE.com", true},
		{"a.example.com", "b.example.com", false},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.Example.com", "a.example.COM", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", ".example.com", false},
		{"*.example.com", "a.example.org", false},
	} {
		if got := HostnameMatches(c.pattern, c.host); got != c.want {
			t.Errorf("HostnameMatches(%q, %q) = %v, want %v", c.pattern, c.host, got, c.want)
		}
	}
}

// TestHostIndexAgreesWithHostnameMatches checks that the index returns a
// pattern HostnameMatches accepts, the most specific one (exact, longest
// wildcard, catch-all), and -1 only when no pattern matches.
func TestHostIndexAgreesWithHostnameMatches(t *testing.T) {
	patterns := []string{"*.b.example.com", "a.b.example.com", "*.example.com", "x.example.org", "*.example.com", ""}
	rank := func(p string) int {
		switch {
		case p == "":
			return 0
		case p[0] == '*':
			return len(p)
		}
		return 1 << 20
	}
	hosts := []string{"a.b.example.com", "c.b.example.com", "b.example.com", "example.com", "x.example.org", "y.example.org", "q.c.example.com"}
	for _, withAny := range []bool{true, false} {
		ps := patterns
		if !withAny {
			ps = patterns[:len(patterns)-1]
		}
		x := NewHostIndex(ps)
		for _, h := range hosts {
			got := x.Lookup(h)
			best := -1
			for i, p := range ps {
				if HostnameMatches(p, h) && (best < 0 || rank(p) > rank(ps[best])) {
					best = i
				}
			}
			if got != best {
				t.Errorf("any=%v: Lookup(%q) = %d, want %d", withAny, h, got, best)
			}
		}
	}
	var zero HostIndex
	if zero.Lookup("a.example.com") != -1 {
		t.Error("the zero HostIndex matches")
	}
}
