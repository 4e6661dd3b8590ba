package engine_test

import (
	"cmp"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// benchSnapshot generates n HTTPRoutes with bench/genroutes and loads them.
func benchSnapshot(b *testing.B, n int) *engine.Snapshot {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "routes")
	cmd := exec.Command("go", "run", "../bench/genroutes", "-n", strconv.Itoa(n), "-o", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("genroutes: %v\n%s", err, out)
	}
	lr := testkit.Project(b).LoadDir(dir)
	if len(lr.Problems) > 0 {
		b.Fatalf("load problems: %v", lr.Problems[0])
	}
	return lr.Snapshot
}

func benchmarkTranslate(b *testing.B, n int) {
	snap := benchSnapshot(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := engine.Translate(snap, engine.Options{Now: goldenNow})
		if res.HasErrors() {
			b.Fatal("unexpected errors")
		}
	}
}

// BenchmarkTranslate1000HTTPRoutes measures translation alone (no loading).
func BenchmarkTranslate1000HTTPRoutes(b *testing.B) { benchmarkTranslate(b, 1000) }

// BenchmarkTranslate10000HTTPRoutes measures translation alone (no loading).
func BenchmarkTranslate10000HTTPRoutes(b *testing.B) { benchmarkTranslate(b, 10000) }

// withSavedRoute is snap with one more HTTPRoute, "saved", where the
// loader puts it (in namespace/name order); the other objects are snap's.
func withSavedRoute(b *testing.B, snap *engine.Snapshot) (*engine.Snapshot, *gwv1.HTTPRoute) {
	extra := benchSnapshot(b, 1).HTTPRoutes[0].DeepCopy()
	extra.Name = "saved"
	next := *snap
	at, _ := slices.BinarySearchFunc(snap.HTTPRoutes, extra, func(a, b *gwv1.HTTPRoute) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	next.HTTPRoutes = slices.Insert(slices.Clone(snap.HTTPRoutes), at, extra)
	return &next, extra
}

// benchmarkIncremental measures a reload after one new HTTPRoute is saved:
// TranslateTableFirst given the previous result, which patches the
// previous table (incremental_table.go); with tableOnly that alone (what
// up waits for before applying), else finish too (the full translation
// reusing the other routes' compiled rules).
func benchmarkIncremental(b *testing.B, n int, tableOnly bool) {
	snap := benchSnapshot(b, n)
	next, extra := withSavedRoute(b, snap)
	opts := engine.Options{Now: goldenNow}
	prev, finish := engine.TranslateTableFirst(nil, snap, opts)
	finish()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, finish := engine.TranslateTableFirst(prev, next, opts)
		if !res.Reuse.Patched || res.Reuse.VirtualHosts != len(extra.Spec.Hostnames) {
			b.Fatalf("reuse %+v: want the table patched, %d vhosts rebuilt", res.Reuse, len(extra.Spec.Hostnames))
		}
		if tableOnly {
			continue
		}
		finish()
		if res.Reuse.Reused != n {
			b.Fatalf("reused %d routes, want %d", res.Reuse.Reused, n)
		}
	}
}

// BenchmarkIncremental10000HTTPRoutes measures an incremental reload of
// 10,000 routes and one new one.
func BenchmarkIncremental10000HTTPRoutes(b *testing.B) { benchmarkIncremental(b, 10000, false) }

// BenchmarkIncrementalTable10000HTTPRoutes measures the same reload until
// its table.
func BenchmarkIncrementalTable10000HTTPRoutes(b *testing.B) { benchmarkIncremental(b, 10000, true) }
