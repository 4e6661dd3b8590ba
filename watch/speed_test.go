//go:build unix

package watch

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestLoadDirSpeed reports the cold-start wall time (validators compiled
// inside the timed section) of loading GWDEV_SPEED_ROUTES routes. Run it
// alone, in a fresh process:
//
//	GWDEV_SPEED_ROUTES=10000 go test -run TestLoadDirSpeed -v ./watch
func TestLoadDirSpeed(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("GWDEV_SPEED_ROUTES"))
	if err != nil || n <= 0 {
		t.Skip("set GWDEV_SPEED_ROUTES to run")
	}
	dir := t.TempDir()
	writeRoutes(t, dir, n)
	cpu0 := cpuTime()
	start := time.Now()
	l, err := NewLoader()
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

// cpuTime is the CPU time (user+system) used by the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
