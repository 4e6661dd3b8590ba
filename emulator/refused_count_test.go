package emulator

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRefusalsCountedAtOnce: 100 datagrams refused within a second move
// the listener's refusal count, which the admin API exposes as
// gwdev_refused_total, by 100 at once (the trace of the refusals is still
// rate-limited to one a second; the count is not).
func TestRefusalsCountedAtOnce(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	h := serveL4(t, Config{MaxUDPSessions: 1}, newTable(gateway("gw", "127.0.0.1",
		udpPort(p, udpListener("dns", streamRoute("UDPRoute", "dns", echo("udp-echo", 1)))))))
	hold, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	_, _ = io.WriteString(hold, "hold the one session")
	_ = hold.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := hold.Read(make([]byte, 64)); err != nil {
		t.Fatalf("the session within the limit: %v", err)
	}
	const n = 100
	for i := range n {
		c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fmt.Fprintf(c, "over %d", i)
		c.Close()
	}
	key := RefusedKey{Gateway: "gateway/default/gw", Listener: "gateway/default/gw/listener/dns", Proto: "UDP"}
	var got int64
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		counts := h.s.RefusedCounts()
		if got = counts[key]; got == n && len(counts) == 1 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("the refusal count moved by %d for %d refused datagrams within a second (%v)", got, n, h.s.RefusedCounts())
}

// TestBadHTTP2PrefaceRefused: "PRI * HTTP/2.0" followed by anything but the
// rest of the HTTP/2 preface is no request: it is refused (400, connection
// closed) and never forwarded to a backend as an HTTP/1.1 request.
func TestBadHTTP2PrefaceRefused(t *testing.T) {
	var got atomic.Int64
	backend, _ := connCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		fmt.Fprintf(w, "backend got %s %s", r.Method, r.RequestURI)
	})
	h := servePooled(t, backend.Listener.Addr().String())
	for _, garbage := range []string{"GARBAGE\r\n\r\n", "XX\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"} {
		c := dialTCP(t, h.port)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "PRI * HTTP/2.0\r\n\r\n"+garbage); err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(c)
		c.Close()
		if !strings.HasPrefix(string(b), "HTTP/1.1 400 ") || strings.Contains(string(b), "backend got") {
			t.Errorf("preface then %q: answer %q, want a 400 from the gateway", garbage, b)
		}
	}
	if n := got.Load(); n != 0 {
		t.Errorf("the backend got %d requests", n)
	}
}
