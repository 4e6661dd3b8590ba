package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gwdev/gwdev/engine"
)

func route(name string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: %s
spec:
  rules:
  - backendRefs:
    - name: web
      port: 80
`, name)
}

func routeNames(s *engine.Snapshot) []string {
	var out []string
	for _, r := range s.HTTPRoutes {
		out = append(out, r.Namespace+"/"+r.Name)
	}
	return out
}

// sourceMap is s's sources as a map, whether s holds a map or a list.
func sourceMap(s *engine.Snapshot) map[engine.ObjectKey]engine.Source {
	out := map[engine.ObjectKey]engine.Source{}
	s.EachSource(func(k engine.ObjectKey, src engine.Source) { out[k] = src })
	return out
}

func sourceLines(s *engine.Snapshot) map[string]string {
	out := map[string]string{}
	s.EachSource(func(k engine.ObjectKey, src engine.Source) {
		out[k.String()] = filepath.Base(src.File) + ":" + fmt.Sprint(src.Line)
	})
	return out
}

// TestDocumentsListsAndJSON covers multi-document files (with empty
// documents and comments), kind: List, typed lists and JSON, each object
// remembering the line where it starts.
func TestDocumentsListsAndJSON(t *testing.T) {
	dir, r := loadTree(t, map[string]string{
		"multi.yaml": `# leading comment
---
` + route("a") + `---
# only a comment
---

---
` + route("b"),
		"list.yaml": `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: in-list
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata:
    name: c
    namespace: team
  spec: {}
`,
		"typed-list.yml": `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRouteList
items:
- metadata:
    name: d
  spec: {}
`,
		"route.json": `{
	"apiVersion": "gateway.networking.k8s.io/v1",
	"kind": "HTTPRoute",
	"metadata": {"name": "e"},
	"spec": {"hostnames": ["json.example.com"]}
}
`,
	})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", problemStrings(dir, r.Problems))
	}
	want := map[string]string{
		"HTTPRoute/default/a":       "multi.yaml:3",
		"HTTPRoute/default/b":       "multi.yaml:17",
		"ConfigMap/default/in-list": "list.yaml:4",
		"HTTPRoute/team/c":          "list.yaml:8",
		"HTTPRoute/default/d":       "typed-list.yml:4",
		"HTTPRoute/default/e":       "route.json:1",
	}
	if diff := cmp.Diff(want, sourceLines(r.Snapshot)); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if r.Files != 4 {
		t.Errorf("Files = %d, want 4", r.Files)
	}
	if got := r.Snapshot.HTTPRoutes[3].Spec.Hostnames; r.Snapshot.HTTPRoutes[3].Name != "e" || len(got) != 1 || got[0] != "json.example.com" {
		t.Errorf("JSON route hostnames = %v", got)
	}
}

// TestSkippedFiles checks which directory entries are never read.
func TestSkippedFiles(t *testing.T) {
	bad := "this is: not: valid: yaml"
	dir, r := loadTree(t, map[string]string{
		"app/route.yaml":      route("kept"),
		"app/.hidden.yaml":    bad,
		".git/config.yaml":    bad,
		"app/.cache/x.yaml":   bad,
		"app/route.yaml~":     bad,
		"app/.route.yaml.swp": bad,
		"app/route.yaml.swp":  bad,
		"app/route.yaml.swx":  bad,
		"app/#route.yaml#":    bad,
		"app/.#route.yaml":    bad,
		"app/4913":            bad,
		"app/notes.txt":       bad,
		"app/README.md":       bad,
		"app/deep/more.YML":   route("upper-case-ext"),
	})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", problemStrings(dir, r.Problems))
	}
	if got, want := routeNames(r.Snapshot), []string{"default/kept", "default/upper-case-ext"}; !cmp.Equal(got, want) {
		t.Errorf("routes = %v, want %v", got, want)
	}
	if r.Files != 2 {
		t.Errorf("Files = %d, want 2", r.Files)
	}
}

// TestUnknownKindsAndVersions: unknown kinds are listed, unknown versions
// of known kinds or groups are problems.
func TestUnknownKindsAndVersions(t *testing.T) {
	dir, r := loadTree(t, map[string]string{"m.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XFuture
metadata:
  name: p
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: GRPCRoute
metadata:
  name: old-grpc
---
apiVersion: gateway.networking.k8s.io/v2
kind: HTTPRoute
metadata:
  name: future
---
apiVersion: v2
kind: Service
metadata:
  name: svc
---
apiVersion: gateway.networking.k8s.io/v9
kind: Mystery
metadata:
  name: m
`})
	wantSkipped := []Skipped{
		{File: filepath.Join(dir, "m.yaml"), Line: 1, APIVersion: "apps/v1", Kind: "Deployment", Namespace: "apps", Name: "web"},
		{File: filepath.Join(dir, "m.yaml"), Line: 7, APIVersion: "gateway.networking.x-k8s.io/v1alpha1", Kind: "XFuture", Name: "p"},
	}
	if diff := cmp.Diff(wantSkipped, r.Skipped); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
	want := []string{
		`m.yaml:12:1: GRPCRoute/old-grpc: apiVersion: no kind "GRPCRoute" is registered for version "gateway.networking.k8s.io/v1alpha2"; gwdev knows gateway.networking.k8s.io/v1`,
		`m.yaml:17:1: HTTPRoute/future: apiVersion: no kind "HTTPRoute" is registered for version "gateway.networking.k8s.io/v2"; gwdev knows gateway.networking.k8s.io/v1, gateway.networking.k8s.io/v1beta1`,
		`m.yaml:22:1: Service/svc: apiVersion: no kind "Service" is registered for version "v2"; gwdev knows v1`,
		`m.yaml:27:1: Mystery/m: apiVersion: no kind "Mystery" is registered for version "gateway.networking.k8s.io/v9"`,
	}
	if diff := cmp.Diff(want, problemStrings(dir, r.Problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if r.Problems[0].Field != "apiVersion" || r.Problems[0].Object != (engine.ObjectKey{Kind: "GRPCRoute", Name: "old-grpc"}) {
		t.Errorf("problem fields = %+v", r.Problems[0])
	}
}

// TestSyntaxErrorAmongGoodDocuments: a broken document is reported at the
// parser's line and column; the other documents of the file still load.
func TestSyntaxErrorAmongGoodDocuments(t *testing.T) {
	dir, r := loadTree(t, map[string]string{"m.yaml": route("first") + `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: broken
data:
  key: value: other
---
` + route("last") + `---
apiVersion: v1
kind: ConfigMap
metadata: {name: [unclosed
`})
	want := []string{
		"m.yaml:16:13: yaml: mapping values are not allowed in this context",
		"m.yaml:31:1: yaml: did not find expected ',' or ']'",
	}
	got := problemStrings(dir, r.Problems)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if got, want := routeNames(r.Snapshot), []string{"default/first", "default/last"}; !cmp.Equal(got, want) {
		t.Errorf("routes = %v, want %v", got, want)
	}
}

// TestFileProblems covers binary files, files over the size limit, a
// symlink loop and a missing root.
func TestFileProblems(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"ok/route.yaml": route("ok")})
	if err := os.WriteFile(filepath.Join(dir, "ok", "image.yaml"), []byte("apiVersion: v1\x00\x01\x02"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok", "latin1.yaml"), []byte("name: caf\xe9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "ok", "big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	if err := os.Symlink("..", filepath.Join(dir, "ok", "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.yaml", filepath.Join(dir, "ok", "a.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.yaml", filepath.Join(dir, "ok", "b.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "ok", "route.yaml"), filepath.Join(dir, "alias.yaml")); err != nil {
		t.Fatal(err)
	}

	done := make(chan *LoadResult)
	go func() { done <- newTestLoader(t).LoadDir(dir) }()
	var r *LoadResult
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("LoadDir hangs on a symlink loop")
	}
	want := []string{
		"ok/a.yaml: symlink loop: too many levels of symbolic links; not followed",
		"ok/b.yaml: symlink loop: too many levels of symbolic links; not followed",
		"ok/big.yaml: file too large: 10485761 bytes is over the 10 MiB (10485760 bytes) limit",
		"ok/image.yaml: binary file: not UTF-8 text; only YAML and JSON manifests are read",
		"ok/latin1.yaml: binary file: not UTF-8 text; only YAML and JSON manifests are read",
		fmt.Sprintf("ok/up: symlink loop: %s points back to %s; not followed", filepath.Join(dir, "ok", "up"), dir),
	}
	if diff := cmp.Diff(want, problemStrings(dir, r.Problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// alias.yaml and ok/route.yaml are one file: read once.
	if got := routeNames(r.Snapshot); !cmp.Equal(got, []string{"default/ok"}) {
		t.Errorf("routes = %v", got)
	}

	missing := newTestLoader(t).LoadDir(filepath.Join(dir, "nope"))
	if got := problemStrings(dir, missing.Problems); !cmp.Equal(got, []string{"nope: no such file or directory"}) {
		t.Errorf("missing root: %v", got)
	}
}

// TestLoadSingleFileAndBytes: a root that is a file is loaded whatever its
// name; LoadBytes loads standard input under the name "-".
func TestLoadSingleFileAndBytes(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"manifest.txt": route("from-file")})
	r := newTestLoader(t).LoadDir(filepath.Join(dir, "manifest.txt"))
	if got := routeNames(r.Snapshot); !cmp.Equal(got, []string{"default/from-file"}) || len(r.Problems) > 0 {
		t.Errorf("routes = %v, problems = %v", got, r.Problems)
	}

	r = newTestLoader(t).LoadBytes("-", []byte("\xef\xbb\xbf"+route("stdin")+"---\nkind: Oops\n"))
	if got := routeNames(r.Snapshot); !cmp.Equal(got, []string{"default/stdin"}) {
		t.Errorf("routes = %v", got)
	}
	want := []Problem{{File: "-", Line: 11, Column: 1, Object: engine.ObjectKey{Kind: "Oops"}, Field: "apiVersion", Message: "apiVersion: Required value", Kind: ProblemRequired}}
	if diff := cmp.Diff(want, r.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if src := r.Snapshot.SourceOf(engine.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: "stdin"}).At(""); src.File != "-" || src.Line != 1 {
		t.Errorf("source = %+v", src)
	}
	if r.Files != 1 {
		t.Errorf("Files = %d", r.Files)
	}
}

