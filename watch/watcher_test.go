package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const watchRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: svc, port: %s}]}]
`

func watchRouteYAML(name, port string) string {
	return fmt.Sprintf(watchRoute, name, port)
}

// nextUpdate waits for the watcher's next state.
func nextUpdate(t *testing.T, w *Watcher) *Update {
	t.Helper()
	select {
	case u := <-w.Updates():
		return u
	case <-time.After(5 * time.Second):
		t.Fatal("no update within 5s")
		return nil
	}
}

func routePort(t *testing.T, u *Update, name string) int32 {
	t.Helper()
	for _, r := range u.Result.Snapshot.HTTPRoutes {
		if r.Name == name {
			return int32(*r.Spec.Rules[0].BackendRefs[0].Port)
		}
	}
	return 0
}

// TestWatcherLastKnownGood edits, breaks, fixes and deletes files: a broken
// file's objects stay in effect at their last good version (marked stale),
// a deleted file's objects go away, new directories are watched, and a
// save by rename is seen.
func TestWatcherLastKnownGood(t *testing.T) {
	l, err := NewLoader()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const debounce = 20 * time.Millisecond
	create := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// write saves a.yaml in place, truncating it and writing it after more
	// than the debounce, as a slow editor or a loaded machine may (CI once
	// paused between the two for longer): the watcher may read it empty.
	write := func(name, content string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * debounce)
		if _, err := f.WriteString(content); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	create("a.yaml", watchRouteYAML("a", "80"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := l.Watch(ctx, dir, WatchOptions{Debounce: debounce})
	if err != nil {
		t.Fatal(err)
	}
	if got := routePort(t, w.Current(), "a"); got != 80 {
		t.Fatalf("initial port %d", got)
	}
	// saved is the first update that has read a.yaml's save: an update
	// from its emptied moment first keeps the last good objects, saying
	// why, and is skipped.
	saved := func(lastGood int32) *Update {
		t.Helper()
		for {
			u := nextUpdate(t, w)
			if !slices.ContainsFunc(u.Stale, func(s StaleObject) bool { return strings.HasPrefix(s.Reason, "the file is empty") }) {
				return u
			}
			if got := routePort(t, u, "a"); got != lastGood {
				t.Fatalf("a.yaml read empty: port %d, want the last good %d", got, lastGood)
			}
		}
	}

	write("a.yaml", watchRouteYAML("a", "81"))
	u := saved(80)
	if got := routePort(t, u, "a"); got != 81 {
		t.Errorf("after edit: port %d, want 81", got)
	}
	if len(u.Changed) != 1 || filepath.Base(u.Changed[0]) != "a.yaml" {
		t.Errorf("changed = %v", u.Changed)
	}

	// Break it: a syntax error keeps the last good version in effect.
	write("a.yaml", watchRouteYAML("a", "82")+"  bad: [\n")
	u = saved(81)
	if got := routePort(t, u, "a"); got != 81 {
		t.Errorf("broken file: port %d, want the last good 81", got)
	}
	if len(u.Stale) != 1 || u.Stale[0].Object.Name != "a" || u.Stale[0].Reason == "" {
		t.Errorf("stale = %+v", u.Stale)
	}
	if len(u.Result.Problems) == 0 {
		t.Error("the broken file's problem is not reported")
	}

	// An invalid value (port 0) is rejected by validation: same rule.
	write("a.yaml", watchRouteYAML("a", "0"))
	u = saved(81)
	if got := routePort(t, u, "a"); got != 81 {
		t.Errorf("invalid object: port %d, want 81", got)
	}

	// Fix it.
	write("a.yaml", watchRouteYAML("a", "83"))
	u = saved(81)
	if got := routePort(t, u, "a"); got != 83 || len(u.Stale) != 0 || len(u.Result.Problems) != 0 {
		t.Errorf("fixed: port %d stale %v problems %v", got, u.Stale, u.Result.Problems)
	}

	// A new directory and a file in it.
	create("sub/deeper/b.yaml", watchRouteYAML("b", "90"))
	u = nextUpdate(t, w)
	if got := routePort(t, u, "b"); got != 90 {
		// The directory may be created and the file written in two bursts.
		u = nextUpdate(t, w)
		if got := routePort(t, u, "b"); got != 90 {
			t.Errorf("new dir file: port %d", got)
		}
	}
	// Save by rename, as editors do.
	tmp := filepath.Join(dir, "sub", "deeper", ".b.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(watchRouteYAML("b", "91")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "sub", "deeper", "b.yaml")); err != nil {
		t.Fatal(err)
	}
	u = nextUpdate(t, w)
	if got := routePort(t, u, "b"); got != 91 {
		t.Errorf("rename save: port %d", got)
	}

	// Delete a file: its objects go away.
	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	// First held for the delete grace (marked stale), then gone.
	for u = nextUpdate(t, w); routePort(t, u, "a") != 0; u = nextUpdate(t, w) {
		if len(u.Stale) != 1 || !strings.Contains(u.Stale[0].Reason, "the file was deleted") {
			t.Fatalf("deleted file still serves route a without saying why: stale %+v", u.Stale)
		}
	}
}
