package main

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestDashboardProblemsJudgeLikeCheck: the dashboard's Problems view, fed
// by up's reloader, judges the default-gateway sample as check does (issue
// 25: one judgement for check, diff and the dashboard). With --crds
// v1.6.3-standard the two experimental fields are errors, explained as
// fields the cluster drops (Problem.Pruned); without --crds they load and
// the channel notes say that a standard cluster lacks them.
func TestDashboardProblemsJudgeLikeCheck(t *testing.T) {
	dir := "../../samples/default-gateway"
	for _, tc := range []struct {
		crds string
		// both is what check and the Problems view say; view only the view.
		both, view []string
	}{
		{"v1.6.3-standard", []string{
			`unknown field "spec.useDefaultGateways" in v1.6.3-standard: rejected by kubectl's strict field validation`,
			`unknown field "spec.defaultScope" in v1.6.3-standard: rejected by kubectl's strict field validation`,
		}, []string{"✗ 2 errors", "the cluster drops the field. gwdev serves the object without it"}},
		{"", []string{
			"experimental channel only: v1.7.0-standard does not have field spec.useDefaultGateways",
			"experimental channel only: v1.7.0-standard does not have field spec.defaultScope",
		}, []string{"✓ no problems"}},
	} {
		model := dashboardWith(t, dir, projectFlags{crds: tc.crds})
		model.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3")})
		v := model.View()
		for _, w := range append(tc.both, tc.view...) {
			if !strings.Contains(v, w) {
				t.Errorf("--crds %q: the Problems view lacks %q:\n%s", tc.crds, w, v)
			}
		}
		out, _, _ := runGwdev(t, "", "check", "--crds="+tc.crds, dir)
		for _, w := range tc.both {
			if !strings.Contains(out, w) {
				t.Errorf("--crds %q: check does not say %q:\n%s", tc.crds, w, out)
			}
		}
	}
}
