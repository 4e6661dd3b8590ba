package app_test

import (
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
)

// BenchmarkOnce10000HTTPRoutes measures what `gwdev check` does before it
// prints, on bench/genroutes' 10,000 HTTPRoutes: app.Once, loading and
// translating (the validators compiled again each time, as in a new
// process). Beside B/op it reports peak-heap-MB, the most heap objects
// seen while Once runs (runtime/metrics, sampled every millisecond): what
// bench/weight.sh's peak RSS follows, without the binary's pages.
//
//	go test ./internal/app -run '^$' -bench Once10000 -benchtime 3x
func BenchmarkOnce10000HTTPRoutes(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "routes")
	cmd := exec.Command("go", "run", "../../bench/genroutes", "-n", "10000", "-o", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("genroutes: %v\n%s", err, out)
	}
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := app.Once([]string{dir}, project.Flags{}, app.OnceOptions{Where: dir})
		if err != nil {
			b.Fatal(err)
		}
		if n := st.Result.Objects.Len(); n < 10000 {
			b.Fatalf("%d objects, want at least 10,000", n)
		}
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
}
