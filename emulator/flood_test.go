package emulator

import (
	"fmt"
	"net"
	"net/http"
	"runtime"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/testkit"
)

// A thousand requests, each with a 1 MB header, leave the trace history
// small (issue 12, finding 1: the heap reached 1.9 GB), each trace's header
// cut. That /traces then answers fast without rendering the history whole
// (the 9.2 GB) is emulator/admin's TestHugeHeaderFloodTracesServedFast.
func TestHugeHeaderFloodKeepsTracesBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("sends 300 MB over loopback and measures time and memory (not with -short or -race)")
	}
	// Only /echo is routed: the flood gets 404s, traced with their headers
	// (the cheapest answer, so the test measures the traces).
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", rule("r", prefix("/echo"), echo("svc", 1)))))))
	})
	// 300 requests by default (the old history kept 300 MB of them).
	n := testkit.HugeHeaderFlood(t, net.JoinHostPort(h.ip, fmt.Sprint(h.port)), http.StatusNotFound)
	waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == fmt.Sprintf("/flood/%d", n-1) })
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	ts := h.s.Traces()
	t.Logf("after %d requests with a 1 MB header: heap in use %d MB, %d traces", n, ms.HeapInuse>>20, len(ts))
	if ms.HeapInuse > 100<<20 {
		t.Errorf("heap in use %d MB after the flood, want under 100 MB", ms.HeapInuse>>20)
	}
	if len(ts) != n {
		t.Fatalf("%d traces kept, want %d", len(ts), n)
	}
	if x := ts[n-1].RequestHeaders.Get("X-Big"); len(x) > TraceValueLimit+64 || !IsTruncated(x) {
		t.Errorf("X-Big kept as %d bytes", len(x))
	}
}
