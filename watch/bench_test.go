package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
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
