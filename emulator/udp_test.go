package emulator

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/freeport"
)

// freeUDPPort returns a UDP port free on ip (internal/freeport).
func freeUDPPort(t testing.TB, ip string) int32 {
	t.Helper()
	return int32(freeport.UDP(t, ip))
}

// udpClient is a connected UDP socket to 127.0.0.1:port.
func udpClient(t testing.TB, port int32) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(port)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// udpExchange sends msg and waits for one answer ("" : none within wait).
func udpExchange(t testing.TB, c *net.UDPConn, msg string, wait time.Duration) string {
	t.Helper()
	got, _ := udpExchangeOK(t, c, msg, wait)
	return got
}

// udpExchangeOK is udpExchange telling an empty answer from none.
func udpExchangeOK(t testing.TB, c *net.UDPConn, msg string, wait time.Duration) (string, bool) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 2048)
	n, err := c.Read(buf)
	if err != nil {
		return "", false
	}
	return string(buf[:n]), true
}

// udpBackend answers every datagram with "<name> <sender address> <msg>".
func udpBackend(t testing.TB, name string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { pc.Close(); wg.Wait() })
	go func() {
		defer wg.Done()
		buf := make([]byte, 2048)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(name+" "+addr.String()+" "+string(buf[:n])), addr)
		}
	}()
	return pc.LocalAddr().String()
}

// udpEchoRequest returns the request field of the UDP echo's JSON answer
// after checking it names Service default/<service> and Gateway gw.
func udpEchoRequest(t testing.TB, answer, service string) string {
	t.Helper()
	var r echosrv.UDPResponse
	if err := json.Unmarshal([]byte(answer), &r); err != nil {
		t.Fatalf("UDP echo answer %q: %v", answer, err)
	}
	if r.Namespace != "default" || r.Service != service || r.Ingress != "gw" || !strings.HasPrefix(r.Pod, service+"-") {
		t.Errorf("UDP echo answer %q", answer)
	}
	return r.Request
}

func TestUDPEcho(t *testing.T) {
	p := freeUDPPort(t, "127.0.0.1")
	h := serveL4(t, Config{}, newTable(gateway("gw", "127.0.0.1",
		udpPort(p, udpListener("dns", streamRoute("UDPRoute", "dns", echo("udp-echo", 1)))))))
	a, b := udpClient(t, p), udpClient(t, p)
	for i := range 3 {
		for _, c := range []*net.UDPConn{a, b} {
			msg := c.LocalAddr().String() + "#" + strconv.Itoa(i)
			if got := udpEchoRequest(t, udpExchange(t, c, msg, 2*time.Second), "udp-echo"); got != msg {
				t.Fatalf("echo of %q: %q", msg, got)
			}
		}
	}
	// An empty datagram is a datagram too.
	if got, ok := udpExchangeOK(t, a, "", 2*time.Second); !ok || udpEchoRequest(t, got, "udp-echo") != "" {
		t.Errorf("empty datagram answered with %q, %t", got, ok)
	}
	// Closing the server ends the sessions; each is traced once.
	ctxClose(t, h.s)
	for _, c := range []*net.UDPConn{a, b} {
		tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Proto == "UDP" && tr.Client == c.LocalAddr().String() })
		if tr.End != EndGatewayStopped || tr.Upstream != "echo" || tr.Rule != "udproute/default/dns/rule/0" ||
			tr.Listener != "gateway/default/gw/listener/dns" || tr.BytesOut <= tr.BytesIn || tr.BytesIn == 0 || tr.DatagramsOut != tr.DatagramsIn {
			t.Errorf("session trace %+v", tr)
		}
	}
	if log := h.s.EchoLog("default/udp-echo"); len(log) != 2 || !strings.Contains(log[0], "over UDP") {
		t.Errorf("echo log %q", log)
	}
}

func ctxClose(t testing.TB, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
}

