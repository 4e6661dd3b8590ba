package emulator

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// TestNotFoundNamesWhereHostIsServed: a request for a host that another
// Gateway serves gets a 404 whose body names that Gateway's address:port
// and the curl line that reaches it; the trace carries the same hint. A
// 404 for a path of a host this port serves names nothing.
func TestNotFoundNamesWhereHostIsServed(t *testing.T) {
	p2 := freePort(t, "127.0.0.2")
	h := serve(t, func(p int32) *table.Table {
		return newTable(
			gateway("a", "127.0.0.1", port(p, listener("http", "a.example.com", vhost("", rule("a", exact("/only"), echo("a", 1)))))),
			gateway("b", "127.0.0.2", port(p2, listener("http", "b.example.com", vhost("", rule("b", prefix("/"), echo("b", 1)))))),
		)
	})
	r := h.get("b.example.com", "/x")
	want := fmt.Sprintf("host b.example.com is served on http://b.example.com:%d (gateway/default/b, listener gateway/default/b/listener/http)", p2)
	wantCurl := fmt.Sprintf("try: curl -H 'Host: b.example.com' http://127.0.0.2:%d/x", p2)
	if r.status != 404 || !strings.Contains(string(r.body), want) || !strings.Contains(string(r.body), wantCurl) {
		t.Fatalf("got %d %q\nwant a 404 naming %q and %q", r.status, r.body, want, wantCurl)
	}
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.Host == "b.example.com" })
	if tr.Hint != wantCurl || !strings.Contains(tr.Reason, want) {
		t.Errorf("trace hint %q reason %q", tr.Hint, tr.Reason)
	}
	// The right address works as printed.
	if r2 := h.do(mustRequest(t, fmt.Sprintf("http://127.0.0.2:%d/x", p2), "b.example.com")); r2.status != 200 {
		t.Errorf("the suggested address answers %d", r2.status)
	}
	// A host served here, a path no rule matches: nothing elsewhere.
	if r := h.get("a.example.com", "/other"); r.status != 404 || strings.Contains(string(r.body), "served on") {
		t.Errorf("got %d %q", r.status, r.body)
	}
}

func mustRequest(t *testing.T, url, host string) *http.Request {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	return req
}

// httpsTwoNames serves app.example.com and api.example.com over HTTPS on
// one port.
func httpsTwoNames(t *testing.T) (*harness, *testCA) {
	ca := newTestCA(t, "test CA")
	app := ca.certificate("app", certOpts{dnsNames: []string{"app.example.com"}})
	api := ca.certificate("api", certOpts{dnsNames: []string{"api.example.com"}})
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("app", "app.example.com", []*table.Certificate{app}, vhost("", rule("app", prefix("/"), echo("app", 1)))),
			httpsListener("api", "api.example.com", []*table.Certificate{api}, vhost("", rule("api", prefix("/"), echo("api", 1)))),
		)))
	})
	return h, ca
}

// TestMisdirectedNamesTheCurlLine: a 421 (SNI of one listener, Host of
// another) says how to open a connection for that host.
func TestMisdirectedNamesTheCurlLine(t *testing.T) {
	h, ca := httpsTwoNames(t)
	c := h.httpsClient("app.example.com", &tls.Config{RootCAs: ca.pool()}, false)
	r, _, tr := h.httpsGet(c, "api.example.com", "/v1")
	want := fmt.Sprintf("curl -k --resolve api.example.com:%d:127.0.0.1 https://api.example.com:%d/v1", h.port, h.port)
	if r.status != 421 || !strings.Contains(string(r.body), want) || !strings.Contains(tr.Hint, want) {
		t.Fatalf("got %d %q, trace hint %q; want the line %q", r.status, r.body, tr.Hint, want)
	}
}

