package emulator

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine/table"
)

// TestTLSPassthroughBySNI: one port mixes an HTTPS listener and a
// Passthrough listener; the SNI picks the listener, the TLSRoute hostname
// the backend, and the client's handshake reaches the backend untouched.
func TestTLSPassthroughBySNI(t *testing.T) {
	gwCA, dbCA := newTestCA(t, "gateway CA"), newTestCA(t, "database CA")
	db := lineServer(t, "db", dbCA.serverConfig("db.example.com"))
	cache := lineServer(t, "cache", dbCA.serverConfig("cache.example.com"))
	web := []*table.Certificate{gwCA.certificate("web", certOpts{dnsNames: []string{"web.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("web", "web.example.com", web, vhost("", rule("web", prefix("/"), echo("web", 1)))),
			tlsListenerTable("tls", "*.example.com", table.TLSModePassthrough, nil,
				sniRouteTo("db", "db.example.com", mapped("db", 1, db)),
				sniRouteTo("cache", "cache.example.com", mapped("cache", 1, cache)),
			))))
	})
	roots := &tls.Config{RootCAs: dbCA.pool(), NextProtos: []string{"h2", "postgresql"}}
	for _, c := range []struct{ sni, name, addr string }{
		{"db.example.com", "db", db},
		{"cache.example.com", "cache", cache},
	} {
		conn, err := h.tlsDial(c.sni, roots) // verified against the backend's CA
		if err != nil {
			t.Fatalf("%s: %v", c.sni, err)
		}
		r := bufio.NewReader(conn)
		if got := readLine(t, conn, r); got != c.name+" "+c.sni {
			t.Errorf("%s: greeting %q", c.sni, got)
		}
		fmt.Fprintf(conn, "hello\n")
		if got := readLine(t, conn, r); got != "echo hello" {
			t.Errorf("%s: %q", c.sni, got)
		}
		conn.Close()
		tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == c.sni && t.Upstream != "" })
		if tr.Proto != "TLS Passthrough" || tr.Listener != "gateway/default/gw/listener/tls" || tr.Upstream != c.addr ||
			tr.Rule != "tlsroute/default/"+c.name+"/rule/0" || tr.Service != "default/"+c.name+":80" || tr.TLSVersion != "TLS 1.3" ||
			tr.NegotiatedProtocol != "" || strings.Join(tr.ALPN, ",") != "h2,postgresql" || tr.BytesIn < 200 || tr.BytesOut < 200 || tr.Reason != "" {
			t.Errorf("%s: trace %+v", c.sni, tr)
		}
	}
	// The HTTPS listener on the same port still terminates.
	res, _, _ := h.httpsGet(h.httpsClient("web.example.com", &tls.Config{RootCAs: gwCA.pool()}, true), "web.example.com", "/")
	if res.status != 200 || res.echo(t).Service != "web" {
		t.Errorf("HTTPS beside passthrough: %d %s", res.status, res.body)
	}
	// An SNI the listener takes but no TLSRoute serves is refused: the
	// connection is closed (the conformance tests want EOF or a reset).
	if _, err := h.tlsDial("mail.example.com", roots); !errors.Is(err, io.EOF) {
		t.Errorf("no TLSRoute: %v", err)
	}
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "mail.example.com" })
	if tr.Reason != `refused: no TLSRoute of listener gateway/default/gw/listener/tls serves SNI "mail.example.com"` {
		t.Errorf("no TLSRoute trace: %q", tr.Reason)
	}
}

