package emulator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine/table"
)

// L4 table builders.

func streamRoute(kind, name string, backends ...*table.Backend) *table.StreamRoute {
	base := strings.ToLower(kind) + "/default/" + name + "/rule/0"
	for i, b := range backends {
		b.Name = base + "/backend/" + strconv.Itoa(i)
	}
	return &table.StreamRoute{Name: base, Backends: backends,
		Route: table.ObjectKey{Kind: kind, Namespace: "default", Name: name}, Index: &table.RuleIndex{Rule: 0, Match: -1}}
}

func tcpListener(section string, routes ...*table.StreamRoute) *table.ListenerTable {
	return &table.ListenerTable{SectionName: section, Protocol: table.TCPProtocolType, StreamRoutes: routes}
}

func udpListener(section string, routes ...*table.StreamRoute) *table.ListenerTable {
	return &table.ListenerTable{SectionName: section, Protocol: table.UDPProtocolType, StreamRoutes: routes}
}

func udpPort(n int32, ls ...*table.ListenerTable) *table.PortTable {
	return &table.PortTable{Port: n, Transport: "UDP", Listeners: ls}
}

// l4Harness is a Server with its own Config (short timeouts) serving a
// table on 127.0.0.1.
type l4Harness struct {
	t testing.TB
	s *Server
}

func serveL4(t testing.TB, cfg Config, tab *table.Table) *l4Harness {
	t.Helper()
	h := &l4Harness{t: t, s: New(cfg)}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.s.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	h.apply(tab)
	return h
}

func (h *l4Harness) apply(tab *table.Table) *ApplyReport {
	h.t.Helper()
	rep := h.s.Apply(tab)
	if err := rep.Err(); err != nil {
		h.t.Fatalf("apply: %v", err)
	}
	for _, p := range rep.Ports {
		if p.NotServed != "" {
			h.t.Fatalf("port %d not served: %s", p.Port, p.NotServed)
		}
	}
	return rep
}

func dialTCP(t testing.TB, port int32) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(int(port)), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// echoGreeting reads the TCP echo backend's greeting (the conformance TCP
// echo server's) from r.
func echoGreeting(t testing.TB, r *bufio.Reader) {
	t.Helper()
	if g, err := r.ReadString('\n'); err != nil || g != echosrv.TCPWelcome {
		t.Fatalf("echo greeting: %q %v", g, err)
	}
}

// tcpBackend is a TCP server for tests; handle runs per connection.
func tcpBackend(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// nameBackend greets every connection with its name and closes.
func nameBackend(t testing.TB, name string) string {
	return tcpBackend(t, func(c net.Conn) { _, _ = io.WriteString(c, name) })
}

func TestTCPRouteWeights(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	a, b, zero := nameBackend(t, "a"), nameBackend(t, "b"), nameBackend(t, "zero")
	h := serveL4(t, Config{}, newTable(gateway("gw", "127.0.0.1", port(p, tcpListener("tcp",
		streamRoute("TCPRoute", "db",
			mapped("a", 6, a), mapped("b", 2, b), mapped("zero", 0, zero),
			invalid("ghost", 2, "backendRef Service default/ghost not found")))))))
	counts := map[string]int{}
	const conns = 400
	for range conns {
		c := dialTCP(t, p)
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatal(err)
		}
		counts[string(got)]++ // "" : refused (the invalid backend)
		c.Close()
	}
	// 6:2:0:2 → 240, 80, 0, 80 expected; the bounds are beyond 5 standard
	// deviations.
	if counts["a"] < 190 || counts["a"] > 290 || counts["b"] < 40 || counts["b"] > 120 ||
		counts[""] < 40 || counts[""] > 120 || counts["zero"] != 0 {
		t.Errorf("weights 6:2:0:2 over %d connections: %v", conns, counts)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Proto == "TCP" && tr.End == EndRefused })
	if !strings.Contains(tr.Reason, "ghost not found") || tr.Rule != "tcproute/default/db/rule/0" || tr.Route != "TCPRoute/default/db" ||
		tr.Matched == nil || tr.Matched.Rule != 0 || tr.Matched.Match != -1 || tr.Matched.Route.Name != "db" {
		t.Errorf("refused trace %+v", tr)
	}
	tr = waitTrace(t, h.s, func(tr Trace) bool { return tr.Proto == "TCP" && tr.Upstream == a })
	// The backend closes after its greeting and the client closes after
	// reading it: which close the gateway sees first is a race.
	if tr.BytesOut != 1 || (tr.End != EndBackendClosed && tr.End != EndClientClosed) || tr.Backend != "tcproute/default/db/rule/0/backend/0" || tr.Target != "mapped" ||
		tr.Listener != "gateway/default/gw/listener/tcp" || tr.Gateway != "gateway/default/gw" || tr.Port != p {
		t.Errorf("trace %+v", tr)
	}
}

