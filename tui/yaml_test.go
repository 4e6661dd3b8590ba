package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// TestYAMLConditionStatusFollowsPolarity checks the YAML view's colours of
// condition statuses against the engine's polarity rule: Conflicted "True"
// is a problem (warning colour, as its "!" badge) and Conflicted "False"
// is healthy (green), while a positive condition is green when "True" and
// red when "False"; Unknown is a warning. The view used to colour every
// "True" green and every "False" red, whatever the condition.
func TestYAMLConditionStatusFollowsPolarity(t *testing.T) {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.ANSI)
	st := newStyles(r, false)
	green, red, yellow := st.True.Render(`"True"`), st.False.Render(`"False"`), st.Warning.Render(`"True"`)
	if green == yellow || strings.Contains(red, "\x1b") == false {
		t.Fatalf("styles do not colour: %q %q %q", green, red, yellow)
	}
	y := strings.Join([]string{
		"status:", // 0
		"  conditions:",
		"  - lastTransitionTime: \"2026-01-01T00:00:00Z\"",
		"    message: |-",
		"      status: \"True\"",
		"      type: Accepted", // 5: a message's text, not a key
		"    reason: HostnameConflict",
		"    status: \"True\"", // 7
		"    type: Conflicted",
		"  - reason: Accepted",
		"    status: \"True\"", // 10
		"    type: Accepted",
		"  - reason: NoConflicts",
		"    status: \"False\"", // 13
		"    type: Conflicted",
		"  - reason: BackendNotFound",
		"    status: \"False\"", // 16
		"    type: ResolvedRefs",
		"  - reason: Pending",
		"    status: \"Unknown\"", // 19
		"    type: Programmed",
	}, "\n")
	lines := st.highlightYAML(y)
	for i, want := range map[int]string{
		7:  st.Warning.Render(`"True"`),
		10: st.True.Render(`"True"`),
		13: st.True.Render(`"False"`),
		16: st.False.Render(`"False"`),
		19: st.Warning.Render(`"Unknown"`),
	} {
		if !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %d %q: got %q, want it to end %q", i, strings.Split(y, "\n")[i], lines[i], want)
		}
	}
}
