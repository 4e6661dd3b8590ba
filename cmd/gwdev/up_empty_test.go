package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/tui"
)

// TestUpEmptiedFolderNothingToServe: a watched folder emptied of its
// manifests is not "no problems" while every listener is gone: up's output
// and the dashboard (header and Problems) say there is nothing to serve, as
// check calls an empty folder a failure.
func TestUpEmptiedFolderNothingToServe(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../samples/basic/app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gw, err := os.ReadFile("../../samples/basic/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	for name, content := range map[string][]byte{"app.yaml": b, "gateway.yaml": gw} {
		s := strings.ReplaceAll(string(content), "port: 8080", "port: "+strconv.Itoa(port))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := runUp(t, &upOptions{debounce: 10 * time.Millisecond, emptyGrace: 0, admin: "off"}, dir)
	waitForOutput(t, out, "loaded: ")
	for _, f := range []string{"app.yaml", "gateway.yaml"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	waitForOutput(t, out, "nothing to serve")
	// That ends the reload line; the reason is the next line.
	waitForOutput(t, out, "No manifests found in "+dir)

	// The dashboard, from the same reloader.
	model := dashboardOf(t, dir)
	v := model.View()
	header := strings.SplitN(v, "\n", 2)[0]
	if strings.Contains(header, "no problems") || !strings.Contains(header, "warning") {
		t.Errorf("the dashboard header says:\n%s", header)
	}
	model.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3")})
	if v := model.View(); !strings.Contains(v, "nothing to serve") || strings.Contains(v, "✓ No problems") {
		t.Errorf("Problems does not say there is nothing to serve:\n%s", v)
	}
}

// TestUpMissingFolderHint: the problem of a watched folder that is gone
// carries a hint about the folder, not "the object was rejected when
// loading".
func TestUpMissingFolderHint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	model := dashboardOf(t, dir)
	model.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3")})
	v := model.View()
	if !strings.Contains(v, "no such file or directory") {
		t.Fatalf("Problems lacks the missing folder:\n%s", v)
	}
	if strings.Contains(v, "rejected when loading") || !strings.Contains(v, "watched folder") {
		t.Errorf("the missing folder's hint:\n%s", v)
	}
}

// dashboardOf loads dir once through up's reloader and returns a dashboard
// that got the resulting state.
func dashboardOf(t *testing.T, dir string) *tui.Model {
	t.Helper()
	return dashboardWith(t, dir, project.Flags{})
}

// dashboardWith is dashboardOf with the project's flags (--crds…).
func dashboardWith(t *testing.T, dir string, flags project.Flags) *tui.Model {
	t.Helper()
	var got []*app.State
	proj, err := project.Open([]string{dir}, flags)
	if err != nil {
		t.Fatal(err)
	}
	srv := emulator.New(emulator.Config{})
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	sess, err := app.NewSession(t.Context(), proj, app.SessionOptions{Dir: dir, Server: srv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sess.Close)
	sess.Subscribe(func(st *app.State) { got = append(got, st) })
	sess.Start()
	model := tui.New(tui.Options{Dir: dir, NoColor: true})
	model.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	model.Update(got[0])
	return model
}