// TestTCPHalfClose: the client half-closes and still reads the answer, to
// a real backend and to the echo backend.
func TestTCPHalfClose(t *testing.T) {
	p, pe := freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
	// The backend reads until the client's EOF, then answers and closes.
	counter := tcpBackend(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		fmt.Fprintf(c, "got %d bytes", n)
	})
	h := serveL4(t, Config{}, newTable(gateway("gw", "127.0.0.1",
		port(p, tcpListener("count", streamRoute("TCPRoute", "count", mapped("counter", 1, counter)))),
		port(pe, tcpListener("echo", streamRoute("TCPRoute", "echo", echo("tcp-echo", 1)))))))

	c := dialTCP(t, p)
	payload := strings.Repeat("x", 100_000)
	if _, err := io.WriteString(c, payload); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "got 100000 bytes" {
		t.Fatalf("after half-close: %q %v", got, err)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Proto == "TCP" && tr.Upstream == counter })
	if tr.BytesIn != 100_000 || tr.BytesOut != int64(len(got)) || tr.End != EndClientClosed || tr.Reason != "" || tr.UpstreamDuration <= 0 {
		t.Errorf("trace %+v", tr)
	}

	// The echo answers line by line; the last line, cut short by the
	// half-close, comes back too, then the echo half-closes.
	c = dialTCP(t, pe)
	r := bufio.NewReader(c)
	echoGreeting(t, r)
	if _, err := io.WriteString(c, "hello,\n"); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadString('\n'); err != nil || got != "hello,\n" {
		t.Fatalf("echo: %q %v", got, err)
	}
	_, _ = io.WriteString(c, "world")
	_ = c.CloseWrite()
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "world" {
		t.Errorf("echo after half-close: %q %v", rest, err)
	}
	tr = waitTrace(t, h.s, func(tr Trace) bool { return tr.Proto == "TCP" && tr.Upstream == "echo" })
	if tr.BytesIn != 12 || tr.BytesOut != int64(len(echosrv.TCPWelcome))+12 || tr.Service != "default/tcp-echo:80" || tr.Target != "echo" || tr.End != EndClientClosed {
		t.Errorf("echo trace %+v", tr)
	}
	if log := h.s.EchoLog("default/tcp-echo"); len(log) != 1 || !strings.Contains(log[0], "12 bytes echoed") {
		t.Errorf("echo log %q", log)
	}
}

