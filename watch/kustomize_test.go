package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine"
)

// copyTree copies the folder src into dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestKustomizeOverlayIsBuilt(t *testing.T) {
	l := newTestLoader(t)
	dir := filepath.Join("testdata", "kustomize", "overlays", "dev")
	r := l.LoadDir(dir)
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	if len(r.Snapshot.HTTPRoutes) != 1 || len(r.Snapshot.Gateways) != 1 {
		t.Fatalf("want one Gateway and one HTTPRoute, got %d and %d", len(r.Snapshot.Gateways), len(r.Snapshot.HTTPRoutes))
	}
	route := r.Snapshot.HTTPRoutes[0]
	if route.Namespace != "dev" || len(route.Spec.Hostnames) != 1 || route.Spec.Hostnames[0] != "shop.dev.example.com" {
		t.Fatalf("the overlay's namespace and patch were not applied: %s/%s %v", route.Namespace, route.Name, route.Spec.Hostnames)
	}
	if _, ok := route.Annotations[originAnnotation]; ok {
		t.Errorf("the origin annotation gwdev asked for stays on the object: %v", route.Annotations)
	}
	src := r.Snapshot.SourceOf(engine.ObjectKey{Kind: "HTTPRoute", Namespace: "dev", Name: "shop"})
	want := filepath.Join("testdata", "kustomize", "base", "route.yaml")
	if src.File != want || src.Line != 1 || src.Column != 1 || src.Fields["spec.parentRefs[0]"] != (engine.FieldPos{Line: 7, Column: 7}) {
		t.Errorf("source = %s col %d (fields %v), want %s:1 col 1 with spec.parentRefs[0] at line 7 column 7", src, src.Column, src.Fields, want)
	}
}

func TestKustomizeRootWithBaseAndOverlayBuildsTheOverlayOnly(t *testing.T) {
	r := newTestLoader(t).LoadDir(filepath.Join("testdata", "kustomize"))
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	if n := r.Snapshot.Len(); n != 2 {
		t.Fatalf("want the overlay's 2 objects (the base is built as part of it), got %d", n)
	}
}

func TestKustomizeProblemsPointAtTheFileThatWroteTheField(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "kustomize"), dir)
	overlay := filepath.Join(dir, "overlays", "dev")
	// A bad hostname set by the patch, a bad port in the base.
	writeTree(t, overlay, map[string]string{"hostnames.yaml": strings.Replace(readFile(t, filepath.Join(overlay, "hostnames.yaml")), "shop.dev.example.com", "Shop_Dev", 1)})
	writeTree(t, dir, map[string]string{"base/gateway.yaml": strings.Replace(readFile(t, filepath.Join(dir, "base", "gateway.yaml")), "port: 80", "port: 0", 1)})
	r := newTestLoader(t).LoadDir(overlay)
	got := problemStrings(dir, r.Problems)
	wantHost := filepath.Join("overlays", "dev", "hostnames.yaml") + ":7:"
	wantPort := filepath.Join("base", "gateway.yaml") + ":10:"
	if len(got) != 2 || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, wantHost) }) ||
		!slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, wantPort) }) {
		t.Fatalf("problems = %q, want one at %s… (the patch) and one at %s… (the base)", got, wantHost, wantPort)
	}
}

func TestKustomizeBuildFailureNamesTheKustomization(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"kustomization.yaml": "resources:\n  - missing.yaml\n"})
	r := newTestLoader(t).LoadDir(dir)
	if len(r.Problems) != 1 || r.Problems[0].File != filepath.Join(dir, "kustomization.yaml") ||
		!strings.Contains(r.Problems[0].Message, "kustomize build failed") || !strings.Contains(r.Problems[0].Message, "missing.yaml") {
		t.Fatalf("problems = %v, want one at the kustomization naming missing.yaml", r.Problems)
	}
}

