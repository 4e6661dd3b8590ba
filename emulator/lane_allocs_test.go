package emulator

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
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
		{"content-length", "Content-Length: 256\r\n\r\n" + strings.Repeat("x", 256), 0},
		{"chunked", "Transfer-Encoding: chunked\r\n\r\n100\r\n" + strings.Repeat("x", 256) + "\r\n0\r\n\r\n", 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, roundTrip := laneRawSetup(t, c.framing)
			if n := testing.AllocsPerRun(500, roundTrip); n > c.limit {
				t.Errorf("%v allocations per request, want at most %v", n, c.limit)
			}
		})
	}
}

// TestReusedRequestTracedAsSent: the fast path serves a keep-alive
// client's lane requests with one request, header map and value array
// (h1's request slots): each trace holds the header its own request sent,
// redacted, never the one the connection's redaction memo kept from an
// earlier request whose map the next one took over.
func TestReusedRequestTracedAsSent(t *testing.T) {
	h, _ := laneRawSetup(t, "Content-Length: 2\r\n\r\nok")
	c, err := net.Dial("tcp", net.JoinHostPort(h.ip, strconv.Itoa(int(h.port))))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	tags := []string{"one", "one", "two", "three", "three", "one"}
	served := h.s.laneServed.Load()
	for i, tag := range tags {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		head := "GET /api/" + strconv.Itoa(i) + " HTTP/1.1\r\nHost: api.example.com\r\nX-Tag: " + tag +
			"\r\nAuthorization: Bearer SECRET" + tag + "\r\n\r\n"
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		if st, err := readRawAnswer(br); err != nil || st != 200 {
			t.Fatalf("request %d: status %d, %v", i, st, err)
		}
	}
	if got := h.s.laneServed.Load() - served; got != int64(len(tags)) {
		t.Fatalf("the lane served %d of %d requests", got, len(tags))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var mine []Trace
		for _, tr := range h.s.Traces() {
			if tr.Client == c.LocalAddr().String() {
				mine = append(mine, tr)
			}
		}
		if len(mine) == len(tags) {
			for i, tr := range mine {
				if tr.Path != "/api/"+strconv.Itoa(i) || tr.RequestHeaders.Get("X-Tag") != tags[i] ||
					strings.Contains(tr.RequestHeaders.Get("Authorization"), "SECRET") {
					t.Errorf("trace %d: path %s, X-Tag %q, Authorization %q; want X-Tag %q, redacted", i, tr.Path,
						tr.RequestHeaders.Get("X-Tag"), tr.RequestHeaders.Get("Authorization"), tags[i])
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d traces of the connection, want %d", len(mine), len(tags))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
