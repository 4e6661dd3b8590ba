package emulator

import (
	"strings"
	"testing"
)

// TestLaneAllocationsPerRequest holds the forwarding lane's allocations per
// request (BenchmarkLaneRaw's and BenchmarkLaneRawChunked's exchange: the
// raw client and backend allocate nothing) at what the lane's cuts left.
// Allocation counts do not depend on the machine's load.
func TestLaneAllocationsPerRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	for _, c := range []struct {
		name, framing string
		limit         float64
	}{
		{"content-length", "Content-Length: 256\r\n\r\n" + strings.Repeat("x", 256), 9},
		{"chunked", "Transfer-Encoding: chunked\r\n\r\n100\r\n" + strings.Repeat("x", 256) + "\r\n0\r\n\r\n", 13},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, roundTrip := laneRawSetup(t, c.framing)
			if n := testing.AllocsPerRun(500, roundTrip); n > c.limit {
				t.Errorf("%v allocations per request, want at most %v", n, c.limit)
			}
		})
	}
}
