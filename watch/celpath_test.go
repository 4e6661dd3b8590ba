package watch

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestCELPathIsFieldPath checks that celPath renders the field.Path that
// celNode.validate built step by step before: fields, list items and map
// keys, from the root on.
func TestCELPathIsFieldPath(t *testing.T) {
	steps := []celPathStep{{kind: celIndex, index: 0}, {name: "spec"}, {name: "rules"}, {kind: celIndex, index: 12},
		{name: "labels"}, {kind: celKey, name: "a.b/c"}, {kind: celKey, name: "x"}, {kind: celIndex, index: 3}, {name: "z"}}
	for n := range len(steps) + 1 {
		for start := range n + 1 {
			var want *field.Path
			p := &celPath{}
			for _, s := range steps[start:n] {
				p.push(s)
				switch s.kind {
				case celIndex:
					want = want.Index(s.index)
				case celKey:
					want = want.Key(s.name)
				default:
					want = want.Child(s.name)
				}
			}
			if got := p.fieldPath(); !reflect.DeepEqual(got, want) || got.String() != want.String() {
				t.Fatalf("steps %v: got %q, want %q", steps[start:n], got.String(), want.String())
			}
		}
	}
}
