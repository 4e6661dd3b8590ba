package watch

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/cputime"
)

// TestLoadDirSpeed reports the cold-start wall time (validators compiled
// inside the timed section) of loading GWDEV_SPEED_ROUTES routes. Run it
// alone, in a fresh process:
//
//	GWDEV_SPEED_ROUTES=10000 go test -run TestLoadDirSpeed -v ./watch
//
// GWDEV_SPEED_CRDS=v1.5.1-standard loads against that bundle (--crds).
func TestLoadDirSpeed(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("GWDEV_SPEED_ROUTES"))
	if err != nil || n <= 0 {
		t.Skip("set GWDEV_SPEED_ROUTES to run")
	}
	dir := t.TempDir()
	writeRoutes(t, dir, n)
	cpu0 := cpuTime()
	start := time.Now()
	var bundle *CRDBundle
	if name := os.Getenv("GWDEV_SPEED_CRDS"); name != "" { // like --crds
		if bundle, err = EmbeddedCRDBundle(name); err != nil {
			t.Fatal(err)
		}
	}
	l, err := NewLoaderFor(bundle)
	if err != nil {
		t.Fatal(err)
	}
	l.BulkLoad = loadGC()
	r := l.LoadDir(dir)
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	if len(r.Problems) > 0 || len(r.Snapshot.HTTPRoutes) != n {
		t.Fatalf("%d routes, problems: %v", len(r.Snapshot.HTTPRoutes), r.Problems)
	}
	t.Logf("loaded %d HTTPRoutes cold in %v wall, %v CPU", n, wall, cpu)
	cpu0, start = cpuTime(), time.Now()
	l.LoadDir(dir)
	t.Logf("loaded %d HTTPRoutes again (warm) in %v wall, %v CPU", n, time.Since(start), cpuTime()-cpu0)
}

// cpuTime is the CPU time used by the process so far (0 where it is not
// measured).
func cpuTime() time.Duration {
	d, _ := cputime.Process()
	return d
}
