package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDebounceLeadsWhenQuiet: the first event after a quiet period reloads
// at once; events closer together than the wait (a burst) do not, however
// long the burst lasts; the next event after a quiet period leads again.
// Times are given, not waited for.
func TestDebounceLeadsWhenQuiet(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	d := debouncer{wait: 50 * time.Millisecond}
	steps := []struct {
		path string
		ms   int
		lead bool
	}{
		{"a.yaml", 0, true},    // first event ever: a save, at once
		{"a.yaml", 1, false},   // the same save's next event: the burst waits
		{"b.yaml", 40, false},  // a git checkout: 40 ms after the last
		{"c.yaml", 89, false},  // still within 50 ms of the last event
		{"d.yaml", 138, false}, // the burst is longer than the wait: still coalesced
		{"a.yaml", 300, true},  // quiet again: at once
	}
	for _, s := range steps {
		if got := d.event(s.path, at(s.ms)); got != s.lead {
			t.Errorf("event %s at %dms: lead %v, want %v", s.path, s.ms, got, s.lead)
		}
	}
}

// TestDebounceIgnoresTemporaryNames: an editor's temporary file before its
// rename (a dotfile), backups and swap files neither lead nor make the tree
// busy, so the rename's event that follows them leads.
func TestDebounceIgnoresTemporaryNames(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := debouncer{wait: 50 * time.Millisecond}
	for i, p := range []string{"dir/.route.yaml.tmp", "dir/route.yaml~", "dir/.route.yaml.swp", "dir/4913"} {
		if d.event(p, t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Errorf("%s leads a reload", p)
		}
	}
	if !d.event("dir/route.yaml", t0.Add(5*time.Millisecond)) {
		t.Error("the rename after a temporary file waits for a burst that is not there")
	}
}

// TestDebounceAfterReload: events that queued while a (slow) reload ran
// arrive just after it and wait, so that a burst during a reload is one more
// reload, not one per event.
func TestDebounceAfterReload(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := debouncer{wait: 50 * time.Millisecond}
	if !d.event("a.yaml", t0) {
		t.Fatal("first event waits")
	}
	d.reloaded(t0.Add(300 * time.Millisecond)) // a 300 ms reload
	if d.event("b.yaml", t0.Add(301*time.Millisecond)) {
		t.Error("an event queued during the reload leads another reload")
	}
	if !d.event("c.yaml", t0.Add(400*time.Millisecond)) {
		t.Error("an event after the quiet period waits")
	}
}

// TestWatchSaveReloadsAtOnce: with a debounce far longer than the test, a
// file saved by rename into a quiet tree is still delivered, so it was not
// held back by the debounce.
func TestWatchSaveReloadsAtOnce(t *testing.T) {
	dir := t.TempDir()
	writeRoutes(t, dir, 0) // the Gateway
	l := newTestLoader(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := l.Watch(ctx, dir, WatchOptions{Debounce: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".route.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(routeYAML(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "route.yaml")); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-w.Updates():
		if len(u.Result.Snapshot.HTTPRoutes) != 1 {
			t.Fatalf("update has %d HTTPRoutes, want 1 (changed %v, problems %v)", len(u.Result.Snapshot.HTTPRoutes), u.Changed, u.Result.Problems)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a save into a quiet tree waits for the debounce")
	}
}