// TestRefusedHandshakeSaysWhatToType: SNI "localhost", an IP, an unknown
// name, no SNI and plain HTTP on the TLS port are refused, and every trace
// (and the 400 to plain HTTP) carries the curl --resolve line that works.
func TestRefusedHandshakeSaysWhatToType(t *testing.T) {
	h, _ := httpsTwoNames(t)
	line := func(name, path string) string {
		return fmt.Sprintf("curl -k --resolve %s:%d:127.0.0.1 https://%s:%d%s", name, h.port, name, h.port, path)
	}
	for _, c := range []struct{ sni, why string }{
		{"localhost", `not by a Host header`},
		{"nope.example.org", `no listener or TLSRoute of this port serves SNI "nope.example.org"`},
	} {
		conn, err := h.tlsDial(c.sni, &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			conn.Close()
			t.Fatalf("SNI %q: handshake succeeded", c.sni)
		}
		tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == c.sni && t.End == EndRefused })
		if !strings.Contains(tr.Hint, c.why) || !strings.Contains(tr.Hint, "try: "+line("app.example.com", "/")) ||
			!strings.Contains(tr.Hint, "this port serves app.example.com, api.example.com") {
			t.Errorf("SNI %q: hint %q", c.sni, tr.Hint)
		}
	}
	// No SNI at all: a client connecting to an IP sends none (TLS has no
	// SNI for IP addresses), as curl -k https://127.0.0.1:8443/ does.
	raw, err := net.Dial("tcp", h.addr())
	if err != nil {
		t.Fatal(err)
	}
	_ = tls.Client(raw, &tls.Config{InsecureSkipVerify: true}).Handshake()
	raw.Close()
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "" && t.End == EndRefused && t.Method == "" })
	if !strings.Contains(tr.Hint, "no SNI") || !strings.Contains(tr.Hint, line("app.example.com", "/")) {
		t.Errorf("no SNI: hint %q", tr.Hint)
	}
	// Plain HTTP on the TLS port: the 400 says which line to use, keeping
	// the Host and path asked for.
	conn, err := net.Dial("tcp", h.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "GET /v1/users HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	want := line("api.example.com", "/v1/users")
	if resp.StatusCode != 400 || !strings.Contains(string(body), want) {
		t.Errorf("plain HTTP: %d %q, want the line %q", resp.StatusCode, body, want)
	}
	tr = waitTrace(t, h.s, func(t Trace) bool { return t.Method == "GET" && t.End == EndRefused })
	if !strings.Contains(tr.Hint, "not plain HTTP") || !strings.Contains(tr.Hint, want) {
		t.Errorf("plain HTTP: trace hint %q", tr.Hint)
	}
}

// TestRedirectToMappedPort: a redirect to a port gwdev could not bind, and
// serves on port+offset, points at the port gwdev serves, and the trace
// says it was rewritten.
func TestRedirectToMappedPort(t *testing.T) {
	hp, offset := heldPort(t)
	s := New(Config{PortOffset: offset})
	defer s.Close(context.Background())
	p := freePort(t, "127.0.0.1")
	ca := newTestCA(t, "test CA")
	cert := ca.certificate("app", certOpts{dnsNames: []string{"app.example.com"}})
	rep := s.Apply(newTable(gateway("gw", "127.0.0.1",
		port(p, listener("http", "", vhost("", redirectRule("up", "/", table.Redirect{Scheme: "https", Port: hp, StatusCode: http.StatusFound})))),
		port(hp, httpsListener("https", "", []*table.Certificate{cert}, vhost("", rule("app", prefix("/"), echo("app", 1))))),
	)))
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req := mustRequest(t, fmt.Sprintf("http://127.0.0.1:%d/x", p), "app.example.com")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := fmt.Sprintf("https://app.example.com:%d/x", int(hp)+offset)
	if got := resp.Header.Get("Location"); got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	tr := waitTrace(t, s, func(t Trace) bool { return t.Location != "" })
	note := fmt.Sprintf("port mapping: Location https://app.example.com:%d/x rewritten to port %d", hp, int(hp)+offset)
	if tr.Location != want || !strings.Contains(strings.Join(tr.Filters, "\n"), note) {
		t.Errorf("trace location %q filters %q, want a note %q", tr.Location, tr.Filters, note)
	}
}

