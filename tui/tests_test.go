package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/routetest"
)

// testsSample is a run of samples/basic's routing tests as gwdev up sends
// it after a save that broke one case.
func testsSample() app.TestsState {
	return app.TestsState{Reload: 3, Run: &routetest.Run{Files: []routetest.FileResult{{Path: "samples/basic/routes.gwtest.yaml", Cases: []routetest.CaseResult{
		{Line: 4, Name: "/api goes to the api Service", Mismatches: []routetest.Mismatch{
			{Field: "route.rule", Line: 9, Want: "0", Got: "1"},
			{Field: "backend.service", Line: 11, Want: "default/api:8080", Got: "default/frontend:80"}}},
		{Line: 16, Name: "everything else goes to frontend, over HTTP/2 (h2c)"},
		{Line: 24, Name: "another host reaches no route"},
	}}}}}
}

// TestGoldenTests: once the folder's tests ran, the Tests tab is there (8
// or t reaches it) and lists the failed case with its failures first,
// then the cases that pass; j moves to the next case. Regenerate with:
// go test ./tui -run TestGoldenTests -update
func TestGoldenTests(t *testing.T) {
	st := sampleState(t, "basic")
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for _, c := range []struct {
			name string
			keys []string
		}{{"list", []string{"8"}}, {"next", []string{"t", "j"}}} {
			t.Run(fmt.Sprintf("%s_%dx%d", c.name, size[0], size[1]), func(t *testing.T) {
				m := newTestModel(size[0], size[1], Options{Dir: "samples/basic"})
				tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(size[0], size[1]))
				tm.Send(st)
				tm.Send(testsSample())
				for _, k := range c.keys {
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

// TestTestsTabOnlyAfterARun: no Tests tab (8 and t do nothing) until a run
// arrives; then the tab counts the failed cases, and a run where all pass
// says so; one with errors shows them.
func TestTestsTabOnlyAfterARun(t *testing.T) {
	m := newTestModel(120, 30, Options{})
	m.Update(sampleState(t, "basic"))
	for _, k := range []string{"8", "t"} {
		m.Update(keyMsg(k))
		if m.active != viewOverview || strings.Contains(m.View(), "Tests") {
			t.Fatalf("%s: view %d without a test run:\n%s", k, m.active, m.View())
		}
	}
	m.Update(testsSample())
	m.Update(keyMsg("t"))
	if v := m.View(); m.active != viewTests || !strings.Contains(v, "8 Tests 1") || !strings.Contains(v, "1 of 3 cases fail") ||
		!strings.Contains(v, "route.rule: expected 0, got 1") {
		t.Errorf("view %d:\n%s", m.active, v)
	}
	ok := testsSample()
	ok.Run.Files[0].Cases[0].Mismatches = nil
	m.Update(ok)
	if v := m.View(); !strings.Contains(v, "all 3 cases pass") || strings.Contains(v, "8 Tests 1") {
		t.Errorf("all pass:\n%s", v)
	}
	m.Update(app.TestsState{Reload: 4, Err: &app.TestFilesError{Errs: routetest.Errors{{File: "a.gwtest.yaml", Line: 3, Column: 9, Message: `unknown field "stauts" in cases.0.expect`}}}})
	if v := m.View(); !strings.Contains(v, "did not run") || !strings.Contains(v, `unknown field "stauts"`) {
		t.Errorf("errors:\n%s", v)
	}
}
