package dash

import "testing"

func TestOrAndQuoted(t *testing.T) {
	for _, c := range []struct{ in, or, quoted string }{
		{"", "-", "-"},
		{"-", "-", `"-"`},
		{"a b", "a b", `"a b"`},
		{"x\"y", "x\"y", `"x\"y"`},
	} {
		if got := Or(c.in); got != c.or {
			t.Errorf("Or(%q) = %q, want %q", c.in, got, c.or)
		}
		if got := Quoted(c.in); got != c.quoted {
			t.Errorf("Quoted(%q) = %q, want %q", c.in, got, c.quoted)
		}
	}
}