// TestRefusedTLSRouteSNISaysWhatToType: an SNI that a TLS listener's
// wildcard takes but no TLSRoute serves is refused with the names the port
// does serve, as an openssl s_client line for a TLSRoute's name.
func TestRefusedTLSRouteSNISaysWhatToType(t *testing.T) {
	dbCA := newTestCA(t, "database CA")
	db := lineServer(t, "db", dbCA.serverConfig("db.example.com"))
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			tlsListenerTable("tls", "*.example.com", table.TLSModePassthrough, nil,
				sniRouteTo("db", "db.example.com", mapped("db", 1, db))))))
	})
	conn, err := h.tlsDial("mail.example.com", &tls.Config{InsecureSkipVerify: true})
	if err == nil {
		conn.Close()
		t.Fatal("SNI mail.example.com: handshake succeeded")
	}
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "mail.example.com" })
	want := fmt.Sprintf(`no listener or TLSRoute of this port serves SNI "mail.example.com"; try: openssl s_client -connect 127.0.0.1:%d -servername db.example.com`, h.port)
	if tr.Hint != want {
		t.Errorf("hint %q\nwant %q", tr.Hint, want)
	}
}

// TestHintsTrustTheKnownCA: with a CA file gwdev knows that verifies the
// listener's certificate, the 421's body and hint and a refused
// handshake's hint say curl --cacert FILE, not -k; a CA file that does not
// verify it leaves -k. The 421 body says "Misdirected Request" once.
func TestHintsTrustTheKnownCA(t *testing.T) {
	ca := newTestCA(t, "test CA")
	other := newTestCA(t, "other CA")
	dir := t.TempDir()
	caFile, otherFile := filepath.Join(dir, "ca dir", "ca.crt"), filepath.Join(dir, "other.crt")
	if err := os.MkdirAll(filepath.Dir(caFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.WriteFile(caFile, ca.pem, 0o600) != nil || os.WriteFile(otherFile, other.pem, 0o600) != nil {
		t.Fatal("writing CA files")
	}
	app := ca.certificate("app", certOpts{dnsNames: []string{"app.example.com"}})
	api := ca.certificate("api", certOpts{dnsNames: []string{"api.example.com"}})
	for _, c := range []struct {
		files []string
		trust string
	}{
		{[]string{filepath.Join(dir, "missing.crt"), otherFile, caFile}, "--cacert '" + caFile + "'"},
		{[]string{otherFile}, "-k"},
	} {
		h := &harness{t: t, s: New(Config{CAFiles: c.files}), ip: "127.0.0.1", port: freePort(t, "127.0.0.1")}
		t.Cleanup(func() { _ = h.s.Close(context.Background()) })
		h.apply(newTable(gateway("gw", "127.0.0.1", port(h.port,
			httpsListener("app", "app.example.com", []*table.Certificate{app}, vhost("", rule("app", prefix("/"), echo("app", 1)))),
			httpsListener("api", "api.example.com", []*table.Certificate{api}, vhost("", rule("api", prefix("/"), echo("api", 1))))))))
		cl := h.httpsClient("app.example.com", &tls.Config{RootCAs: ca.pool()}, false)
		r, _, tr := h.httpsGet(cl, "api.example.com", "/v1")
		want := fmt.Sprintf("curl %s --resolve api.example.com:%d:127.0.0.1 https://api.example.com:%d/v1", c.trust, h.port, h.port)
		if r.status != 421 || !strings.Contains(string(r.body), want) || !strings.Contains(tr.Hint, want) {
			t.Errorf("CA files %v: got %d %q, hint %q; want the line %q", c.files, r.status, r.body, tr.Hint, want)
		}
		if n := strings.Count(strings.ToLower(string(r.body)), "misdirected request"); n != 1 {
			t.Errorf("the 421 body says misdirected request %d times: %q", n, r.body)
		}
		if !strings.HasPrefix(string(r.body), "gwdev: Misdirected Request: the connection's SNI app.example.com selected listener") {
			t.Errorf("421 body %q", r.body)
		}
		conn, err := h.tlsDial("nope.example.org", &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			conn.Close()
			t.Fatal("handshake succeeded")
		}
		tr = waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "nope.example.org" && t.End == EndRefused })
		if want := fmt.Sprintf("try: curl %s --resolve ", c.trust); !strings.Contains(tr.Hint, want) {
			t.Errorf("CA files %v: refused handshake's hint %q lacks %q", c.files, tr.Hint, want)
		}
	}
}
