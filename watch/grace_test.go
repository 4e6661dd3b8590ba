package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWatcherEmptyGrace: an editor truncates a file, leaves it empty for
// 200 ms (longer than the debounce) and writes it again: the file's route
// is served throughout, marked stale meanwhile. A file left empty takes
// effect once the grace is over.
func TestWatcherEmptyGrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	writeTree(t, dir, map[string]string{"a.yaml": watchRouteYAML("a", "80"), "b.yaml": watchRouteYAML("b", "90")})
	const grace = time.Second
	rt := startRootTest(t, dir, WatchOptions{EmptyGrace: grace})

	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	u, _ := rt.waitFor(5*time.Second, "the emptied file", func(u *Update) bool { return len(u.Changed) > 0 })
	if routePort(t, u, "a") != 80 {
		t.Fatal("the emptied file's route went away at once")
	}
	if len(u.Stale) != 1 || u.Stale[0].Object.Name != "a" || !strings.Contains(u.Stale[0].Reason, "the file is empty") {
		t.Errorf("stale = %+v", u.Stale)
	}
	time.Sleep(200 * time.Millisecond)
	if err := os.WriteFile(path, []byte(watchRouteYAML("a", "81")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, seen := rt.waitFor(5*time.Second, "the rewritten file", rt.serves("a", 81))
	for _, s := range seen {
		if routePort(t, s, "a") == 0 {
			t.Errorf("an update without route a: changed %v", s.Changed)
		}
	}
	// No late removal when the grace of the first truncation ends.
	select {
	case u := <-rt.w.Updates():
		t.Errorf("update after the file was written again: changed %v, port %d", u.Changed, routePort(t, u, "a"))
	case <-time.After(grace + 200*time.Millisecond):
	}
	if s := rt.w.Current().Stale; len(s) != 0 {
		t.Errorf("still stale: %+v", s)
	}

	// Emptied on purpose: the route is removed after the grace.
	emptied := time.Now()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	u, _ = rt.waitFor(5*time.Second, "route a removed", rt.serves("a", 0))
	took := time.Since(emptied)
	if took < grace || took > grace+2*time.Second {
		t.Errorf("the emptied file took effect after %s, want about %s", took, grace)
	}
	if routePort(t, u, "b") != 90 || len(u.Stale) != 0 {
		t.Errorf("after the grace: b on %d, stale %+v", routePort(t, u, "b"), u.Stale)
	}
}

// TestWatcherEmptyGraceOff: a negative grace removes an emptied file's
// objects at once, and a file that was empty from the start is simply
// empty.
func TestWatcherEmptyGraceOff(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.yaml": watchRouteYAML("a", "80"), "empty.yaml": ""})
	rt := startRootTest(t, dir, WatchOptions{EmptyGrace: -1})
	if s := rt.w.Current().Stale; len(s) != 0 {
		t.Errorf("stale at start: %+v", s)
	}
	if err := os.Truncate(filepath.Join(dir, "a.yaml"), 0); err != nil {
		t.Fatal(err)
	}
	u, _ := rt.waitFor(5*time.Second, "the emptied file", func(u *Update) bool { return len(u.Changed) > 0 })
	if routePort(t, u, "a") != 0 {
		t.Error("route a still served with the grace off")
	}
}

// TestWatcherDeleteGrace: `rm -rf dir` deletes the files before the
// directory. Even when a reload runs between the two (made certain here
// by waiting for it), the objects stay: the deleted file is held for the
// delete grace, and then the missing root keeps them. A file deleted on
// its own takes effect once the grace is over.
func TestWatcherDeleteGrace(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "site")
	writeTree(t, dir, map[string]string{"a.yaml": watchRouteYAML("a", "80"), "b.yaml": watchRouteYAML("b", "90")})
	// The grace only has to outlast the test's own steps between the
	// deletion of the file and of the folder; a loaded machine may be slow.
	const grace = 5 * time.Second
	rt := startRootTest(t, dir, WatchOptions{DeleteGrace: grace})

	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	u, _ := rt.waitFor(5*time.Second, "the deleted file held", func(u *Update) bool { return len(u.Stale) > 0 })
	if routePort(t, u, "a") != 80 || u.Stale[0].Object.Name != "a" || !strings.Contains(u.Stale[0].Reason, "the file was deleted") {
		t.Fatalf("after deleting a.yaml: port %d, stale %+v", routePort(t, u, "a"), u.Stale)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	_, seen := rt.waitFor(5*time.Second, "the root missing", func(u *Update) bool { return u.Root == RootMissing })
	for _, s := range seen {
		if routePort(t, s, "a") != 80 || routePort(t, s, "b") != 90 {
			t.Errorf("an update lost a route while the folder was removed: a %d, b %d", routePort(t, s, "a"), routePort(t, s, "b"))
		}
	}
	// The grace ending while the root is missing changes nothing.
	select {
	case u := <-rt.w.Updates():
		t.Errorf("update while the folder is missing: root %v, a %d", u.Root, routePort(t, u, "a"))
	case <-time.After(grace + 500*time.Millisecond):
	}
	if routePort(t, rt.w.Current(), "a") != 80 {
		t.Error("route a went away while the folder was missing")
	}

	// The folder comes back without a.yaml: now it is gone for good.
	writeTree(t, dir, map[string]string{"b.yaml": watchRouteYAML("b", "91")})
	u, _ = rt.waitFor(5*time.Second, "the folder back", rt.serves("b", 91))
	if routePort(t, u, "a") != 0 || len(u.Stale) != 0 {
		t.Errorf("folder back without a.yaml: a on %d, stale %+v", routePort(t, u, "a"), u.Stale)
	}
}

// TestWatcherDeleteGraceEnds: a file deleted while its folder stays takes
// effect after the delete grace; a negative grace removes it at once.
func TestWatcherDeleteGraceEnds(t *testing.T) {
	for _, grace := range []time.Duration{300 * time.Millisecond, -1} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"a.yaml": watchRouteYAML("a", "80"), "b.yaml": watchRouteYAML("b", "90")})
		rt := startRootTest(t, dir, WatchOptions{DeleteGrace: grace})
		deleted := time.Now()
		if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
			t.Fatal(err)
		}
		u, seen := rt.waitFor(5*time.Second, "route a removed", rt.serves("a", 0))
		if took := time.Since(deleted); grace > 0 && took < grace {
			t.Errorf("the deletion took effect after %s, before the %s grace", took, grace)
		}
		if grace < 0 && len(seen) != 1 {
			t.Errorf("grace off: %d updates, want the removal at once", len(seen))
		}
		if routePort(t, u, "b") != 90 || len(u.Stale) != 0 {
			t.Errorf("after the grace: b on %d, stale %+v", routePort(t, u, "b"), u.Stale)
		}
	}
}
