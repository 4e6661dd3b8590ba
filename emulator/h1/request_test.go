package h1

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestPlainPathURLMatchesParseRequestURI holds plainPathURL to
// url.ParseRequestURI: every target it takes gets the same URL, and those
// it leaves (escapes, queries, sub-delimiters, bytes outside ASCII) are the
// ones ParseRequestURI may read otherwise.
func TestPlainPathURLMatchesParseRequestURI(t *testing.T) {
	for _, target := range []string{"/", "/api", "/api/users", "//x", "///", "/a/../b", "/./", "/~user/x_y-z.html",
		"/a?b", "/a?", "/?", "/a#b", "/a%2fb", "/a%zz", "/a b", "/a+b", "/a;b=c", "/a:b", "/a@b", "/é", "/a\x7f", "*", "a", ""} {
		checkPlainPathURL(t, target)
	}
}

// FuzzPlainPathURL is TestPlainPathURLMatchesParseRequestURI over any
// target.
func FuzzPlainPathURL(f *testing.F) {
	for _, s := range []string{"/api/users", "/a?b", "//x", "/a%2fb", "/~._-"} {
		f.Add(s)
	}
	f.Fuzz(checkPlainPathURL)
}

func checkPlainPathURL(t *testing.T, target string) {
	got := plainPathURL(target, new(url.URL))
	if got == nil {
		return
	}
	want, err := url.ParseRequestURI(target)
	if err != nil {
		t.Fatalf("plainPathURL(%q) took a target ParseRequestURI refuses: %v", target, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plainPathURL(%q) = %#v, ParseRequestURI %#v", target, got, want)
	}
	if got.RequestURI() != target || got.EscapedPath() != target {
		t.Fatalf("plainPathURL(%q) sends %q", target, got.RequestURI())
	}
}

// FuzzTrimOWS holds trimOWS to strings.Trim(s, " \t").
func FuzzTrimOWS(f *testing.F) {
	for _, s := range []string{"", " ", "\t", " a ", "\t a\tb \t", "a", " \ta", "a\t "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := trimOWS(s), strings.Trim(s, " \t"); got != want {
			t.Fatalf("trimOWS(%q) = %q, want %q", s, got, want)
		}
	})
}