// TestUDPSessions: each client address is its own session with its own
// socket to the backend; a session expires after the session timeout
// without datagrams, and the next datagram starts a new one.
func TestUDPSessions(t *testing.T) {
	p := freeUDPPort(t, "127.0.0.1")
	backend := udpBackend(t, "b1")
	const timeout = 300 * time.Millisecond
	h := serveL4(t, Config{UDPSessionTimeout: timeout}, newTable(gateway("gw", "127.0.0.1",
		udpPort(p, udpListener("udp", streamRoute("UDPRoute", "app", mapped("app", 1, backend)))))))
	a, b := udpClient(t, p), udpClient(t, p)
	// seen is the gateway's source address as the backend saw it.
	seen := func(c *net.UDPConn, msg string) string {
		t.Helper()
		got := strings.Fields(udpExchange(t, c, msg, 2*time.Second))
		if len(got) != 3 || got[0] != "b1" || got[2] != msg {
			t.Fatalf("answer to %q: %q", msg, got)
		}
		return got[1]
	}
	a1, b1 := seen(a, "a1"), seen(b, "b1")
	if a1 == b1 {
		t.Errorf("two clients share the backend socket %s", a1)
	}
	// Datagrams within the timeout stay in the session.
	for i := range 6 {
		time.Sleep(timeout / 5)
		if got := seen(a, "a"+strconv.Itoa(i+2)); got != a1 {
			t.Errorf("session of client a moved from %s to %s", a1, got)
		}
	}
	// Client b has been quiet for longer than the timeout: its session
	// expired and was traced; its next datagram starts a new one.
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Client == b.LocalAddr().String() })
	if tr.End != EndSessionExpired || tr.SessionTimeout != Duration(timeout) || tr.Upstream != backend || tr.DatagramsIn != 1 || tr.DatagramsOut != 1 ||
		tr.BytesIn != 2 || tr.Duration < Duration(timeout) {
		t.Errorf("expired session trace %+v", tr)
	}
	if got := seen(b, "again"); got == b1 {
		t.Errorf("expired session reused backend socket %s", got)
	}
	tr = waitTrace(t, h.s, func(tr Trace) bool { return tr.Client == a.LocalAddr().String() })
	if tr.DatagramsIn != 7 || tr.DatagramsOut != 7 {
		t.Errorf("session a trace %+v", tr)
	}
}

// TestUDPRefused: no route, a backend that is down: the datagrams are
// dropped and traced; the listener keeps serving, and a route added by a
// reload serves the same client at once.
func TestUDPRefused(t *testing.T) {
	p, pd := freeUDPPort(t, "127.0.0.1"), freeUDPPort(t, "127.0.0.1")
	down := "127.0.0.1:" + strconv.Itoa(int(freeUDPPort(t, "127.0.0.1")))
	tab := func(l ...*table.StreamRoute) *table.Table {
		return newTable(gateway("gw", "127.0.0.1",
			udpPort(p, udpListener("udp", l...)),
			udpPort(pd, udpListener("down", streamRoute("UDPRoute", "down", mapped("down", 1, down))))))
	}
	h := serveL4(t, Config{}, tab())
	c := udpClient(t, p)
	if got := udpExchange(t, c, "anyone?", 100*time.Millisecond); got != "" {
		t.Errorf("no route answered %q", got)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Port == p })
	if tr.End != EndRefused || !strings.Contains(tr.Reason, "no UDPRoute") || tr.BytesIn != 7 {
		t.Errorf("no route trace %+v", tr)
	}
	// Nothing listens behind the backend: the ICMP error ends the session.
	d := udpClient(t, pd)
	_ = udpExchange(t, d, "hello", 100*time.Millisecond)
	tr = waitTrace(t, h.s, func(tr Trace) bool { return tr.Port == pd })
	if tr.End != EndBackendError || !strings.Contains(tr.Reason, "connection refused") || tr.Upstream != down {
		t.Errorf("backend down trace %+v", tr)
	}
	rep := h.apply(tab(streamRoute("UDPRoute", "late", echo("echo", 1))))
	if !rep.Ports[0].Reused {
		t.Errorf("UDP listener re-bound: %+v", rep.Ports[0])
	}
	if got := udpExchange(t, c, "now?", 2*time.Second); udpEchoRequest(t, got, "echo") != "now?" {
		t.Errorf("after reload: %q", got)
	}
}

