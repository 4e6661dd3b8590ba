package watch

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
)

// TestFieldLines checks the keys, lines and columns fieldLines records,
// for the first items of a list (whose keys are shared) and for items past
// them, and for annotation keys. A list item's column is its first field's.
func TestFieldLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("metadata:\n  annotations:\n    example.com/a: x\nspec:\n  parentRefs:\n  - name: a\n  rules:\n")
	want := map[string]engine.FieldPos{"metadata.annotations[example.com/a]": {Line: 3, Column: 5}, "spec.parentRefs[0]": {Line: 6, Column: 5}}
	line := int32(8)
	for i := range 10 {
		b.WriteString("  - backendRefs:\n")
		want[fmt.Sprintf("spec.rules[%d]", i)] = engine.FieldPos{Line: line, Column: 5}
		line++
		for j := range 10 {
			b.WriteString("      - name: s\n")
			want[fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j)] = engine.FieldPos{Line: line, Column: 9}
			line++
		}
	}
	doc, ok := fastParse([]byte(b.String()))
	if !ok {
		t.Fatal("fastParse refused the document")
	}
	got := fieldLines(doc.Content[0], 10) // the document starts at line 11
	for k, w := range want {
		w.Line += 10
		if got[k] != w {
			t.Errorf("%s: at %+v, want %+v", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d keys, want %d: %v", len(got), len(want), got)
	}
}

// Finding the list nodes of an object walks fixed paths without allocating
// for their segments (issue 42, part 3).
func TestNodeAtAllocatesNothing(t *testing.T) {
	n := parseForTest(t, "spec:\n  rules:\n  - backendRefs: [{name: a}]\n")
	if n := testing.AllocsPerRun(20, func() {
		if listNode(n, "spec.rules") == nil {
			t.Fatal("spec.rules not found")
		}
	}); n != 0 {
		t.Errorf("listNode: %v allocations, want 0", n)
	}
}
