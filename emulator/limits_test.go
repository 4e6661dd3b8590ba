package emulator

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/net/websocket"
)

// Connections over one listener's limit are refused, traced and counted;
// the other listeners keep answering, and the listener takes connections
// again when some close. (That the admin API keeps answering and exposes
// the counts is emulator/admin's TestAdminUnderListenerLimit.)
func TestConnectionLimitPerListener(t *testing.T) {
	const limit = 20
	pa, pb, pt := freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
	h := serveL4(t, Config{MaxConnsPerListener: limit}, newTable(gateway("gw", "127.0.0.1",
		port(pa, listener("a", "", vhost("", rule("a", prefix("/"), echo("a", 1))))),
		port(pb, listener("b", "", vhost("", rule("b", prefix("/"), echo("b", 1))))),
		port(pt, tcpListener("tcp", streamRoute("TCPRoute", "tcp", echo("tcp-echo", 1)))))))
	for _, p := range []int32{pa, pt} {
		var held []*net.TCPConn
		for range limit {
			held = append(held, dialTCP(t, p)) // idle: they hold their slots
		}
		time.Sleep(50 * time.Millisecond) // let the server accept them
		for i := range 3 {
			c := dialTCP(t, p)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second)) // refused at once, unless the machine is loaded
			if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("port %d: connection %d over the limit not refused: %v", p, limit+i+1, err)
			}
		}
		if res := get(t, fmt.Sprintf("http://127.0.0.1:%d/", pb)); res != 200 {
			t.Errorf("other listener: %d", res)
		}
		tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Refused > 0 && tr.Address == fmt.Sprintf("127.0.0.1:%d", p) })
		if tr.End != EndRefused || !strings.Contains(tr.Reason, "20 connections are open on this listener") || tr.Gateway != "gateway/default/gw" {
			t.Errorf("refusal trace %+v", tr)
		}
		for _, c := range held {
			c.Close()
		}
	}
	// Slots come back when connections close.
	deadline := time.Now().Add(3 * time.Second)
	for get(t, fmt.Sprintf("http://127.0.0.1:%d/", pa)) != 200 {
		if time.Now().After(deadline) {
			t.Fatal("listener a does not take connections again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// What the admin API's gwdev_refused_total reads: at least the three
	// refusals of each listener (on a loaded machine one of the held
	// connections may have been refused too).
	counts := h.s.RefusedCounts()
	for _, k := range []RefusedKey{{Gateway: "gateway/default/gw", Listener: "gateway/default/gw/listener/a", Proto: "HTTP"},
		{Gateway: "gateway/default/gw", Listener: "gateway/default/gw/listener/tcp", Proto: "TCP"}} {
		if counts[k] < 3 {
			t.Errorf("refusals of %+v: %d, want at least 3 (counts %v)", k, counts[k], counts)
		}
	}
}

func get(t *testing.T, url string) int {
	t.Helper()
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return -1
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Datagrams that would start a UDP session over the limit are dropped,
// traced and counted; the sessions within the limit are served.
func TestUDPSessionLimit(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	h := serveL4(t, Config{MaxUDPSessions: 2}, newTable(gateway("gw", "127.0.0.1",
		udpPort(p, udpListener("dns", streamRoute("UDPRoute", "dns", echo("udp-echo", 1)))))))
	answered := 0
	for i := range 4 {
		c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = fmt.Fprintf(c, "ping %d", i)
		// The sessions within the limit must be answered, however long
		// a loaded machine takes; the others are given 300 ms to show an
		// answer they must not get.
		wait := 5 * time.Second
		if i >= 2 {
			wait = 300 * time.Millisecond
		}
		_ = c.SetReadDeadline(time.Now().Add(wait))
		if n, err := c.Read(make([]byte, 64)); err == nil && n > 0 {
			answered++
		}
	}
	if answered != 2 {
		t.Errorf("%d sessions answered, want 2", answered)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Refused > 0 })
	if tr.Proto != "UDP" || !strings.Contains(tr.Reason, "2 UDP sessions are open") {
		t.Errorf("refusal trace %+v", tr)
	}
}

// An HTTP/2 stream whose flow-control window the client never opens is
// reset after the write-stall timeout instead of holding its handler
// forever.
func TestHTTP2WriteStall(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	h := serveL4(t, Config{WriteStallTimeout: 300 * time.Millisecond}, newTable(gateway("gw", "127.0.0.1",
		port(p, listener("a", "", vhost("", rule("a", prefix("/"), echo("a", 1))))))))
	c := dialTCP(t, p)
	if _, err := io.WriteString(c, http2Preface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	// A window of 0: the server may send headers, never a byte of body.
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	var hb strings.Builder
	enc := hpack.NewEncoder(&hb)
	// The echo's answer repeats the 8 KB header: more than the server
	// buffers, so the handler itself waits for the window.
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "x"}, {":path", "/stall"},
		{"x-big", strings.Repeat("b", 8000)}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte(hb.String()), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("no reset of the stalled stream: %v", err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			_ = fr.WriteSettingsAck()
		}
		if rst, ok := f.(*http2.RSTStreamFrame); ok && rst.StreamID == 1 {
			break
		}
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("reset after %s, before the stall timeout", d)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == "/stall" })
	if !strings.Contains(tr.Reason, "accepted no bytes of the response for 300ms (write-stall timeout)") {
		t.Errorf("stalled stream trace: status %d, reason %q, after %s", tr.Status, tr.Reason, time.Duration(tr.Duration))
	}
}

