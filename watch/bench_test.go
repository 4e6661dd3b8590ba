package watch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
	"time"
)

// writeRoutes writes n realistic HTTPRoutes (2 rules, matches, a filter,
// weighted backendRefs), ten per directory, plus their Gateway.
func writeRoutes(tb testing.TB, dir string, n int) {
	tb.Helper()
	gw := `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  namespace: apps
spec:
  gatewayClassName: gwdev
  listeners:
  - name: http
    port: 80
    protocol: HTTP
    allowedRoutes:
      namespaces:
        from: All
`
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(gw), 0o644); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("team-%03d", i/10))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("route-%05d.yaml", i)), []byte(routeYAML(i)), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func routeYAML(i int) string {
	return fmt.Sprintf(`# route %[1]d
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: route-%[1]d
  namespace: team-%[2]d
  labels:
    app: app-%[1]d
spec:
  parentRefs:
  - name: gw
    namespace: apps
    sectionName: http
  hostnames:
  - "app-%[1]d.example.com"
  rules:
  - matches:
    - path:
        type: PathPrefix
        value: /api
      headers:
      - name: x-env
        value: canary
    - path:
        type: Exact
        value: /v2/api
      method: POST
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        add:
        - name: x-route
          value: route-%[1]d
    backendRefs:
    - name: api-%[1]d
      port: 8080
      weight: 90
    - name: api-canary-%[1]d
      port: 8080
      weight: 10
  - matches:
    - path:
        type: PathPrefix
        value: /
    backendRefs:
    - name: web-%[1]d
      port: 80
`, i, i/10)
}

func benchmarkLoadDir(b *testing.B, n int) {
	dir := b.TempDir()
	writeRoutes(b, dir, n)
	l, err := NewLoader()
	if err != nil {
		b.Fatal(err)
	}
	l.BulkLoad = loadGC()
	b.ResetTimer()
	for b.Loop() {
		r := l.LoadDir(dir)
		if len(r.Problems) > 0 || len(r.Snapshot.HTTPRoutes) != n {
			b.Fatalf("%d routes, problems: %v", len(r.Snapshot.HTTPRoutes), r.Problems)
		}
	}
}

// BenchmarkLoadDir1000HTTPRoutes measures loading and validating 1,000
// HTTPRoute files (validators already compiled; see TestLoadDirSpeed for
// the cold-start wall time).
func BenchmarkLoadDir1000HTTPRoutes(b *testing.B) { benchmarkLoadDir(b, 1000) }

// BenchmarkLoadDir10000HTTPRoutes is the same with 10,000 routes.
func BenchmarkLoadDir10000HTTPRoutes(b *testing.B) { benchmarkLoadDir(b, 10000) }

// loadGC is what the CLI sets as BulkLoad (cmd/gwdev/gc.go, simplified for
// one load at a time), so that load timings here match `gwdev`'s: the GC
// target is 200% while a load runs.
func loadGC() func() func() {
	return func() func() {
		prev := debug.SetGCPercent(200)
		return func() { debug.SetGCPercent(prev) }
	}
}

// benchmarkWatchSave is the watcher's update after one saved file (a new
// HTTPRoute renamed into place, as editors and bench/reloadprobe save) in a
// folder of n HTTPRoutes from bench/genroutes (50 a file, their Services,
// one Gateway): the walk, loading the file and the new Snapshot.
func benchmarkWatchSave(b *testing.B, n int) {
	dir := genRoutes(b, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := newTestLoader(b).Watch(ctx, dir, WatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var took time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("probe-%d", i)
		doc := fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: team-0}\nspec:\n  parentRefs: [{name: shared, namespace: infra}]\n  hostnames: [%s.example.com]\n  rules:\n  - backendRefs: [{name: app-0, port: 8080}]\n", name, name)
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, []byte(doc), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name+".yaml")); err != nil {
			b.Fatal(err)
		}
		u := <-w.Updates()
		if len(u.Changed) == 0 || len(u.Result.Problems) > 0 {
			b.Fatalf("update %d: changed %v, problems %v", i, u.Changed, u.Result.Problems)
		}
		took += u.Took
	}
	b.ReportMetric(float64(took.Microseconds())/1000/float64(b.N), "load-ms/op")
}

// BenchmarkWatchSave10000HTTPRoutes is one saved file's update with 10,000
// HTTPRoutes (bench/reload.sh's folder).
func BenchmarkWatchSave10000HTTPRoutes(b *testing.B) { benchmarkWatchSave(b, 10000) }

// genRoutes writes bench/genroutes' folder of n HTTPRoutes and returns it.
func genRoutes(b *testing.B, n int) string {
	dir := filepath.Join(b.TempDir(), "routes")
	cmd := exec.Command("go", "run", "../bench/genroutes", "-n", strconv.Itoa(n), "-o", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("genroutes: %v\n%s", err, out)
	}
	return dir
}
