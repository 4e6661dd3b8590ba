package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"
)

// TestGoldenIngress shows samples/ingress-nginx, a folder of Ingresses and
// no Gateway, at 80×24: the overview has the IngressClass with where each
// port is served and why port 80 moved, its listeners with their hosts and
// each Ingress's host+path (no "No Gateway" message); Routes lists the
// Ingresses and expands one into its locations
// (testdata/TestGoldenIngress/<view>.golden; -update).
func TestGoldenIngress(t *testing.T) {
	st := sampleState(t, "ingress-nginx")
	for _, v := range []struct {
		name string
		keys []string
	}{{"overview", []string{"1"}}, {"routes", []string{"2"}}, {"routes_expanded", []string{"2", "enter"}}} {
		t.Run(fmt.Sprintf("%s_80x24", v.name), func(t *testing.T) {
			m := newTestModel(80, 24, Options{Dir: "samples/ingress-nginx"})
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
			tm.Send(st)
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
