package tui

import (
	"github.com/gwdev/gwdev/engine"
)

// policyLines lists the policies that target the object, each applied (✓)
// or refused (✗) with why, for the Detail view ("" lines: none target it).
func (v *detailView) policyLines(k engine.ObjectKey) []string {
	st := v.s.state
	if st == nil || st.Result == nil {
		return nil
	}
	effects := st.Result.PoliciesFor(k)
	if len(effects) == 0 {
		return nil
	}
	out := []string{v.st.Bold.Render("Policies:")}
	for _, e := range effects {
		mark, style := "✓ ", v.st.OK
		if !e.Applied {
			mark, style = "✗ ", v.st.Error
		}
		out = append(out, "  "+style.Render(mark+e.PolicyName())+"  "+v.st.Dim.Render(e.Reason+": "+e.Message))
	}
	return out
}
