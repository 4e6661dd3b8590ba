package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Routing test files (gwdev test) sit beside the manifests and are never
// loaded as manifests, not even a broken one, neither by a load nor by the
// watcher.
func TestRoutingTestFilesAreNotManifests(t *testing.T) {
	dir, r := loadTree(t, map[string]string{
		"app.gwtest.yaml":       "cases:\n- request: {url: http://a.example:8080/}\n  expect: {status: 200}\n",
		"sub/broken.GwTest.yml": "cases: [unclosed\n",
		"route.yaml":            "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec: {}\n",
	})
	if len(r.Problems) > 0 || r.Files != 1 {
		t.Errorf("test files loaded as manifests: %d files, %v", r.Files, r.Problems)
	}
	for _, n := range []string{"app.gwtest.yaml", "x.GWTEST.YML"} {
		if IsManifestName(n) || !IsRoutingTestName(n) {
			t.Errorf("%s: IsManifestName %v, IsRoutingTestName %v", n, IsManifestName(n), IsRoutingTestName(n))
		}
	}
	if !IsManifestName("gwtest.yaml") || IsRoutingTestName("gwtest.yaml") {
		t.Error("gwtest.yaml (no dot before gwtest) is a manifest")
	}
	// A test file saved while watching starts no reload.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := newTestLoader(t).Watch(ctx, dir, WatchOptions{Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.gwtest.yaml"), []byte("cases: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// It is told on TestFiles instead, once for its burst.
	select {
	case u := <-w.Updates():
		t.Errorf("a test file started a reload: %v", u.Changed)
	case paths := <-w.TestFiles():
		if want := []string{filepath.Join(dir, "new.gwtest.yaml")}; !slices.Equal(paths, want) {
			t.Errorf("TestFiles: %v, want %v", paths, want)
		}
	case <-time.After(5 * time.Second):
		t.Error("the saved test file was not told on TestFiles")
	}
	select {
	case u := <-w.Updates():
		t.Errorf("a test file started a reload: %v", u.Changed)
	case paths := <-w.TestFiles():
		t.Errorf("told twice: %v", paths)
	case <-time.After(300 * time.Millisecond):
	}
}
