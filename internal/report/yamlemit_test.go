package report

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// yamlEdgeStrings are scalars whose style yaml.v2 decides by a rule:
// indicators, resolvable words and numbers, timestamps, base 60, quotes,
// spaces at the ends, line breaks, long text folded at 80 columns.
var yamlEdgeStrings = []string{
	"", " ", "a", "a b", " a", "a ", "-", "- a", "-a", "--- a", "...", "?", "? a", ":", "a:", "a: b", "a:b",
	"#", "a #b", "a#b", "'", "a'b", "'a'", `"`, `a"b`, `\`, `a\b`, "[a]", "{a}", "a,b", "&a", "*a", "!a", "|", ">",
	"%", "@", "`", "true", "True", "yes", "no", "on", "off", "y", "n", "~", "null", "Null", "<<", ".inf", ".5",
	".nan", ".x", "1", "-1", "+1", "0x1F", "0o17", "017", "1_000", "1.5", "1e3", "1.5.3", "127.0.0.1", "0b101", "-0b1",
	"1:30", "190:20:30.15", "2026-01-01", "2026-01-01T00:00:00Z", "2026-1-2 3:4:5", "12345-01-01", "a\nb", "a\n",
	"a\n\n", "\n", "\na", " a\nb", "a \nb", "a\n b", "a\n\nb\n", "line one\nline two   x\n",
	strings.Repeat("word ", 30), strings.Repeat("x", 100) + " y", "a  " + strings.Repeat("b ", 50),
	strings.Repeat("longword ", 12) + "'", "'" + strings.Repeat("quoted text ", 12), strings.Repeat("ab ", 20) + "true",
	"1 " + strings.Repeat("a ", 45), strings.Repeat("z", 79) + "  two spaces  " + strings.Repeat("w ", 10),
	"é", "a\tb", "a\rb", "\x7f",
}

// TestYAMLEmitterMatchesSigsYAML checks the emitter against
// sigs.k8s.io/yaml: every edge string as a value, a key, a list item and
// deeper down, and the numbers encoding/json writes.
func TestYAMLEmitterMatchesSigsYAML(t *testing.T) {
	var docs []any
	for _, s := range yamlEdgeStrings {
		docs = append(docs,
			map[string]any{"k": s},
			map[string]any{s: 1, "other": []any{s, map[string]any{"x": s}}},
			map[string]any{"a": []any{[]any{s, s}, map[string]any{"deep": map[string]any{"deeper": []any{s}}}}},
			map[string]any{"long-key-" + strings.Repeat("k", 60): s, "list": []any{map[string]any{"a": s, "b": []any{}}}},
		)
	}
	docs = append(docs,
		map[string]any{"n": []any{0, -1, 1.5, 1e21, 1e-7, 0.000001, uint64(1 << 63), int64(-1 << 63), true, false, nil}},
		map[string]any{"empty": map[string]any{}, "list": []any{}, "nested": []any{map[string]any{}, []any{}}},
		map[string]any{strings.Repeat("k", 129): 1},
		map[string]any{"a1": 1, "a10": 2, "a2": 3, "A": 4, "_": 5, "a02": 6, "a002": 7, "b": 8, "1": 9, "10": 10, "9": 11, "é": 12},
	)
	var (
		tree jsonTree
		em   yamlEmitter
	)
	fast := 0
	for _, d := range docs {
		want, werr := yaml.Marshal(d)
		j, _ := json.Marshal(d)
		if werr != nil { // "\x7f": yaml.v2 refuses control characters
			if _, err := appendObjectYAML(&tree, &em, nil, d); err == nil {
				t.Errorf("%s: no error; sigs.k8s.io/yaml: %v", j, werr)
			}
			continue
		}
		root, err := tree.parse(j)
		if err != nil {
			t.Fatalf("parse %s: %v", j, err)
		}
		em.out = em.out[:0]
		switch err := em.document(&tree, root); err {
		case nil:
			fast++
			if string(em.out) != string(want) {
				t.Errorf("%s:\ngot:\n%s\nwant:\n%s", j, em.out, want)
			}
		case errOutsideSubset:
		default:
			t.Errorf("%s: %v", j, err)
		}
		got, err := appendObjectYAML(&tree, &em, nil, d)
		if err != nil || string(got) != string(want) {
			t.Errorf("appendObjectYAML(%s) = %q, %v; want %q", j, got, err, want)
		}
	}
	if fast < len(docs)*9/10 {
		t.Errorf("only %d of %d documents took the fast path", fast, len(docs))
	}
}

// FuzzYAMLEmitter compares the emitter with sigs.k8s.io/yaml on any
// string, as a value and as a key.
func FuzzYAMLEmitter(f *testing.F) {
	for _, s := range yamlEdgeStrings {
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, s string, depth int) {
		var d any = map[string]any{"v": s, s: []any{s}}
		for range depth % 4 {
			d = []any{map[string]any{"x": d, "y": s}}
		}
		d = map[string]any{"root": d}
		want, err := yaml.Marshal(d)
		if err != nil {
			t.Skipf("sigs.k8s.io/yaml cannot write %q either, so there is nothing to compare: %v", s, err)
		}
		var (
			tree jsonTree
			em   yamlEmitter
		)
		got, err := appendObjectYAML(&tree, &em, nil, d)
		if err != nil || string(got) != string(want) {
			t.Errorf("%q: got %q, %v; want %q", s, got, err, want)
		}
	})
}