// TestTCPEchoProtocol: the TCP echo backend speaks the conformance TCP echo
// server's protocol (what the suite's TCPRoute tests send), and a client
// that speaks HTTP first gets the HTTP echo.
func TestTCPEchoProtocol(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	serveL4(t, Config{}, newTable(gateway("gw", "127.0.0.1",
		port(p, tcpListener("echo", streamRoute("TCPRoute", "echo", echo("tcp-echo", 1)))))))
	c := dialTCP(t, p)
	r := bufio.NewReader(c)
	echoGreeting(t, r)
	for _, x := range []struct{ send, want string }{
		{"PING\n", "PONG\n"}, {"IS_TLS\r\n", "false\n"}, {"ping\n", "ping\n"}, {"PING \n", "PING \n"},
	} {
		_, _ = io.WriteString(c, x.send)
		if got, err := r.ReadString('\n'); err != nil || got != x.want {
			t.Errorf("%q: %q %v, want %q", x.send, got, err, x.want)
		}
	}
	_, _ = io.WriteString(c, "TEST\n")
	line, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var got echosrv.StreamAssertions
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("TEST: %q: %v", line, err)
	}
	if got.Namespace != "default" || got.Service != "tcp-echo" || !strings.HasPrefix(got.Pod, "tcp-echo-") ||
		got.Ingress != "gw" || got.TCPPort != "80" || got.IsTLS || got.TLS != nil {
		t.Errorf("TEST: %s", line)
	}

	// A line longer than the line limit comes back whole, in pieces.
	long := strings.Repeat("x", echosrv.LineLimit+10) + "\n"
	go func() { _, _ = io.WriteString(c, long) }()
	buf := make([]byte, len(long))
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != long {
		t.Errorf("long line: %d bytes back, %v", len(buf), err)
	}

	// An HTTP client gets the HTTP echo, also one that is slow to send
	// its request (on a loaded machine a client can lose the CPU for a
	// while between connect and write; this one waits 250 ms).
	for _, pause := range []time.Duration{0, 250 * time.Millisecond} {
		hc := dialTCP(t, p)
		time.Sleep(pause)
		_, _ = io.WriteString(hc, "GET /x HTTP/1.1\r\nHost: tcp.example\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(hc), nil)
		if err != nil {
			t.Fatalf("HTTP over the TCP echo after %v: %v", pause, err)
		}
		var er echosrv.Response
		err = json.NewDecoder(resp.Body).Decode(&er)
		resp.Body.Close()
		if err != nil || er.Path != "/x" || er.Host != "tcp.example" || er.Service != "tcp-echo" {
			t.Errorf("HTTP over the TCP echo after %v: %+v %v", pause, er, err)
		}
	}
}

// echoSendOnce is the conformance suite's tcp.EchoSendOnce (what
// TCPRouteMultipleRoutesAttachment runs a hundred times in a row): dial,
// wait for the greeting, TEST, close. It returns how long the greeting took.
func echoSendOnce(t *testing.T, conn net.Conn) time.Duration {
	t.Helper()
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	r := bufio.NewReader(conn)
	echoGreeting(t, r)
	greeted := time.Since(start)
	_, _ = io.WriteString(conn, "TEST\n")
	line, err := r.ReadBytes('\n')
	var a echosrv.StreamAssertions
	if err != nil || json.Unmarshal(line, &a) != nil || a.Pod == "" {
		t.Fatalf("TEST: %q %v", line, err)
	}
	return greeted
}