// TestUDPReload: an unchanged UDP listener is kept; a session keeps its
// backend across a reload, a new client gets the new table's.
func TestUDPReload(t *testing.T) {
	p := freeUDPPort(t, "127.0.0.1")
	b1, b2 := udpBackend(t, "b1"), udpBackend(t, "b2")
	tab := func(addr string) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", udpPort(p, udpListener("udp", streamRoute("UDPRoute", "app", mapped("app", 1, addr))))))
	}
	h := serveL4(t, Config{}, tab(b1))
	a := udpClient(t, p)
	if got := udpExchange(t, a, "x", 2*time.Second); !strings.HasPrefix(got, "b1 ") {
		t.Fatalf("before reload: %q", got)
	}
	if rep := h.apply(tab(b2)); !rep.Ports[0].Reused {
		t.Errorf("UDP listener re-bound: %+v", rep.Ports[0])
	}
	if got := udpExchange(t, a, "y", 2*time.Second); !strings.HasPrefix(got, "b1 ") {
		t.Errorf("session after reload: %q", got)
	}
	if got := udpExchange(t, udpClient(t, p), "z", 2*time.Second); !strings.HasPrefix(got, "b2 ") {
		t.Errorf("new client after reload: %q", got)
	}
}

// TestUDPEchoDNSWhoami: a DNS query to the UDP echo is answered like
// CoreDNS's whoami (the conformance suite's UDPRoute backend): the client's
// address and port in the additional section; other datagrams that start
// like a DNS header get the JSON echo.
func TestUDPEchoDNSWhoami(t *testing.T) {
	p := freeUDPPort(t, "127.0.0.1")
	serveL4(t, Config{}, newTable(gateway("gw", "127.0.0.1",
		udpPort(p, udpListener("dns", streamRoute("UDPRoute", "dns", echo("coredns", 1)))))))
	c := udpClient(t, p)
	for _, edns := range []bool{false, true} {
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 0x4242, RecursionDesired: true})
		_ = b.StartQuestions()
		_ = b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("foo.bar.com."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
		if edns {
			_ = b.StartAdditionals()
			var opt dnsmessage.ResourceHeader
			_ = opt.SetEDNS0(1232, dnsmessage.RCodeSuccess, false)
			_ = b.OPTResource(opt, dnsmessage.OPTResource{})
		}
		q, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		got := udpExchange(t, c, string(q), 2*time.Second)
		var m dnsmessage.Message
		if err := m.Unpack([]byte(got)); err != nil {
			t.Fatalf("edns %t: answer %q: %v", edns, got, err)
		}
		if m.ID != 0x4242 || !m.Response || !m.RecursionDesired || m.RCode != dnsmessage.RCodeSuccess ||
			len(m.Questions) != 1 || m.Questions[0].Name.String() != "foo.bar.com." || len(m.Answers) != 0 || len(m.Additionals) != 2 {
			t.Fatalf("edns %t: answer %+v", edns, m)
		}
		a, ok := m.Additionals[0].Body.(*dnsmessage.AResource)
		if !ok || m.Additionals[0].Header.Name.String() != "foo.bar.com." || net.IP(a.A[:]).String() != "127.0.0.1" {
			t.Errorf("edns %t: address record %+v", edns, m.Additionals[0])
		}
		srv, ok := m.Additionals[1].Body.(*dnsmessage.SRVResource)
		if !ok || m.Additionals[1].Header.Name.String() != "_udp.foo.bar.com." || int(srv.Port) != c.LocalAddr().(*net.UDPAddr).Port {
			t.Errorf("edns %t: port record %+v", edns, m.Additionals[1])
		}
	}
	// Twelve bytes that are not a query (QDCOUNT 0) get the JSON echo.
	notDNS := "\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	if got := udpEchoRequest(t, udpExchange(t, c, notDNS, 2*time.Second), "coredns"); got != notDNS {
		t.Errorf("not a DNS query: %q", got)
	}
}
