package emulator

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine"
)

// A thousand requests, each with a 1 MB header, leave the trace history
// small, and /traces answers fast without rendering the history whole
// (issue 12, finding 1: the heap reached 1.9 GB, and /traces 9.2 GB).
func TestHugeHeaderFloodKeepsTracesBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("sends 300 MB over loopback and measures time and memory (not with -short or -race)")
	}
	// Only /echo is routed: the flood gets 404s, traced with their headers
	// (the cheapest answer, so the test measures the traces).
	h := serve(t, func(p int32) *engine.Table {
		return table(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", rule("r", prefix("/echo"), echo("svc", 1)))))))
	})
	adm := NewAdmin(h.s)
	defer adm.Close()
	admin := httptest.NewServer(adm.Handler())
	defer admin.Close()

	big := strings.Repeat("h", 1<<20-100)
	// 300 requests by default (a few seconds; the old history kept 300 MB
	// of them); GWDEV_FLOOD=1000 repeats the measurement.
	n := 300
	if v, err := strconv.Atoi(os.Getenv("GWDEV_FLOOD")); err == nil && v > 0 {
		n = v
	}
	var conn net.Conn
	var br *bufio.Reader
	for i := range n {
		if conn == nil {
			c, err := net.Dial("tcp", net.JoinHostPort(h.ip, fmt.Sprint(h.port)))
			if err != nil {
				t.Fatal(err)
			}
			conn, br = c, bufio.NewReader(c)
		}
		// A raw request: net/http's client would refuse nothing, but this
		// keeps the test's own memory flat.
		if _, err := fmt.Fprintf(conn, "GET /flood/%d HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", i, big); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
		if resp.Close {
			conn.Close()
			conn = nil
		}
	}
	if conn != nil {
		conn.Close()
	}
	waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == fmt.Sprintf("/flood/%d", n-1) })
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("after %d requests with a 1 MB header: heap in use %d MB, %d traces", n, ms.HeapInuse>>20, len(h.s.Traces()))
	if ms.HeapInuse > 100<<20 {
		t.Errorf("heap in use %d MB after the flood, want under 100 MB", ms.HeapInuse>>20)
	}

	start := time.Now()
	resp, err := http.Get(admin.URL + "/traces")
	if err != nil {
		t.Fatal(err)
	}
	var ts []Trace
	err = json.NewDecoder(resp.Body).Decode(&ts)
	resp.Body.Close()
	took := time.Since(start)
	runtime.ReadMemStats(&ms)
	t.Logf("/traces: %d traces in %s; heap in use %d MB", len(ts), took, ms.HeapInuse>>20)
	if err != nil || len(ts) != n {
		t.Fatalf("/traces: %d traces, %v", len(ts), err)
	}
	if took > time.Second {
		t.Errorf("/traces took %s, want under a second", took)
	}
	if x := ts[n-1].RequestHeaders.Get("X-Big"); len(x) > TraceValueLimit+64 || !IsTruncated(x) {
		t.Errorf("X-Big kept as %d bytes", len(x))
	}
}