// The write-stall deadline of one response never cuts a later answer on
// the same connection: after an idle longer than the stall timeout, a
// request with Expect: 100-continue and a malformed request are answered,
// and a WebSocket outlives the timeout.
func TestWriteStallDeadlineIsPerResponse(t *testing.T) {
	const stall = 150 * time.Millisecond
	backend := httptest.NewServer(websocket.Handler(func(ws *websocket.Conn) { _, _ = io.Copy(ws, ws) }))
	defer backend.Close()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "read %d", n)
	}))
	defer upstream.Close()
	p := freePort(t, "127.0.0.1")
	serveL4(t, Config{WriteStallTimeout: stall}, newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
		rule("ws", prefix("/ws"), mapped("ws", 1, backend.Listener.Addr().String())),
		rule("up", prefix("/"), mapped("up", 1, upstream.Listener.Addr().String()))))))))
	c := dialTCP(t, p)
	br := bufio.NewReader(c)
	send := func(raw string, body string) (int, string) {
		t.Helper()
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		if body != "" {
			// Wait for 100 Continue, as a client does.
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 100 {
				t.Fatalf("expected 100 Continue: %v", err)
			}
			_, _ = io.WriteString(c, body)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("after %q: %v", raw, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if st, _ := send("GET / HTTP/1.1\r\nHost: x\r\n\r\n", ""); st != 200 {
		t.Fatalf("first request: %d", st)
	}
	time.Sleep(3 * stall)
	if st, b := send("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n", "hello"); st != 200 || b != "read 5" {
		t.Errorf("100-continue after idle: %d %q", st, b)
	}
	time.Sleep(3 * stall)
	if st, _ := send("GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", ""); st != 400 {
		t.Errorf("malformed request after idle: %d, want net/http's 400", st)
	}

	ws, err := websocket.Dial(fmt.Sprintf("ws://127.0.0.1:%d/ws", p), "", "http://example.com")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	wsEchoes(t, ws, 2*stall)
}

// A client that sent Expect: 100-continue gets exactly one 100 Continue,
// whatever the backend does: here the backend sends its own 100 only
// after the body arrived (so the gateway's transport stopped waiting for
// it and the client already had the gateway's 100). The late 100 is not
// passed on as a second one; the next thing the client reads is the final
// answer.
func TestExpectContinueOneInterim(t *testing.T) {
	addr := rawBackend(t, func(c net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		fmt.Fprintf(c, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	})
	p := freePort(t, "127.0.0.1")
	serveL4(t, Config{}, newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
		rule("up", prefix("/"), mapped("up", 1, addr))))))))
	c := dialTCP(t, p)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 100 {
		t.Fatalf("expected 100 Continue: %v %v", resp, err)
	}
	_, _ = io.WriteString(c, "hello")
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "hello" {
		t.Errorf("after the body: %d %q, want the final 200 \"hello\" (not a second 100)", resp.StatusCode, b)
	}
}
