package watch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// linkTree is a folder with symlinks into it and out of it:
//
//	site/a.yaml
//	site/inside.yaml -> a.yaml          (stays in the folder: no warning)
//	site/gw.yaml     -> ../shared/gw.yaml
//	site/routes      -> ../shared/routes
func linkTree(t *testing.T) (site, shared string) {
	t.Helper()
	parent := t.TempDir()
	site, shared = filepath.Join(parent, "site"), filepath.Join(parent, "shared")
	writeTree(t, site, map[string]string{"a.yaml": watchRouteYAML("a", "80")})
	writeTree(t, shared, map[string]string{"gw.yaml": watchRouteYAML("g", "70"), "routes/b.yaml": watchRouteYAML("b", "90")})
	for link, target := range map[string]string{"inside.yaml": "a.yaml", "gw.yaml": "../shared/gw.yaml", "routes": "../shared/routes"} {
		if err := os.Symlink(target, filepath.Join(site, link)); err != nil {
			t.Fatal(err)
		}
	}
	return site, shared
}

// TestSymlinksOutsideWarned: symlinks leading out of the folder are
// followed, each with a warning naming the link and its target.
func TestSymlinksOutsideWarned(t *testing.T) {
	site, shared := linkTree(t)
	r := newTestLoader(t).LoadDir(site)
	if got, want := routeNames(r.Snapshot), []string{"default/a", "default/b", "default/g"}; !cmp.Equal(got, want) {
		t.Errorf("routes = %v, want %v", got, want)
	}
	realShared, err := filepath.EvalSymlinks(shared)
	if err != nil {
		t.Fatal(err)
	}
	want := []Warning{
		{File: filepath.Join(site, "gw.yaml"), Target: filepath.Join(realShared, "gw.yaml"),
			Message: "symlink to " + filepath.Join(realShared, "gw.yaml") + ", outside the folder: followed"},
		{File: filepath.Join(site, "routes"), Target: filepath.Join(realShared, "routes"),
			Message: "symlink to " + filepath.Join(realShared, "routes") + ", outside the folder: followed"},
	}
	if d := cmp.Diff(want, r.Warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if !r.OK() {
		t.Errorf("problems: %v", problemStrings(site, r.Problems))
	}
}

// TestWatcherFollowsOutsideLinks: the watcher reports the same warnings
// and reloads when a file a symlink leads to is edited outside the folder.
func TestWatcherFollowsOutsideLinks(t *testing.T) {
	site, shared := linkTree(t)
	rt := startRootTest(t, site, WatchOptions{})
	if n := len(rt.w.Current().Result.Warnings); n != 2 {
		t.Errorf("%d warnings, want 2", n)
	}
	writeTree(t, shared, map[string]string{"gw.yaml": watchRouteYAML("g", "71")})
	rt.waitFor(5*time.Second, "the linked file's edit", rt.serves("g", 71))
	writeTree(t, shared, map[string]string{"routes/b.yaml": watchRouteYAML("b", "91")})
	rt.waitFor(5*time.Second, "an edit in the linked directory", rt.serves("b", 91))
}
