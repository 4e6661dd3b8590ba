package watch

import (
	"slices"
	"testing"
)

// TestEnum reads enum values from the CRD schema: a path match's type, a
// filter's type (through the lists on the way), none for a free string or
// an unknown field or kind.
func TestEnum(t *testing.T) {
	l := newTestLoader(t)
	const v1 = "gateway.networking.k8s.io/v1"
	if got := l.Enum(v1, "HTTPRoute", []string{"spec", "rules", "matches", "path", "type"}); !slices.Equal(got, []string{"Exact", "PathPrefix", "RegularExpression"}) {
		t.Errorf("path match type: %v", got)
	}
	if got := l.Enum(v1, "HTTPRoute", []string{"spec", "rules", "filters", "type"}); !slices.Contains(got, "RequestHeaderModifier") || !slices.Contains(got, "URLRewrite") {
		t.Errorf("filter type: %v", got)
	}
	for _, c := range [][]string{{"spec", "hostnames"}, {"spec", "nonsense"}} {
		if got := l.Enum(v1, "HTTPRoute", c); got != nil {
			t.Errorf("%v: %v, want none", c, got)
		}
	}
	if got := l.Enum("v1", "Service", []string{"spec", "type"}); got != nil {
		t.Errorf("a core kind: %v", got)
	}
}
