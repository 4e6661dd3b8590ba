package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
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

func TestStateMsg(t *testing.T) {
	key := engine.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: "app"}
	u := &watch.Update{
		Result: &watch.LoadResult{Snapshot: &engine.Snapshot{}, Files: 3,
			Problems: []watch.Problem{{File: "app.yaml", Line: 4, Column: 2, Object: key, Field: "spec", Message: "yaml: bad", Pruned: true}}},
		Stale:   []watch.StaleObject{{Object: key, Source: engine.Source{File: "app.yaml", Line: 1}, Reason: "app.yaml:4:2: yaml: bad"}},
		Changed: []string{"app.yaml"},
		Took:    3 * time.Millisecond,
	}
	res := &engine.Result{Objects: &engine.Snapshot{}}
	rep := &emulator.ApplyReport{Ports: []emulator.PortReport{{Gateway: "gateway/default/web", Port: 80, Bound: "127.0.0.1:8080", Fallback: true}}}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msg := stateMsg(&app.State{Update: u, Result: res, Ports: rep, Reload: 2, Time: at, Translate: time.Millisecond, Apply: 2 * time.Millisecond})
	if msg.Result != res || msg.Reload != 2 || msg.Files != 3 || !msg.Time.Equal(at) || msg.Load != 3*time.Millisecond ||
		msg.Translate != time.Millisecond || msg.Apply != 2*time.Millisecond || len(msg.Changed) != 1 || len(msg.Ports) != 1 {
		t.Fatalf("stateMsg = %+v", msg)
	}
	if p := msg.Problems[0]; p.File != "app.yaml" || p.Line != 4 || p.Column != 2 || p.Object != key || p.Message != "yaml: bad" || p.Hint == "" || p.Hint != u.Result.Problems[0].Hint() {
		t.Errorf("problem %+v", p)
	}
	if s := msg.Stale[0]; s.Object != key || s.Source.Line != 1 || s.Reason == "" {
		t.Errorf("stale %+v", s)
	}
}
