package cputime

import (
	"runtime"
	"testing"
	"time"
)

func TestProcessCountsWork(t *testing.T) {
	before, ok := Process()
	if !ok {
		t.Skip("CPU time not measured on " + runtime.GOOS)
	}
	// Spin until the process has used 50 ms more CPU, or give up after a
	// minute of wall time (a clock that does not move).
	x := 0
	for start := time.Now(); time.Since(start) < time.Minute; {
		for i := range 1 << 20 {
			x += i
		}
		if now, _ := Process(); now-before >= 50*time.Millisecond {
			return
		}
	}
	t.Fatalf("CPU time did not grow by 50 ms in a minute of spinning (%d)", x)
}