func TestNoKustomizeReadsFilesOneByOne(t *testing.T) {
	l := newTestLoader(t)
	l.NoKustomize = true
	r := l.LoadDir(filepath.Join("testdata", "kustomize", "overlays", "dev"))
	if !slices.ContainsFunc(r.Problems, func(p Problem) bool {
		return strings.HasSuffix(p.File, "kustomization.yaml") && strings.Contains(p.Message, "apiVersion")
	}) {
		t.Fatalf("with NoKustomize the kustomization file is read as a manifest; problems = %v", r.Problems)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestWatchRebuildsWhenTheBaseChanges watches an overlay whose base is
// outside the watched folder: saving the base rebuilds, and a broken base
// keeps the last good objects with the reason.
func TestWatchRebuildsWhenTheBaseChanges(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "kustomize"), dir)
	overlay := filepath.Join(dir, "overlays", "dev")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := newTestLoader(t).Watch(ctx, overlay, WatchOptions{Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if n := w.Current().Result.Snapshot.Len(); n != 2 {
		t.Fatalf("first load: %d objects, want 2 (problems %v)", n, w.Current().Result.Problems)
	}
	base := filepath.Join(dir, "base", "route.yaml")
	writeTree(t, dir, map[string]string{"base/route.yaml": strings.Replace(readFile(t, base), "port: 8080", "port: 9090", 1)})
	// Written in place: on a loaded machine the build may first run on the
	// emptied base (an update keeping the last good objects); the save's
	// update is the one that read it.
	port := func(u *Update) int32 {
		rs := u.Result.Snapshot.HTTPRoutes
		if len(rs) != 1 || len(rs[0].Spec.Rules) == 0 || len(rs[0].Spec.Rules[0].BackendRefs) == 0 || rs[0].Spec.Rules[0].BackendRefs[0].Port == nil {
			return 0
		}
		return *rs[0].Spec.Rules[0].BackendRefs[0].Port
	}
	u := waitUpdate(t, w, func(u *Update) bool { return port(u) == 9090 })
	if !slices.Contains(u.Changed, "kustomize build "+overlay) {
		t.Errorf("changed = %v, want the build", u.Changed)
	}
	writeTree(t, dir, map[string]string{"base/route.yaml": "kind: [\n"})
	u = waitUpdate(t, w, func(u *Update) bool { return len(u.Result.Problems) > 0 })
	if len(u.Stale) != 2 || u.Result.Snapshot.Len() != 2 {
		t.Fatalf("a broken base: problems %v, stale %v, %d objects; want a problem and the 2 last good objects kept", u.Result.Problems, u.Stale, u.Result.Snapshot.Len())
	}
}

// TestKustomizeBuildRecordsEveryFileItReads: bases, patches, components and
// generator sources are all inputs the watcher rebuilds on.
func TestKustomizeBuildRecordsEveryFileItReads(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "kustomize"), dir)
	writeTree(t, dir, map[string]string{
		"overlays/dev/kustomization.yaml": "namespace: dev\nresources: [../../base]\npatches: [{path: hostnames.yaml}]\n" +
			"components: [../../component]\nconfigMapGenerator: [{name: ca, files: [ca.crt]}]\n",
		"overlays/dev/ca.crt":          "not really a certificate\n",
		"component/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels: {team: shop}\n",
	})
	overlay := filepath.Join(dir, "overlays", "dev")
	b := buildKustomization(overlay, filepath.Join(overlay, "kustomization.yaml"), Consent{})
	if b.err != nil {
		t.Fatal(b.err)
	}
	for _, want := range []string{"overlays/dev/kustomization.yaml", "overlays/dev/hostnames.yaml", "overlays/dev/ca.crt",
		"component/kustomization.yaml", "base/kustomization.yaml", "base/route.yaml", "base/gateway.yaml"} {
		abs := filepath.Join(dir, filepath.FromSlash(want))
		if b.read[abs] == nil {
			t.Errorf("the build's inputs lack %s: %v", want, b.readFiles())
		}
	}
}
