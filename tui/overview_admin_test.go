package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
)

// TestGoldenAdminMoved shows, at 80×24, the overview of a second `gwdev
// up` whose admin port was taken: the line is longer than the screen and
// wraps, so the address this one serves the admin API on is whole (it was
// cut off at "ht…"; testdata/TestGoldenAdminMoved.golden; -update).
func TestGoldenAdminMoved(t *testing.T) {
	const served = "http://127.0.0.1:41873/"
	admin := "admin API: 127.0.0.1:9901 is in use (another gwdev? its answers carry a different Gwdev-Instance header); " +
		"this one (pid 48213, /home/dev/projects/shop/deploy/gateway) serves it on " + served
	m := newTestModel(80, 24, Options{Admin: admin, AdminProblem: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	tm.Send(sampleState(t, "conflicts"))
	tm.Send(keyMsg("1"))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	view := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()
	if !strings.Contains(view, served) {
		t.Errorf("the overview cuts off the admin address %s:\n%s", served, view)
	}
	teatest.RequireEqualOutput(t, []byte(view))
}