// TestTCPEchoGreetsWaitingClientsSoon: the echo waits a second for a
// client that speaks first (HTTP) before it greets; once a client of the
// Service has waited that out, the next ones are greeted at once (a
// hundred conformance connections took 100 s), while an HTTP client that
// sends at once still gets the HTTP echo, and one greeted too soon makes
// the echo wait the whole window again for the next.
func TestTCPEchoGreetsWaitingClientsSoon(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	h := serveL4(t, Config{}, newTable(gateway("gw", "127.0.0.1",
		port(p, tcpListener("echo", streamRoute("TCPRoute", "echo", echo("tcp-echo", 1)))))))
	echoSendOnce(t, dialTCP(t, p)) // waits out the window
	start := time.Now()
	const conns = 20
	for i := range conns {
		// The window is echoSniffWindowWaiting (50 ms); a second is what
		// each one waited before.
		if d := echoSendOnce(t, dialTCP(t, p)); d > 500*time.Millisecond {
			t.Fatalf("connection %d greeted after %v", i+2, d)
		}
	}
	t.Logf("%d more connections in %v", conns, time.Since(start))
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Proto == "TCP" && tr.Upstream == "echo" })
	if tr.End != EndClientClosed || tr.Reason != "" {
		t.Errorf("trace %+v", tr)
	}

	httpEcho := func(pause time.Duration, path string) (*echosrv.Response, error) {
		hc := dialTCP(t, p)
		defer hc.Close()
		time.Sleep(pause)
		_, _ = io.WriteString(hc, "GET "+path+" HTTP/1.1\r\nHost: tcp.example\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(hc), nil)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var er echosrv.Response
		if err := json.NewDecoder(resp.Body).Decode(&er); err != nil {
			return nil, err
		}
		return &er, nil
	}
	// Sent at once: the HTTP echo.
	if er, err := httpEcho(0, "/x"); err != nil || er.Path != "/x" || er.Service != "tcp-echo" {
		t.Fatalf("HTTP at once after waiting clients: %+v %v", er, err)
	}
	// Waiting clients again; then an HTTP client slower than the short
	// window may be greeted (its request is then echoed back), and the
	// next slow one gets the whole window.
	echoSendOnce(t, dialTCP(t, p))
	if d := echoSendOnce(t, dialTCP(t, p)); d > 500*time.Millisecond {
		t.Fatalf("greeted after %v", d)
	}
	_, _ = httpEcho(300*time.Millisecond, "/greeted")
	if er, err := httpEcho(300*time.Millisecond, "/slow"); err != nil || er.Path != "/slow" {
		t.Errorf("slow HTTP client after one greeted too soon: %+v %v", er, err)
	}
}

func TestTCPIdleTimeout(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	const idle = 300 * time.Millisecond
	h := serveL4(t, Config{TCPIdleTimeout: idle}, newTable(gateway("gw", "127.0.0.1",
		port(p, tcpListener("echo", streamRoute("TCPRoute", "echo", echo("echo", 1)))))))

	// Traffic every 60ms keeps the connection open well past the timeout.
	c := dialTCP(t, p)
	r := bufio.NewReader(c)
	echoGreeting(t, r)
	for range 8 {
		if _, err := c.Write([]byte("x\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatalf("connection closed while active: %v", err)
		}
		time.Sleep(idle / 5)
	}
	// Then silence: the gateway closes it.
	start := time.Now()
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle connection: read %d, %v", n, err)
	}
	if d := time.Since(start); d < idle/2 || d > 2*time.Second {
		t.Errorf("closed after %s of silence (idle timeout %s)", d, idle)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.End == EndIdleTimeout && tr.BytesIn == 16 })
	if !strings.Contains(tr.Reason, "idle timeout") || tr.BytesOut != int64(len(echosrv.TCPWelcome))+16 {
		t.Errorf("trace %+v", tr)
	}

	// A client that connects and sends nothing is greeted, then closed the
	// same way.
	c = dialTCP(t, p)
	r = bufio.NewReader(c)
	echoGreeting(t, r)
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("silent client: read %d, %v", n, err)
	}
	waitTrace(t, h.s, func(tr Trace) bool { return tr.End == EndIdleTimeout && tr.BytesIn == 0 })
}