// TestTLSPassthroughNoSNI: a ClientHello without SNI goes to the listener
// without a hostname; a dead backend is refused with an alert and traced.
func TestTLSPassthroughNoSNI(t *testing.T) {
	ca := newTestCA(t, "backend CA")
	backend := lineServer(t, "any", ca.serverConfig("localhost"))
	dead := refusedPort(t)
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			tlsListenerTable("dead", "dead.example.com", table.TLSModePassthrough, nil,
				sniRouteTo("dead", "dead.example.com", mapped("dead", 1, fmt.Sprintf("127.0.0.1:%d", dead)))),
			tlsListenerTable("any", "", table.TLSModePassthrough, nil, sniRouteTo("any", "", mapped("any", 1, backend))),
		)))
	})
	conn, err := h.tlsDial("", &tls.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, conn, bufio.NewReader(conn)); got != "any " {
		t.Errorf("no SNI: %q", got)
	}
	conn.Close()
	// The conformance suite wants the connection to end (EOF or reset), not an alert.
	if _, err := h.tlsDial("dead.example.com", &tls.Config{InsecureSkipVerify: true}); err == nil || !(errors.Is(err, io.EOF) || strings.Contains(err.Error(), "reset")) {
		t.Errorf("dead backend: %v", err)
	}
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "dead.example.com" })
	if !strings.HasPrefix(tr.Reason, fmt.Sprintf("refused: upstream 127.0.0.1:%d: dial tcp", dead)) || tr.Attempts != 1 {
		t.Errorf("dead backend trace: %+v", tr)
	}
}

// echoStreamTest runs the conformance TCP echo exchange on conn.
func echoStreamTest(t *testing.T, conn net.Conn) (isTLS string, a echosrv.StreamAssertions) {
	t.Helper()
	r := bufio.NewReader(conn)
	if got := readLine(t, conn, r) + "\n"; got != echosrv.TCPWelcome {
		t.Fatalf("welcome %q", got)
	}
	fmt.Fprintf(conn, "PING\n")
	if got := readLine(t, conn, r); got != "PONG" {
		t.Errorf("PING: %q", got)
	}
	fmt.Fprintf(conn, "IS_TLS\n")
	isTLS = readLine(t, conn, r)
	fmt.Fprintf(conn, "TEST\n")
	if err := json.Unmarshal([]byte(readLine(t, conn, r)), &a); err != nil {
		t.Fatal(err)
	}
	return isTLS, a
}

