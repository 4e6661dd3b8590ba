package watch

import (
	"strconv"
	"testing"

	yaml "go.yaml.in/yaml/v4"

	"github.com/google/go-cmp/cmp"

	"github.com/gwdev/gwdev/engine"
)

// TestScalarResolution checks that scalars resolve as kubectl sends them
// (YAML 1.1 through sigs.k8s.io/yaml, then JSON).
func TestScalarResolution(t *testing.T) {
	n := parseForTest(t, `a: on
b: "on"
c: 80
d: 80.0
e: 1.5
f: 0x10
g: ~
h: !!str 12
i: 1_000
j: 2024-01-01
k: 'x'
l: [yes, No, off]
base: &base {x: 1, y: 2}
m:
  <<: *base
  y: 3
`)
	v, err := toUnstructured(n, nil)
	if err != nil {
		t.Fatal(err.msg)
	}
	want := map[string]any{
		"a": true, "b": "on", "c": int64(80), "d": int64(80), "e": 1.5, "f": int64(16),
		"g": nil, "h": "12", "i": int64(1000), "j": "2024-01-01", "k": "x",
		"l":    []any{true, false, false},
		"base": map[string]any{"x": int64(1), "y": int64(2)},
		"m":    map[string]any{"x": int64(1), "y": int64(3)},
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestLocate checks how field paths map to nodes.
func TestLocate(t *testing.T) {
	n := parseForTest(t, `metadata:
  annotations:
    example.com/a.b: x
spec:
  rules:
  - matches:
    - path: {type: Exact}
  - backendRefs: []
`)
	for _, tc := range []struct {
		path      string
		line, col int
	}{
		{"", 1, 1},
		{"spec", 4, 1},
		{"spec.rules[1]", 8, 5},
		{"spec.rules[0].matches[0].path.type", 7, 14},
		{"spec.rules[0].matches[0].path.value", 7, 7},   // missing: the parent
		{"spec.rules[7].name", 5, 3},                    // index out of range
		{"metadata.annotations[example.com/a.b]", 3, 5}, // bracketed key
		{"metadata.annotations.example.com/a.b", 3, 5},  // dotted key
		{"spec.rules.backendRefs", 8, 5},                // no index (encoding/json)
	} {
		got := locate(n, tc.path)
		if got.Line != tc.line || got.Column != tc.col {
			t.Errorf("locate(%q) = %d:%d, want %d:%d", tc.path, got.Line, got.Column, tc.line, tc.col)
		}
	}
}

func TestProblemString(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{File: "a.yaml", Line: 3, Column: 5, Object: engine.ObjectKey{Kind: "HTTPRoute", Namespace: "ns", Name: "r"}, Field: "spec", Message: "spec: Required value"},
			"a.yaml:3:5: HTTPRoute/ns/r: spec: Required value"},
		{Problem{File: "a.yaml", Line: 3, Message: "yaml: bad"}, "a.yaml:3: yaml: bad"},
		{Problem{File: "dir", Message: "no such file or directory"}, "dir: no such file or directory"},
		{Problem{File: "-", Line: 1, Column: 1, Object: engine.ObjectKey{Kind: "GatewayClass", Name: "c"}, Message: "m"}, "-:1:1: GatewayClass/c: m"},
		{Problem{Object: engine.ObjectKey{Kind: "X"}, Message: "m"}, "X: m"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestSplitDocuments(t *testing.T) {
	got := splitDocuments([]byte("a: 1\n---\nb: 2\n--- # comment\r\n---x: 3\n"))
	var lines []int
	var texts []string
	for _, c := range got {
		lines = append(lines, c.line)
		texts = append(texts, string(c.data))
	}
	if !cmp.Equal(lines, []int{1, 3, 5}) || !cmp.Equal(texts, []string{"a: 1\n", "b: 2\n", "---x: 3\n"}) {
		t.Errorf("chunks = %v %q", lines, texts)
	}
}

// Converting a document allocates the values it returns, not one path
// element per field and list item (the paths are only rendered for errors):
// a list of n items costs, per item past the first, what the item's own
// value costs (issue 42, part 3).
func TestConvertAllocatesNoPathPerField(t *testing.T) {
	list := func(n int, item string) *yaml.Node {
		s := "items:\n"
		for range n {
			s += "- " + item + "\n"
		}
		return parseForTest(t, s)
	}
	allocs := func(n *yaml.Node) float64 {
		strs := &strTable{}
		return testing.AllocsPerRun(20, func() {
			if _, err := toUnstructured(n, strs); err != nil {
				t.Fatal(err.msg)
			}
		})
	}
	// A small integer in an any allocates nothing: each item is free.
	if one, many := allocs(list(1, "7")), allocs(list(101, "7")); many != one {
		t.Errorf("a list of 101 small integers: %v allocations, one of 1: %v; want the same", many, one)
	}
	// A mapping item costs what building its map costs.
	perMap := testing.AllocsPerRun(20, func() {
		m := make(map[string]any, 1)
		m["a"] = int64(7)
		sinkMap = m
	})
	one, many := allocs(list(1, "{a: 7}")), allocs(list(101, "{a: 7}"))
	if per := (many - one) / 100; per > perMap {
		t.Errorf("a list of mappings: %v allocations per item, building the map alone %v", per, perMap)
	}
}

var sinkMap map[string]any

// A problem deep in a document names its whole path, also past the depth
// the converter's path stack starts with and after siblings were converted.
func TestConvertErrorPathDeep(t *testing.T) {
	s := "a:\n  x: [1, 2, {y: 1}]\n  b:\n"
	indent := "    "
	for i := range 20 {
		s += indent + "l" + strconv.Itoa(i) + ":\n"
		indent += "  "
	}
	s += indent + "- {q: 1}\n" + indent + "- {q: 1, q: 2}\n"
	_, err := toUnstructured(parseForTest(t, s), nil)
	if err == nil {
		t.Fatal("no error for a duplicate field")
	}
	want := "a.b"
	for i := range 20 {
		want += ".l" + strconv.Itoa(i)
	}
	want += "[1].q"
	if err.path != want || err.msg != "duplicate field \""+want+"\"" {
		t.Errorf("path %q, message %q; want %q", err.path, err.msg, want)
	}
}
