package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/tui"
	"github.com/gwdev/gwdev/watch"
)

func TestUseTUI(t *testing.T) {
	if (&upOptions{}).useTUI(&bytes.Buffer{}) {
		t.Error("the dashboard starts on a buffer")
	}
	if (&upOptions{noTUI: true}).useTUI(&bytes.Buffer{}) {
		t.Error("the dashboard starts with --no-tui")
	}
	// --access-log - in a terminal: no dashboard, and gwdev says why.
	if why := (&upOptions{accessLog: "-"}).dashboardOff(true); !strings.Contains(why, "--access-log - writes JSON lines to stderr") ||
		!strings.Contains(why, "--access-log FILE keeps the dashboard") {
		t.Errorf("dashboardOff: %q", why)
	}
	for _, o := range []*upOptions{{accessLog: "-", noTUI: true}, {accessLog: "log.json"}, {}} {
		if why := o.dashboardOff(true); why != "" {
			t.Errorf("%+v: dashboardOff %q", o, why)
		}
	}
	if why := (&upOptions{accessLog: "-"}).dashboardOff(false); why != "" {
		t.Errorf("not a terminal: dashboardOff %q", why)
	}
}

// TestCheckSingular: one object from one file is said in the singular.
func TestCheckSingular(t *testing.T) {
	out, _, _ := runGwdev(t, "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: gwdev}\nspec: {controllerName: gwdev.dev/gateway-controller}\n",
		"check", "-f", "-")
	if !strings.HasPrefix(out, "Loaded 1 object from 1 file in ") {
		t.Errorf("summary: %q", out)
	}
}

// TestDashboardReadsState: the dashboard takes the Session's State as it
// is (no copy of its types in tui): its header counts the load's files,
// and its Problems view lists the load problems and stale objects of the
// State's Update.
func TestDashboardReadsState(t *testing.T) {
	key := engine.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: "app"}
	u := &watch.Update{
		Result: &watch.LoadResult{Snapshot: &engine.Snapshot{}, Files: 3,
			Problems: []watch.Problem{{File: "app.yaml", Line: 4, Column: 2, Object: key, Field: "spec", Message: "yaml: bad", Kind: watch.ProblemYAML}}},
		Stale:   []watch.StaleObject{{Object: key, Source: engine.Source{File: "app.yaml", Line: 1}, Reason: "app.yaml:4:2: yaml: bad"}},
		Changed: []string{"app.yaml"},
		Took:    3 * time.Millisecond,
	}
	res := &engine.Result{Objects: &engine.Snapshot{}, Table: &engine.Table{}}
	rep := &emulator.ApplyReport{Ports: []emulator.PortReport{{Gateway: "gateway/default/web", Port: 80, Bound: "127.0.0.1:8080", Fallback: true}}}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	model := tui.New(tui.Options{Dir: "app", NoColor: true})
	model.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	model.Update(&app.State{Update: u, Result: res, Ports: rep, Reload: 2, Time: at, Load: u.Took, Translate: time.Millisecond, Apply: 2 * time.Millisecond})
	if v := model.View(); !strings.Contains(v, "in 3 files") || !strings.Contains(v, "reload #2") {
		t.Errorf("the header does not count the State's files and reload:\n%s", strings.SplitN(v, "\n", 2)[0])
	}
	model.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3")})
	v := model.View()
	for _, want := range []string{"app.yaml:4", "yaml: bad", u.Result.Problems[0].Hint()[:30], "still serving the last good version"} {
		if !strings.Contains(v, want) {
			t.Errorf("the Problems view lacks %q:\n%s", want, v)
		}
	}
}