// TestTCPBadBackends: a backend that is down, a listener without a route:
// connections are closed at once and traced, and other ports keep serving.
func TestTCPBadBackends(t *testing.T) {
	p, pn, pe := freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
	down := "127.0.0.1:" + strconv.Itoa(int(refusedPort(t)))
	h := serveL4(t, Config{}, newTable(gateway("gw", "127.0.0.1",
		port(p, tcpListener("down", streamRoute("TCPRoute", "down", mapped("down", 1, down)))),
		port(pn, tcpListener("none")),
		port(pe, tcpListener("echo", streamRoute("TCPRoute", "echo", echo("echo", 1)))))))
	for _, port := range []int32{p, pn} {
		c := dialTCP(t, port)
		if got, err := io.ReadAll(c); err != nil || len(got) != 0 {
			t.Errorf("port %d: %q %v", port, got, err)
		}
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Port == p })
	if tr.End != EndRefused || !strings.Contains(tr.Reason, "connection refused") || tr.Upstream != down || tr.Attempts != 1 {
		t.Errorf("backend down trace %+v", tr)
	}
	tr = waitTrace(t, h.s, func(tr Trace) bool { return tr.Port == pn })
	if tr.End != EndRefused || !strings.Contains(tr.Reason, "no TCPRoute") {
		t.Errorf("no route trace %+v", tr)
	}
	c := dialTCP(t, pe)
	_, _ = io.WriteString(c, "still here")
	_ = c.CloseWrite()
	if got, _ := io.ReadAll(c); string(got) != echosrv.TCPWelcome+"still here" {
		t.Errorf("echo port after failures: %q", got)
	}
}

// TestTCPReload: an unchanged TCP listener is not re-bound; an established
// connection keeps its backend; new connections get the new table; a
// removed port stops accepting while its connection goes on.
func TestTCPReload(t *testing.T) {
	p, p2 := freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
	echoName := func(name string) string {
		return tcpBackend(t, func(c net.Conn) {
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				fmt.Fprintf(c, "%s:%s\n", name, sc.Text())
			}
		})
	}
	v1, v2 := echoName("v1"), echoName("v2")
	tab := func(addr string, extra ...*table.PortTable) *table.Table {
		ports := append([]*table.PortTable{port(p, tcpListener("tcp", streamRoute("TCPRoute", "app", mapped("app", 1, addr))))}, extra...)
		return newTable(gateway("gw", "127.0.0.1", ports...))
	}
	h := serveL4(t, Config{}, tab(v1, port(p2, tcpListener("extra", streamRoute("TCPRoute", "extra", echo("echo", 1))))))
	line := func(r *bufio.Reader, c net.Conn, msg string) string {
		t.Helper()
		fmt.Fprintln(c, msg)
		s, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		return strings.TrimSpace(s)
	}
	old := dialTCP(t, p)
	oldR := bufio.NewReader(old)
	if got := line(oldR, old, "a"); got != "v1:a" {
		t.Fatalf("before reload: %q", got)
	}
	extra := dialTCP(t, p2)
	extraR := bufio.NewReader(extra)
	echoGreeting(t, extraR) // accepted and served

	rep := h.apply(tab(v2))
	if !rep.Ports[0].Reused {
		t.Errorf("TCP listener re-bound: %+v", rep.Ports[0])
	}
	if got := line(oldR, old, "b"); got != "v1:b" {
		t.Errorf("established connection after reload: %q", got)
	}
	c := dialTCP(t, p)
	if got := line(bufio.NewReader(c), c, "c"); got != "v2:c" {
		t.Errorf("new connection after reload: %q", got)
	}
	// The removed port no longer accepts; its connection still echoes.
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(int(p2)), time.Second); err == nil {
		c.Close()
		t.Errorf("removed port still accepts")
	}
	if got := line(extraR, extra, "y"); got != "y" {
		t.Errorf("connection of a removed port: %q", got)
	}
	// The port changes protocol to HTTP: it is bound anew as HTTP.
	rep = h.apply(newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", rule("r", prefix("/"), echo("web", 1))))))))
	if rep.Ports[0].Reused || rep.Ports[0].Bound == "" {
		t.Errorf("protocol change: %+v", rep.Ports[0])
	}
	if got := line(oldR, old, "d"); got != "v1:d" {
		t.Errorf("connection of the retired TCP listener: %q", got)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://127.0.0.1:" + strconv.Itoa(int(p)) + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("HTTP after TCP: %d", resp.StatusCode)
	}
}
