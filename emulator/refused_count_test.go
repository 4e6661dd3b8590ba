package emulator

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRefusalsCountedAtOnce: 100 datagrams refused within a second move
// gwdev_refused_total by 100 at once (the trace of the refusals is still
// rate-limited to one a second; the count is not).
func TestRefusalsCountedAtOnce(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	h := serveL4(t, Config{MaxUDPSessions: 1}, newTable(gateway("gw", "127.0.0.1",
		udpPort(p, udpListener("dns", streamRoute("UDPRoute", "dns", echo("udp-echo", 1)))))))
	adm := NewAdmin(h.s, nil)
	defer adm.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, err := ServeAdmin(ctx, "127.0.0.1:0", adm, AdminOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
	re := regexp.MustCompile(`gwdev_refused_total\{[^}]*proto="UDP"[^}]*\} (\d+)`)
	var got int
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if m := re.FindSubmatch(b); m != nil {
			got, _ = strconv.Atoi(string(m[1]))
		}
		if got == n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("gwdev_refused_total moved by %d for %d refused datagrams within a second", got, n)
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
