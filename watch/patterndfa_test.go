package watch

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// extraPatterns are patterns the Gateway API CRDs lack, for what the
// automaton's construction must get right or refuse: unanchored searches,
// anchors inside, alternatives, case folding, repetition counts, empty
// matches, newlines and what it hands to the regexp (word boundaries,
// multi-line anchors, non-ASCII classes).
var extraPatterns = []string{
	``, `a`, `^a`, `a$`, `^a$`, `ab|cd`, `^ab|cd$`, `^$`, `^$|^x+$`, `$^`, `x*`, `^x*$`,
	`(?i)^abc$`, `(?i)k`, `^[a-z]{2,4}$`, `^(a|ab)(c|bcd)(d*)$`, `.`, `^.$`, `(?s)^.$`, `^.*$`,
	`a.c`, `[^a-z]`, `^[^/]*$`, `\d+`, `^\w+$`, `\s`, `\bfoo\b`, `(?m)^a$`, `^é+$`, `[^é]`,
	`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`,
	`^(?:[a-z]+)+$`, `a{0}`, `^a{0}$`, `^\x00$`, `[\x7f]`, `\$`, `^\^`, `(a*)*b`,
}

// schemaPatterns returns every pattern of the embedded CRDs and bundles.
func schemaPatterns(t testing.TB) []string {
	t.Helper()
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "pattern" {
					seen[s] = true
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, name := range CRDBundleNames() {
		b, err := EmbeddedCRDBundle(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range b.crds {
			for _, raw := range c.schemas {
				var v any
				if err := json.Unmarshal(raw, &v); err != nil {
					t.Fatal(err)
				}
				walk(v)
			}
		}
	}
	l := newTestLoader(t)
	for name, f := range l.crds.files {
		for version := range f.versions {
			s, err := l.crds.schema(name, version)
			if err != nil {
				t.Fatal(err)
			}
			for v := range s.quick.patterns {
				seen[v.Pattern] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// patternValues returns the strings of the corpus's objects.
func patternValues(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			seen[v] = true
		case map[string]any:
			for k, x := range v {
				seen[k] = true
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	eachCorpusCRDObject(t, func(_ string, u map[string]any, _ *servedVersion) { walk(u) })
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// variants returns s changed in small ways: every prefix and suffix, every
// byte dropped, doubled or replaced by a few others.
func variants(s string) []string {
	out := []string{s}
	for i := 0; i <= len(s); i++ {
		out = append(out, s[:i], s[i:])
		for _, c := range []string{"", "-", ".", "*", "/", "A", "0", " ", "\n", "é", "_"} {
			if i < len(s) {
				out = append(out, s[:i]+c+s[i+1:], s[:i]+s[i:i+1]+s[i:])
			}
			out = append(out, s[:i]+c+s[i:])
		}
	}
	return out
}

// checkPatternDFA compares the pattern's matcher with regexp on s.
func checkPatternDFA(t *testing.T, m *patternMatcher, pattern, s string) (fast bool) {
	t.Helper()
	want := m.re.MatchString(s)
	if got := m.MatchString(s); got != want {
		t.Fatalf("pattern %q on %q: matcher %v, regexp %v", pattern, s, got, want)
	}
	if m.dfa == nil {
		return false
	}
	got, ok := m.dfa.match(s)
	if ok && got != want {
		t.Fatalf("pattern %q on %q: automaton %v, regexp %v", pattern, s, got, want)
	}
	return ok
}

// TestPatternDFAMatchesRegexp matches every pattern of the CRDs (and
// extraPatterns) against every string of the corpus, small changes of
// them and random strings, with the automaton and with regexp.
func TestPatternDFAMatchesRegexp(t *testing.T) {
	crdPatterns := schemaPatterns(t)
	if len(crdPatterns) < 10 {
		t.Fatalf("found %d patterns in the CRDs", len(crdPatterns))
	}
	values := patternValues(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abcxyzABZ0129-._*/:@%~!$&'()+,;=?#[] \t\n\x00\x7féß"
	for i := 0; i < 2000; i++ {
		var sb strings.Builder
		for n := rng.IntN(20); n > 0; n-- {
			r := []rune(alphabet)
			sb.WriteRune(r[rng.IntN(len(r))])
		}
		values = append(values, sb.String())
	}
	compared, fast := 0, 0
	for _, p := range append(crdPatterns, extraPatterns...) {
		m := newPatternMatcher(p)
		if m == nil {
			t.Fatalf("pattern %q does not compile", p)
		}
		if m.dfa == nil && slices.Contains(crdPatterns, p) {
			t.Errorf("CRD pattern %q has no automaton", p)
		}
		var matching []string
		for _, v := range values {
			compared++
			if checkPatternDFA(t, m, p, v) {
				fast++
			}
			if m.re.MatchString(v) && len(matching) < 60 {
				matching = append(matching, v)
			}
		}
		// The values the pattern takes, changed a little, find its edges.
		for _, v := range matching {
			for _, w := range variants(v) {
				compared++
				if checkPatternDFA(t, m, p, w) {
					fast++
				}
			}
		}
	}
	t.Logf("%d CRD patterns, %d comparisons, %d by the automaton", len(crdPatterns), compared, fast)
	for _, p := range []string{`\bfoo\b`, `(?m)^a$`} {
		if compilePatternDFA(p) != nil {
			t.Errorf("pattern %q: an automaton for what the construction does not handle", p)
		}
	}
}

// FuzzPatternDFA compares the automaton with regexp on patterns and values.
func FuzzPatternDFA(f *testing.F) {
	for _, p := range extraPatterns {
		f.Add(p, "abc")
		f.Add(p, "")
		f.Add(p, "foo.example.com")
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		re, err := regexp.Compile(pattern)
		if err != nil || len(pattern) > 200 {
			return
		}
		m := &patternMatcher{re: re, dfa: compilePatternDFA(pattern)}
		checkPatternDFA(t, m, pattern, s)
	})
}

// BenchmarkCompilePatternDFA measures building the automata of every
// pattern of the CRDs and bundles (each is built once per process, when a
// schema that has it is first used).
func BenchmarkCompilePatternDFA(b *testing.B) {
	patterns := schemaPatterns(b)
	for b.Loop() {
		for _, p := range patterns {
			compilePatternDFA(p)
		}
	}
}
