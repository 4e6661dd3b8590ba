package report

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
)

// Badge is how a condition shows as a badge, decided by the engine's
// polarity rule (engine.ConditionIsProblem, engine.NegativePolarity): the
// one place the dashboard and check's summary learn it.
type Badge int

const (
	// BadgeHidden is a negative-polarity condition that is not True
	// (Conflicted=False): nothing is wrong and the badge is left out.
	BadgeHidden Badge = iota
	// BadgeOK is a condition that says all is well (Accepted=True): "✓".
	BadgeOK
	// BadgeFailed is a positive-polarity condition that is not True
	// (ResolvedRefs=False): "✗".
	BadgeFailed
	// BadgeRaised is a negative-polarity condition that is True
	// (Conflicted=True): "!".
	BadgeRaised
)

// ConditionBadge classifies a condition for a badge.
func ConditionBadge(c metav1.Condition) Badge {
	neg := engine.NegativePolarity(c.Type)
	switch {
	case neg && c.Status != metav1.ConditionTrue:
		return BadgeHidden
	case !engine.ConditionIsProblem(c.Type, string(c.Status)):
		return BadgeOK
	case neg:
		return BadgeRaised
	}
	return BadgeFailed
}

// Mark is the badge's symbol: "✓", "✗", "!" ("" when hidden).
func (b Badge) Mark() string {
	switch b {
	case BadgeOK:
		return "✓"
	case BadgeFailed:
		return "✗"
	case BadgeRaised:
		return "!"
	}
	return ""
}

// Badges renders the conditions of the given types, in that order, as
// plain badges two spaces apart: the mark, the type and, when it is not
// the type itself, the reason ("✓ Accepted  ✗ ResolvedRefs
// (BackendNotFound)"). Hidden badges and types without a condition are
// left out.
func Badges(conds []metav1.Condition, types ...string) string {
	var out []string
	for _, typ := range types {
		for _, c := range conds {
			if c.Type != typ {
				continue
			}
			b := ConditionBadge(c)
			if b == BadgeHidden {
				continue
			}
			s := b.Mark() + " " + typ
			if c.Reason != typ {
				s += " (" + c.Reason + ")"
			}
			out = append(out, s)
		}
	}
	return strings.Join(out, "  ")
}

// ConditionCell renders the condition of one type for a table cell: "✓"
// when all is well, else the mark and the reason ("✗ BackendNotFound");
// "-" when the condition is missing or hidden.
func ConditionCell(conds []metav1.Condition, typ string) string {
	for _, c := range conds {
		if c.Type != typ {
			continue
		}
		switch b := ConditionBadge(c); b {
		case BadgeHidden:
			return "-"
		case BadgeOK:
			return b.Mark()
		default:
			return b.Mark() + " " + c.Reason
		}
	}
	return "-"
}
