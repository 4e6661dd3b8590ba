package tui

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
)

// TestGoldenMeshOverview shows samples/mesh on the overview: no Gateway,
// one block per Service frontend with its address, its ports and where
// each is bound (testdata/TestGoldenMeshOverview.golden; -update).
func TestGoldenMeshOverview(t *testing.T) {
	m := newTestModel(120, 30, Options{Dir: "samples/mesh"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30))
	tm.Send(sampleState(t, "mesh"))
	tm.Send(keyMsg("1"))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
	teatest.RequireEqualOutput(t, []byte(fm.View()))
}
