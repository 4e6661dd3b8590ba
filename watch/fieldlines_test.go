package watch

import (
	"fmt"
	"strings"
	"testing"
)

// TestFieldLines checks the keys and lines fieldLines records, for the
// first items of a list (whose keys are shared) and for items past them.
func TestFieldLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("spec:\n  parentRefs:\n  - name: a\n  rules:\n")
	want := map[string]int{"spec.parentRefs[0]": 3}
	line := 5
	for i := range 10 {
		b.WriteString("  - backendRefs:\n")
		want[fmt.Sprintf("spec.rules[%d]", i)] = line
		line++
		for j := range 10 {
			b.WriteString("    - name: s\n")
			want[fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j)] = line
			line++
		}
	}
	doc, ok := fastParse([]byte(b.String()))
	if !ok {
		t.Fatal("fastParse refused the document")
	}
	got := fieldLines(doc.Content[0], 10) // the document starts at line 11
	for k, w := range want {
		if got[k] != w+10 {
			t.Errorf("%s: line %d, want %d", k, got[k], w+10)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d keys, want %d: %v", len(got), len(want), got)
	}
}
