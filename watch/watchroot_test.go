package watch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rootTest is a watcher on dir with helpers to change files and wait for
// states.
type rootTest struct {
	t   *testing.T
	dir string
	w   *Watcher
}

func startRootTest(t *testing.T, dir string, opts WatchOptions) *rootTest {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if opts.Debounce == 0 {
		opts.Debounce = 20 * time.Millisecond
	}
	w, err := newTestLoader(t).Watch(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &rootTest{t: t, dir: dir, w: w}
}

// write writes a route file under the watched path.
func (rt *rootTest) write(dir, name, route, port string) {
	rt.t.Helper()
	writeTree(rt.t, dir, map[string]string{name: watchRouteYAML(route, port)})
}

// waitFor returns the first update (after the ones already read) that
// satisfies ok, failing the test when none comes within d. It returns
// every update seen too.
func (rt *rootTest) waitFor(d time.Duration, what string, ok func(*Update) bool) (*Update, []*Update) {
	rt.t.Helper()
	deadline := time.After(d)
	var seen []*Update
	for {
		select {
		case u := <-rt.w.Updates():
			seen = append(seen, u)
			if ok(u) {
				return u, seen
			}
		case <-deadline:
			rt.t.Fatalf("no update with %s within %s (saw %d, current: problems %v)", what, d, len(seen), problemStrings("", rt.w.Current().Result.Problems))
			return nil, nil
		}
	}
}

// serves returns a predicate: route name is served with port.
func (rt *rootTest) serves(name string, port int32) func(*Update) bool {
	return func(u *Update) bool { return routePort(rt.t, u, name) == port }
}

func hasRootProblem(u *Update, text string) bool {
	for _, p := range u.Result.Problems {
		if strings.Contains(p.Message, text) {
			return true
		}
	}
	return false
}

// TestWatcherRootRecreated: `rm -rf dir; mkdir dir; cp … dir/`. While
// the folder is gone the last objects stay, with a problem saying so; once
// files are back they are served within a second, and later edits are
// followed.
func TestWatcherRootRecreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	rt := startRootTest(t, dir, WatchOptions{})
	rt.w.loader.warm() // as the watcher does in the background meanwhile
	rt.write(dir, "a.yaml", "a", "80")
	// The folder did not exist when the watch began: it is noticed.
	rt.waitFor(5*time.Second, "route a on 80", rt.serves("a", 80))

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	u, _ := rt.waitFor(5*time.Second, "the root missing", func(u *Update) bool { return u.Root == RootMissing })
	if routePort(t, u, "a") != 80 || !hasRootProblem(u, "still serving the 1 objects last loaded from it until it is back") {
		t.Errorf("root missing: port %d, problems %v", routePort(t, u, "a"), problemStrings("", u.Result.Problems))
	}
	if got := rt.w.Current(); got != u {
		t.Error("Current is not the missing state")
	}

	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the empty folder may be seen on its own
	returned := time.Now()
	rt.write(dir, "a.yaml", "a", "81")
	u, seen := rt.waitFor(5*time.Second, "route a on 81", rt.serves("a", 81))
	if took := time.Since(returned); took > time.Second {
		t.Errorf("serving again took %s after the files returned", took)
	}
	if hasRootProblem(u, "removed or renamed") {
		t.Errorf("the missing-root problem stayed: %v", problemStrings("", u.Result.Problems))
	}
	back := false
	for _, u := range seen {
		back = back || u.Root == RootBack
	}
	if !back {
		t.Error("no update said the root is back")
	}

	rt.write(dir, "a.yaml", "a", "82")
	rt.waitFor(5*time.Second, "an edit in the recreated folder", rt.serves("a", 82))
	rt.write(filepath.Join(dir, "sub"), "b.yaml", "b", "90")
	rt.waitFor(5*time.Second, "a new subdirectory's file", rt.serves("b", 90))
}

