package engine_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

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
	lr := testkit.Loader(b).LoadDir(dir)
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
