package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
)

// TestGoldenShadowedProblems shows the shadowed sample's Problems view: the
// shadowed rule is a warning naming both routes and the deciding criterion.
func TestGoldenShadowedProblems(t *testing.T) {
	st := sampleState(t, "shadowed")
	m := newTestModel(160, 48, Options{})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	tm.Send(st)
	tm.Send(keyMsg("3"))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
	view := fm.View()
	for _, want := range []string{"HTTPRoute/default/search", "never receives a request"} {
		if !strings.Contains(view, want) {
			t.Errorf("Problems view lacks %q:\n%s", want, view)
		}
	}
	teatest.RequireEqualOutput(t, []byte(view))
}
