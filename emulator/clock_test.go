package emulator

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countClock makes the package's clock count its reads (clockNow two,
// clockSince one) until the test ends.
func countClock(t *testing.T) *atomic.Int64 {
	t.Helper()
	if raceEnabled {
		t.Skip("the clock's seam is swapped without synchronisation with goroutines other tests left")
	}
	var reads atomic.Int64
	now, since := clockNow, clockSince
	clockNow = func() time.Time { reads.Add(2); return now() }
	clockSince = func(t time.Time) time.Duration { reads.Add(1); return since(t) }
	t.Cleanup(func() { clockNow, clockSince = now, since })
	return &reads
}

// TestLaneClockReads holds the package's clock reads per lane request
// (BenchmarkLaneRaw's exchange): the write-stall check's one per write
// (twice: the head, the body), the upstream exchange's start and end, the
// trace's duration. Counts do not depend on the machine's load.
func TestLaneClockReads(t *testing.T) {
	_, roundTrip := laneRawSetup(t, "Content-Length: 256\r\n\r\n"+strings.Repeat("x", 256))
	reads := countClock(t)
	const n = 300
	for range n {
		roundTrip()
	}
	// The last request's trace may still be finishing: at most one
	// request's reads short, under half a read per request.
	if got, want := float64(reads.Load())/n, 5.0; got > want+0.5 || got < want-0.5 {
		t.Errorf("%.2f clock reads per lane request, want %v", got, want)
	}
}
