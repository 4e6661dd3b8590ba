package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
)

// TestGolden runs the dashboard as a program (teatest), feeds it the
// conflicts sample and a fixed set of traces, switches to each view and
// compares the final frame with testdata/TestGolden/<view>_<w>x<h>.golden.
// Regenerate with: go test ./tui -run TestGolden -update
func TestGolden(t *testing.T) {
	st := sampleState(t, "conflicts")
	traces := sampleTraces(24)
	views := []struct {
		name string
		keys []string
	}{
		{"overview", []string{"1"}}, {"routes", []string{"2"}}, {"routes_expanded", []string{"2", "j", "enter"}},
		{"problems", []string{"3"}}, {"traces", []string{"4"}}, {"traces_detail", []string{"4", "j", "j", "enter"}},
		{"detail", []string{"5"}}, {"detail_status", []string{"5", "s"}}, {"help", []string{"3", "?"}},
	}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for _, v := range views {
			t.Run(fmt.Sprintf("%s_%dx%d", v.name, size[0], size[1]), func(t *testing.T) {
				m := newTestModel(size[0], size[1], Options{})
				tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(size[0], size[1]))
				tm.Send(st)
				tm.Send(TracesMsg{Traces: traces})
				for _, k := range v.keys {
					tm.Send(keyMsg(k))
				}
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
				teatest.RequireEqualOutput(t, []byte(fm.View()))
			})
		}
	}
}