// TestTLSRoutesToEcho: passthrough to the echo backend makes a TLS
// handshake with the certificate of the Service's Secret (or a generated
// one); Terminate forwards plaintext (the conformance TLSRoute tests'
// expectations: IS_TLS true for passthrough, false for terminate).
func TestTLSRoutesToEcho(t *testing.T) {
	gwCA, appCA := newTestCA(t, "gateway CA"), newTestCA(t, "app CA")
	term := []*table.Certificate{gwCA.certificate("tls-terminate", certOpts{dnsNames: []string{"tls.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		pass := echo("tcp-backend", 1)
		pass.Target.EchoTLS = appCA.certificate("tcp-backend-tls", certOpts{dnsNames: []string{"abc.example.com"}})
		return newTable(gateway("gw", "127.0.0.1", port(p,
			tlsListenerTable("tls-terminate", "tls.example.com", table.TLSModeTerminate, term,
				sniRouteTo("terminate", "tls.example.com", echo("tcp-backend", 1))),
			tlsListenerTable("tls-passthrough", "abc.example.com", table.TLSModePassthrough, nil,
				sniRouteTo("passthrough", "abc.example.com", pass)),
			tlsListenerTable("generated", "gen.example.com", table.TLSModePassthrough, nil,
				sniRouteTo("generated", "gen.example.com", echo("gen", 1))),
		)))
	})
	conn, err := h.tlsDial("tls.example.com", &tls.Config{RootCAs: gwCA.pool()})
	if err != nil {
		t.Fatal(err)
	}
	isTLS, a := echoStreamTest(t, conn)
	conn.Close()
	if isTLS != "false" || a.IsTLS || a.Pod == "" || a.Namespace != "default" || a.Service != "tcp-backend" || a.Ingress != "gw" {
		t.Errorf("terminate: %s %+v", isTLS, a)
	}
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "tls.example.com" && t.Upstream == "echo" })
	if tr.Proto != "TLS Terminate" || tr.TLSVersion != "TLS 1.3" || tr.Target != "echo" || tr.BytesIn == 0 || tr.BytesOut == 0 {
		t.Errorf("terminate trace %+v", tr)
	}

	conn, err = h.tlsDial("abc.example.com", &tls.Config{RootCAs: appCA.pool()})
	if err != nil {
		t.Fatal(err)
	}
	isTLS, a = echoStreamTest(t, conn)
	conn.Close()
	if isTLS != "true" || a.TLS == nil || a.TLS.ServerName != "abc.example.com" || a.TLS.Version != "TLS 1.3" {
		t.Errorf("passthrough: %s %+v", isTLS, a)
	}
	tr = waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "abc.example.com" && t.Upstream == "echo" })
	if tr.Proto != "TLS Passthrough" || tr.TLSVersion != "TLS 1.3" {
		t.Errorf("passthrough trace %+v", tr)
	}

	// An HTTP client (ALPN h2 or http/1.1) through the passthrough gets the
	// HTTP echo backend over the same TLS, like the conformance tls-backend;
	// a client of another protocol gets the TCP echo.
	for _, h2 := range []bool{true, false} {
		c := h.httpsClient("abc.example.com", &tls.Config{RootCAs: appCA.pool()}, h2)
		req := h.request("GET", "abc.example.com", "/through")
		req.URL.Scheme = "https"
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e echosrv.Response
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if err != nil || e.Service != "tcp-backend" || e.Path != "/through" || e.TLS == nil || e.TLS.ServerName != "abc.example.com" || (resp.ProtoMajor == 2) != h2 {
			t.Errorf("HTTP through passthrough (h2 %t): %v %s %+v", h2, err, resp.Proto, e)
		}
	}
	// Without ALPN, an HTTP request sent at once is recognised too (Go's
	// http.Transport with its own TLS configuration offers no ALPN), through
	// passthrough and through termination.
	for _, c := range []struct {
		sni  string
		conf *tls.Config
	}{{"abc.example.com", &tls.Config{RootCAs: appCA.pool()}}, {"tls.example.com", &tls.Config{RootCAs: gwCA.pool()}}} {
		conn, err := h.tlsDial(c.sni, c.conf)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET /sniffed HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", c.sni)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.sni, err)
		}
		var e echosrv.Response
		err = json.NewDecoder(resp.Body).Decode(&e)
		conn.Close()
		if err != nil || resp.StatusCode != 200 || e.Path != "/sniffed" || e.Service != "tcp-backend" || (c.sni == "abc.example.com") != (e.TLS != nil) {
			t.Errorf("%s: HTTP without ALPN: %v %d %+v", c.sni, err, resp.StatusCode, e)
		}
	}
	conn, err = h.tlsDial("abc.example.com", &tls.Config{RootCAs: appCA.pool(), NextProtos: []string{"postgresql"}})
	if err != nil {
		t.Fatal(err)
	}
	if isTLS, _ = echoStreamTest(t, conn); isTLS != "true" || conn.ConnectionState().NegotiatedProtocol != "" {
		t.Errorf("other ALPN: %s %q", isTLS, conn.ConnectionState().NegotiatedProtocol)
	}
	conn.Close()

	// Without a Secret the echo backend's certificate is generated: clients
	// must be told to trust anything.
	if _, err := h.tlsDial("gen.example.com", &tls.Config{RootCAs: appCA.pool()}); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("generated certificate trusted: %v", err)
	}
	conn, err = h.tlsDial("gen.example.com", &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "gen.example.com" {
		t.Errorf("generated certificate for %q", cn)
	}
	fmt.Fprintf(conn, "anything\n")
	r := bufio.NewReader(conn)
	readLine(t, conn, r) // welcome
	if got := readLine(t, conn, r); got != "anything" {
		t.Errorf("echo: %q", got)
	}
}

