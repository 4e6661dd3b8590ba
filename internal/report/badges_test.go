package report

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func cond(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason}
}

// TestBadgesFollowPolarity checks the plain badges of check's summary
// against the engine's polarity rule: a negative-polarity condition
// (Conflicted, OverlappingTLSConfig) is healthy when False and left out,
// and raised ("!") when True; a positive one fails ("✗") when not True.
// check's summary used to mark every condition that was not True with ✗,
// Conflicted=False included.
func TestBadgesFollowPolarity(t *testing.T) {
	conds := []metav1.Condition{
		cond("Accepted", metav1.ConditionTrue, "Accepted"),
		cond("ResolvedRefs", metav1.ConditionFalse, "BackendNotFound"),
		cond("Conflicted", metav1.ConditionFalse, "NoConflicts"),
		cond("OverlappingTLSConfig", metav1.ConditionTrue, "OverlappingHostnames"),
		cond("Programmed", metav1.ConditionUnknown, "Pending"),
	}
	for _, c := range []struct {
		types []string
		want  string
	}{
		{[]string{"Accepted", "ResolvedRefs"}, "✓ Accepted  ✗ ResolvedRefs (BackendNotFound)"},
		{[]string{"Conflicted"}, ""},
		{[]string{"Accepted", "Conflicted", "OverlappingTLSConfig"}, "✓ Accepted  ! OverlappingTLSConfig (OverlappingHostnames)"},
		{[]string{"Programmed", "Missing"}, "✗ Programmed (Pending)"},
	} {
		if got := Badges(conds, c.types...); got != c.want {
			t.Errorf("Badges(%v) = %q, want %q", c.types, got, c.want)
		}
	}
	for _, c := range []struct {
		typ, want string
	}{
		{"Accepted", "✓"}, {"ResolvedRefs", "✗ BackendNotFound"}, {"Conflicted", "-"},
		{"OverlappingTLSConfig", "! OverlappingHostnames"}, {"Missing", "-"},
	} {
		if got := ConditionCell(conds, c.typ); got != c.want {
			t.Errorf("ConditionCell(%s) = %q, want %q", c.typ, got, c.want)
		}
	}
}