// TestDeterministicOrder: whatever the file layout, each Snapshot slice is
// sorted by namespace/name, and loading twice gives the same result.
func TestDeterministicOrder(t *testing.T) {
	files := map[string]string{}
	var docs []string
	for i, ns := range []string{"zeta", "alpha", "default", "mid"} {
		for j, name := range []string{"web", "api", "a-first", "zz"} {
			doc := strings.Replace(route(name), "metadata:\n", "metadata:\n  namespace: "+ns+"\n", 1)
			if (i+j)%2 == 0 {
				files[fmt.Sprintf("d%d/f%d.yaml", j, i)] = doc
			} else {
				docs = append(docs, doc)
			}
		}
	}
	files["all.yaml"] = strings.Join(docs, "---\n")
	dir, first := loadTree(t, files)
	if len(first.Problems) > 0 {
		t.Fatalf("problems: %v", problemStrings(dir, first.Problems))
	}
	want := []string{
		"alpha/a-first", "alpha/api", "alpha/web", "alpha/zz",
		"default/a-first", "default/api", "default/web", "default/zz",
		"mid/a-first", "mid/api", "mid/web", "mid/zz",
		"zeta/a-first", "zeta/api", "zeta/web", "zeta/zz",
	}
	if diff := cmp.Diff(want, routeNames(first.Snapshot)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	second := newTestLoader(t).LoadDir(dir)
	if diff := cmp.Diff(sourceLines(first.Snapshot), sourceLines(second.Snapshot)); diff != "" {
		t.Errorf("second load differs:\n%s", diff)
	}
}

// TestMerge: per-file results merge into what LoadDir gives, and a
// duplicate object keeps its first definition.
func TestMerge(t *testing.T) {
	dir, all := loadTree(t, map[string]string{
		"a.yaml": route("dup") + "---\n" + route("only-a"),
		"b.yaml": "# b\n" + route("dup") + "---\nkind: Broken\n",
	})
	want := []string{
		"b.yaml:2:1: HTTPRoute/default/dup: HTTPRoute/default/dup is already defined at " + filepath.Join(dir, "a.yaml") + ":1; this definition is ignored",
		"b.yaml:12:1: Broken: apiVersion: Required value",
	}
	if diff := cmp.Diff(want, problemStrings(dir, all.Problems)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	l := newTestLoader(t)
	var parts []*LoadResult
	for _, name := range []string{"b.yaml", "a.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, l.LoadBytes(filepath.Join(dir, name), data))
	}
	merged := Merge(append(parts, nil)...)
	if diff := cmp.Diff(problemStrings(dir, all.Problems), problemStrings(dir, merged.Problems)); diff != "" {
		t.Errorf("merged problems differ:\n%s", diff)
	}
	if diff := cmp.Diff(sourceLines(all.Snapshot), sourceLines(merged.Snapshot)); diff != "" {
		t.Errorf("merged sources differ:\n%s", diff)
	}
	if merged.Files != 2 || !cmp.Equal(routeNames(merged.Snapshot), []string{"default/dup", "default/only-a"}) {
		t.Errorf("merged: files %d routes %v", merged.Files, routeNames(merged.Snapshot))
	}
	// Merging a merged result again changes nothing.
	again := Merge(merged)
	if diff := cmp.Diff(problemStrings(dir, merged.Problems), problemStrings(dir, again.Problems)); diff != "" {
		t.Errorf("re-merge differs:\n%s", diff)
	}
}

// TestLargeFile loads a single 5 MB file of valid YAML (1 MB under the race
// detector or -short).
func TestLargeFile(t *testing.T) {
	size := 5 << 20
	if raceEnabled || testing.Short() {
		size = 1 << 20
	}
	var b strings.Builder
	n := 0
	for b.Len() < size {
		b.WriteString(routeYAML(n))
		b.WriteString("---\n")
		n++
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"big.yaml": b.String()})
	start, cpu0 := time.Now(), cpuTime()
	r := newTestLoader(t).LoadDir(dir)
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems[:1])
	}
	if len(r.Snapshot.HTTPRoutes) != n {
		t.Errorf("loaded %d routes, want %d", len(r.Snapshot.HTTPRoutes), n)
	}
	if last := r.Snapshot.SourceOf(engine.ObjectKey{Kind: "HTTPRoute", Namespace: fmt.Sprintf("team-%d", (n-1)/10), Name: fmt.Sprintf("route-%d", n-1)}); last.Line == 0 {
		t.Errorf("last route has no source line")
	}
	t.Logf("%d bytes, %d routes in %v wall, %v CPU", b.Len(), n, elapsed, cpu)
	// The limit is on CPU time, which other processes on a loaded machine
	// do not stretch as they do wall time (a load of 20 took one run past a
	// 20 s wall-clock limit); it catches a loader gone quadratic.
	if !raceEnabled && cpu > 20*time.Second {
		t.Errorf("loading 5 MB took %v of CPU", cpu)
	}
}