// TestWatcherRootSwapped: `mv dir dir.old && mv dir.new dir`. The new
// folder is loaded (even files with the same size and time) and its edits
// followed; edits in the old one, now elsewhere, no longer count.
func TestWatcherRootSwapped(t *testing.T) {
	parent := t.TempDir()
	dir, next, old := filepath.Join(parent, "dir"), filepath.Join(parent, "dir.new"), filepath.Join(parent, "dir.old")
	writeTree(t, dir, map[string]string{"a.yaml": watchRouteYAML("a", "80"), "sub/c.yaml": watchRouteYAML("c", "70")})
	writeTree(t, next, map[string]string{"a.yaml": watchRouteYAML("a", "81"), "sub/c.yaml": watchRouteYAML("c", "71")})
	// Same size and modification time as the old file: only the swap
	// tells that it is another file.
	mtime := time.Now().Add(-time.Hour)
	for _, p := range []string{filepath.Join(dir, "a.yaml"), filepath.Join(next, "a.yaml")} {
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	rt := startRootTest(t, dir, WatchOptions{})
	if routePort(t, rt.w.Current(), "a") != 80 {
		t.Fatal("initial state")
	}
	if err := os.Rename(dir, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, dir); err != nil {
		t.Fatal(err)
	}
	swapped := time.Now()
	rt.waitFor(5*time.Second, "route a from the new folder", func(u *Update) bool {
		return routePort(t, u, "a") == 81 && routePort(t, u, "c") == 71
	})
	if took := time.Since(swapped); took > time.Second {
		t.Errorf("swap took %s to be served", took)
	}

	rt.write(dir, "a.yaml", "a", "82")
	rt.waitFor(5*time.Second, "an edit in the new folder", rt.serves("a", 82))
	rt.write(dir, "sub/c.yaml", "c", "72")
	rt.waitFor(5*time.Second, "an edit in the new folder's subdirectory", rt.serves("c", 72))

	// The old folder is not watched any more.
	rt.write(old, "a.yaml", "a", "99")
	rt.write(old, "sub/c.yaml", "c", "99")
	select {
	case u := <-rt.w.Updates():
		t.Errorf("an edit in the old folder produced an update (changed %v)", u.Changed)
	case <-time.After(300 * time.Millisecond):
	}
	if routePort(t, rt.w.Current(), "a") != 82 {
		t.Error("the old folder's edit is served")
	}
}

// TestWatcherRootLater: `gwdev up later` on a folder two levels from
// existing reports it missing, then notices it.
func TestWatcherRootLater(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "later", "manifests")
	rt := startRootTest(t, dir, WatchOptions{})
	rt.w.loader.warm() // as the watcher does in the background meanwhile
	first := rt.w.Current()
	if first.Root != RootMissing || !hasRootProblem(first, "no such file or directory: waiting for it to appear") {
		t.Errorf("first state: root %v, problems %v", first.Root, problemStrings("", first.Result.Problems))
	}
	if err := os.Mkdir(filepath.Join(parent, "later"), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the watcher move to the new ancestor
	created := time.Now()
	rt.write(dir, "a.yaml", "a", "80")
	u, _ := rt.waitFor(5*time.Second, "route a", rt.serves("a", 80))
	if took := time.Since(created); took > time.Second {
		t.Errorf("took %s", took)
	}
	if len(u.Result.Problems) != 0 {
		t.Errorf("problems: %v", problemStrings("", u.Result.Problems))
	}
	rt.write(dir, "a.yaml", "a", "81")
	rt.waitFor(5*time.Second, "an edit", rt.serves("a", 81))
}

// TestWatcherIgnoresSiblings: the watch on the root's parent, there to
// see the root come and go, does not reload for changes beside the root.
func TestWatcherIgnoresSiblings(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "dir")
	writeTree(t, dir, map[string]string{"a.yaml": watchRouteYAML("a", "80")})
	rt := startRootTest(t, dir, WatchOptions{})
	writeTree(t, parent, map[string]string{"other.yaml": watchRouteYAML("x", "1"), "dir2/b.yaml": watchRouteYAML("b", "1")})
	select {
	case u := <-rt.w.Updates():
		t.Errorf("a sibling produced an update (changed %v)", u.Changed)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestWatcherParentRemoved: the root's parent goes too (`rm -rf
// project`), then both come back (`mkdir -p project/manifests`).
func TestWatcherParentRemoved(t *testing.T) {
	project := filepath.Join(t.TempDir(), "project")
	dir := filepath.Join(project, "manifests")
	writeTree(t, dir, map[string]string{"a.yaml": watchRouteYAML("a", "80")})
	rt := startRootTest(t, dir, WatchOptions{})
	if err := os.RemoveAll(project); err != nil {
		t.Fatal(err)
	}
	u, _ := rt.waitFor(5*time.Second, "the root missing", func(u *Update) bool { return u.Root == RootMissing })
	if routePort(t, u, "a") != 80 {
		t.Error("the routes went away with the folder")
	}
	back := time.Now()
	rt.write(dir, "a.yaml", "a", "81")
	rt.waitFor(5*time.Second, "route a on 81", rt.serves("a", 81))
	if took := time.Since(back); took > time.Second {
		t.Errorf("took %s", took)
	}
	rt.write(dir, "a.yaml", "a", "82")
	rt.waitFor(5*time.Second, "an edit", rt.serves("a", 82))
}

// TestWatcherRootFile: a root that is one file follows saves by rename,
// ignores its siblings, and may be deleted and written again.
func TestWatcherRootFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	writeTree(t, dir, map[string]string{"a.yaml": watchRouteYAML("a", "80")})
	rt := startRootTest(t, path, WatchOptions{})
	tmp := filepath.Join(dir, "tmp")
	if err := os.WriteFile(tmp, []byte(watchRouteYAML("a", "81")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	rt.waitFor(5*time.Second, "the save by rename", rt.serves("a", 81))
	writeTree(t, dir, map[string]string{"b.yaml": watchRouteYAML("b", "1")})
	select {
	case u := <-rt.w.Updates():
		t.Errorf("a sibling produced an update (changed %v)", u.Changed)
	case <-time.After(300 * time.Millisecond):
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	u, _ := rt.waitFor(5*time.Second, "the root missing", func(u *Update) bool { return u.Root == RootMissing })
	if routePort(t, u, "a") != 81 {
		t.Error("the route went away with the file")
	}
	rt.write(dir, "a.yaml", "a", "82")
	rt.waitFor(5*time.Second, "the file written again", rt.serves("a", 82))
}