// TestTLSTerminateToBackend: Terminate forwards plaintext to a real
// backend; with a BackendTLSPolicy it speaks TLS to it, and a wrong CA
// refuses the connection with a reason.
func TestTLSTerminateToBackend(t *testing.T) {
	gwCA, beCA, otherCA := newTestCA(t, "gateway CA"), newTestCA(t, "backend CA"), newTestCA(t, "other CA")
	plain := lineServer(t, "plain", nil)
	secure := lineServer(t, "secure", beCA.serverConfig("secure.internal"))
	cert := []*table.Certificate{gwCA.certificate("gw", certOpts{dnsNames: []string{"*.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		good := mapped("secure", 1, secure)
		good.TLS = &table.BackendTLS{Policy: "default/secure", SNI: "secure.internal", CACertificates: beCA.pem, CARefs: []string{"ConfigMap default/backend-ca"}}
		bad := mapped("secure", 1, secure)
		bad.TLS = &table.BackendTLS{Policy: "default/wrong", SNI: "secure.internal", CACertificates: otherCA.pem, CARefs: []string{"ConfigMap default/other-ca"}}
		return newTable(gateway("gw", "127.0.0.1", port(p,
			tlsListenerTable("tls", "*.example.com", table.TLSModeTerminate, cert,
				sniRouteTo("plain", "plain.example.com", mapped("plain", 1, plain)),
				sniRouteTo("secure", "secure.example.com", good),
				sniRouteTo("wrong", "wrong.example.com", bad)))))
	})
	roots := &tls.Config{RootCAs: gwCA.pool()}
	for _, c := range []struct{ sni, greeting string }{
		{"plain.example.com", "plain -"},
		{"secure.example.com", "secure secure.internal"},
	} {
		conn, err := h.tlsDial(c.sni, roots)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(conn)
		if got := readLine(t, conn, r); got != c.greeting {
			t.Errorf("%s: %q", c.sni, got)
		}
		fmt.Fprintf(conn, "x\n")
		if got := readLine(t, conn, r); got != "echo x" {
			t.Errorf("%s: %q", c.sni, got)
		}
		// Half-close: the backend still answers what was sent before.
		fmt.Fprintf(conn, "last\n")
		_ = conn.CloseWrite()
		rest, _ := io.ReadAll(r)
		if string(rest) != "echo last\n" {
			t.Errorf("%s after half-close: %q", c.sni, rest)
		}
		conn.Close()
	}
	conn, err := h.tlsDial("wrong.example.com", roots)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(conn)
	conn.Close()
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "wrong.example.com" })
	if len(b) != 0 || !strings.Contains(tr.Reason, "TLS to the backend (BackendTLSPolicy default/wrong, SNI secure.internal)") ||
		!strings.Contains(tr.Reason, "unknown authority") {
		t.Errorf("wrong CA: %q, trace %q", b, tr.Reason)
	}
}

func TestParseServerHello(t *testing.T) {
	// A TLS 1.2 ServerHello with ALPN "h2" (session id of 2 bytes).
	body := []byte{3, 3}
	body = append(body, make([]byte, 32)...)
	body = append(body, 2, 9, 9, 0x13, 0x01, 0)
	ext := []byte{0, 16, 0, 5, 0, 3, 2, 'h', '2'}
	body = append(body, byte(len(ext)>>8), byte(len(ext)))
	body = append(body, ext...)
	hs := append([]byte{2, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	rec := append([]byte{22, 3, 3, byte(len(hs) >> 8), byte(len(hs))}, hs...)
	if v, alpn := parseServerHello(rec); v != tls.VersionTLS12 || alpn != "h2" {
		t.Errorf("got %x %q", v, alpn)
	}
	for _, bad := range [][]byte{nil, rec[:20], []byte("HTTP/1.1 200 OK\r\n\r\n")} {
		if v, alpn := parseServerHello(bad); v != 0 || alpn != "" {
			t.Errorf("%q: %x %q", bad, v, alpn)
		}
	}
}

// TestTLSPassthroughEchoGreetsWaitingClientsSoon: through a passthrough
// TLSRoute, too, the echo greets a client that waits for its greeting
// (the conformance TLSRoute tests' TCP client) at once after a first one
// waited out the window for an HTTP client.
func TestTLSPassthroughEchoGreetsWaitingClientsSoon(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			tlsListenerTable("pass", "abc.example.com", table.TLSModePassthrough, nil,
				sniRouteTo("pass", "abc.example.com", echo("tls-echo", 1))))))
	})
	dial := func() net.Conn {
		c, err := h.tlsDial("abc.example.com", &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	echoSendOnce(t, dial()) // waits out the window
	start := time.Now()
	const conns = 10
	for i := range conns {
		if d := echoSendOnce(t, dial()); d > 500*time.Millisecond {
			t.Fatalf("connection %d greeted after %v", i+2, d)
		}
	}
	t.Logf("%d more connections in %v", conns, time.Since(start))
}
