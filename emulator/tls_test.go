package emulator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// httpsClient is an HTTP client for the harness that sends SNI sni (the
// URL's host is the gateway's IP) and speaks h2 when h2 is set, else
// HTTP/1.1 only.
func (h *harness) httpsClient(sni string, roots *tls.Config, h2 bool) *http.Client {
	conf := roots.Clone()
	conf.ServerName = sni
	tr := &http.Transport{Proxy: nil, TLSClientConfig: conf, Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP1(true)
	conf.NextProtos = []string{"http/1.1"}
	if h2 {
		tr.Protocols.SetHTTP2(true)
		tr.Protocols.SetHTTP1(false)
	}
	h.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// httpsGet sends GET https://<gateway>/path with Host host and returns the
// response read completely, and its trace.
func (h *harness) httpsGet(c *http.Client, host, path string) (result, *http.Response, Trace) {
	h.t.Helper()
	req := h.request("GET", host, path)
	req.URL.Scheme = "https"
	id := fmt.Sprint(testIDs.Add(1))
	req.Header.Set("X-Test-Id", id)
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatalf("GET https://%s%s: %v", host, path, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tr := waitTrace(h.t, h.s, func(t Trace) bool { return t.RequestHeaders.Get("X-Test-Id") == id })
	return result{resp.StatusCode, resp.Header, body}, resp, tr
}

// TestHTTPSCertificateBySNI: listeners sharing a port each serve their own
// certificate; the SNI picks the most specific listener (exact, longer
// wildcard, shorter wildcard, no hostname); RSA and ECDSA both work.
func TestHTTPSCertificateBySNI(t *testing.T) {
	ca := newTestCA(t, "test CA")
	exact := ca.certificate("exact", certOpts{dnsNames: []string{"app.example.com"}, rsa: true})
	longer := ca.certificate("longer", certOpts{dnsNames: []string{"*.api.example.com"}})
	shorter := ca.certificate("shorter", certOpts{dnsNames: []string{"*.example.com", "*.web.example.com"}, cn: "*.example.com"})
	any := ca.certificate("any", certOpts{dnsNames: []string{"fallback.test"}})
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("exact", "app.example.com", []*table.Certificate{exact}, vhost("", rule("exact", prefix("/"), echo("exact", 1)))),
			httpsListener("longer", "*.api.example.com", []*table.Certificate{longer}, vhost("", rule("longer", prefix("/"), echo("longer", 1)))),
			httpsListener("shorter", "*.example.com", []*table.Certificate{shorter}, vhost("", rule("shorter", prefix("/"), echo("shorter", 1)))),
			httpsListener("any", "", []*table.Certificate{any}, vhost("", rule("any", prefix("/"), echo("any", 1)))),
		)))
	})
	roots := &tls.Config{RootCAs: ca.pool()}
	for _, c := range []struct{ sni, cn, service string }{
		{"app.example.com", "app.example.com", "exact"},
		{"APP.example.com", "app.example.com", "exact"},
		{"v1.api.example.com", "*.api.example.com", "longer"},
		{"web.example.com", "*.example.com", "shorter"},
		{"deep.web.example.com", "*.example.com", "shorter"},
		{"example.org", "fallback.test", "any"},
		{"", "fallback.test", "any"},
	} {
		conf := roots.Clone()
		conf.InsecureSkipVerify = c.sni == "example.org" // the catch-all's certificate does not name it
		conn, err := h.tlsDial(c.sni, conf)
		if err != nil {
			t.Errorf("SNI %q: %v", c.sni, err)
			continue
		}
		if got := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; got != c.cn {
			t.Errorf("SNI %q: certificate %q, want %q", c.sni, got, c.cn)
		}
		conn.Close()
		if c.sni == "" || c.sni == "example.org" {
			continue
		}
		res, _, tr := h.httpsGet(h.httpsClient(c.sni, roots, true), strings.ToLower(c.sni), "/")
		if res.status != 200 || res.echo(t).Service != c.service || tr.SNI != c.sni {
			t.Errorf("SNI %q: %d %q, trace SNI %q", c.sni, res.status, res.body, tr.SNI)
		}
	}
}

// TestHTTPSMisdirectedRequests is the conformance test
// HTTPRouteHTTPSListenerDetectMisdirectedRequests: a request whose Host
// selects another listener than the SNI did gets 421.
func TestHTTPSMisdirectedRequests(t *testing.T) {
	ca := newTestCA(t, "test CA")
	cert := []*table.Certificate{ca.certificate("tls-validity-checks-certificate", certOpts{dnsNames: []string{
		"example.org", "second-example.org", "*.wildcard.org", "unknown-example.org"}})}
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("https-with-hostname", "second-example.org", cert, vhost("second-example.org", rule("v2", prefix("/"), echo("v2", 1)))),
			httpsListener("https-with-hostname-matching-wildcard", "fourth-example.wildcard.org", cert,
				vhost("fourth-example.wildcard.org", rule("v4", prefix("/"), echo("v1", 1)))),
			httpsListener("https-with-wildcard-hostname", "*.wildcard.org", cert, vhost("*.wildcard.org", rule("v3", prefix("/"), echo("v3", 1)))),
			httpsListener("https", "", cert, vhost("example.org", rule("v1", prefix("/"), echo("v1", 1)))),
		)))
	})
	roots := &tls.Config{RootCAs: ca.pool()}
	cases := []struct {
		sni, host string
		status    int
		backend   string
	}{
		{"example.org", "example.org", 200, "v1"},
		{"example.org", "second-example.org", 421, ""},
		{"example.org", "unknown-example.org", 404, ""},
		{"second-example.org", "second-example.org", 200, "v2"},
		{"second-example.org", "example.org", 421, ""},
		{"second-example.org", "unknown-example.org", 421, ""},
		{"third-example.wildcard.org", "third-example.wildcard.org", 200, "v3"},
		{"third-example.wildcard.org", "fith-example.wildcard.org", 200, "v3"},
		{"third-example.wildcard.org", "fourth-example.wildcard.org", 421, ""},
		{"third-example.wildcard.org", "second-example.org", 421, ""},
		{"third-example.wildcard.org", "unknown-example.org", 421, ""},
		{"fourth-example.wildcard.org", "fourth-example.wildcard.org", 200, "v1"},
		{"fourth-example.wildcard.org", "fith-example.wildcard.org", 421, ""},
		{"unknown-example.org", "example.org", 200, "v1"},
		{"unknown-example.org", "unknown-example.org", 404, ""},
	}
	for _, c := range cases {
		for _, h2 := range []bool{true, false} {
			res, resp, tr := h.httpsGet(h.httpsClient(c.sni, roots, h2), c.host, "/detect-misdirected-requests")
			if res.status != c.status || (c.backend != "" && res.echo(t).Service != c.backend) {
				t.Errorf("SNI %s, Host %s (h2 %t): %d %s", c.sni, c.host, h2, res.status, res.body)
			}
			if h2 != (resp.ProtoMajor == 2) {
				t.Errorf("SNI %s: proto %s", c.sni, resp.Proto)
			}
			if c.status == 421 && (tr.Status != 421 || !strings.Contains(tr.Reason, "misdirected request")) {
				t.Errorf("SNI %s, Host %s: trace %d %q", c.sni, c.host, tr.Status, tr.Reason)
			}
		}
	}
}

// TestHTTPSALPN: h2 and http/1.1 are offered; traces carry the negotiated
// protocol and TLS version.
func TestHTTPSALPN(t *testing.T) {
	ca := newTestCA(t, "test CA")
	cert := []*table.Certificate{ca.certificate("app", certOpts{dnsNames: []string{"app.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("https", "app.example.com", cert, vhost("", rule("app", prefix("/"), echo("app", 1)))))))
	})
	roots := &tls.Config{RootCAs: ca.pool()}
	for _, h2 := range []bool{true, false} {
		res, resp, tr := h.httpsGet(h.httpsClient("app.example.com", roots, h2), "app.example.com", "/alpn")
		want, proto := "http/1.1", "HTTP/1.1"
		if h2 {
			want, proto = "h2", "HTTP/2.0"
		}
		if res.status != 200 || resp.Proto != proto || tr.NegotiatedProtocol != want || tr.TLSVersion != "TLS 1.3" ||
			tr.Proto != proto || tr.Listener != "gateway/default/gw/listener/https" {
			t.Errorf("h2 %t: %d %s, trace %+v", h2, res.status, resp.Proto, tr)
		}
	}
	// A client that offers neither still gets HTTP/1.1 over TLS 1.2.
	conf := roots.Clone()
	conf.MaxVersion = tls.VersionTLS12
	conn, err := h.tlsDial("app.example.com", conf)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /no-alpn HTTP/1.1\r\nHost: app.example.com\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(b), "HTTP/1.1 200") {
		t.Errorf("no ALPN: %.60q", b)
	}
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.Path == "/no-alpn" })
	if tr.TLSVersion != "TLS 1.2" || tr.NegotiatedProtocol != "" {
		t.Errorf("no ALPN trace: %q %q", tr.TLSVersion, tr.NegotiatedProtocol)
	}
}

// TestHTTPSClientCertificates: frontend validation with AllowValidOnly
// refuses a handshake without a valid client certificate; with
// AllowInsecureFallback it lets it in and the trace says what it got.
func TestHTTPSClientCertificates(t *testing.T) {
	ca := newTestCA(t, "server CA")
	clients := newTestCA(t, "client CA")
	strangers := newTestCA(t, "other CA")
	cert := []*table.Certificate{ca.certificate("app", certOpts{dnsNames: []string{"strict.example.com", "lenient.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		strict := httpsListener("strict", "strict.example.com", cert, vhost("", rule("strict", prefix("/"), echo("strict", 1))))
		strict.TLS.ClientCAs, strict.TLS.ClientCARefs = clients.pem, []string{"ConfigMap default/client-ca"}
		strict.TLS.ClientValidationMode = string(table.AllowValidOnly)
		lenient := httpsListener("lenient", "lenient.example.com", cert, vhost("", rule("lenient", prefix("/"), echo("lenient", 1))))
		lenient.TLS.ClientCAs, lenient.TLS.ClientCARefs = clients.pem, []string{"ConfigMap default/client-ca"}
		lenient.TLS.ClientValidationMode = string(table.AllowInsecureFallback)
		return newTable(gateway("gw", "127.0.0.1", port(p, strict, lenient)))
	})
	good, bad := clients.clientCert("alice"), strangers.clientCert("mallory")
	get := func(sni string, cert *tls.Certificate) (result, Trace, error) {
		seen := len(h.s.Traces())
		defer func() {
			// Explain runs the same handshake with the same certificate:
			// the same listener, verdict or refusal.
			ex := ExplainProbe(h.tab, Probe{Address: h.ip, Port: h.port, TLS: true, SNI: sni, ALPN: httpsALPN,
				ClientCert: cert, Request: h.request("GET", sni, "/")})
			var tr Trace
			for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
				if ts := h.s.Traces(); len(ts) > seen {
					tr = ts[seen]
					break
				}
			}
			if ex.Listener != tr.Listener || ex.ClientCert != tr.ClientCert || ex.End != tr.End ||
				(tr.End == EndRefused && ex.Reason != tr.Reason) || ex.Certificate != "default/app" {
				t.Errorf("%s: explain says %+v\nserved %+v", sni, ex, tr)
			}
		}()
		conf := &tls.Config{RootCAs: ca.pool()}
		if cert != nil {
			conf.Certificates = []tls.Certificate{*cert}
		}
		c := h.httpsClient(sni, conf, true)
		req := h.request("GET", sni, "/")
		req.URL.Scheme = "https"
		id := fmt.Sprint(testIDs.Add(1))
		req.Header.Set("X-Test-Id", id)
		resp, err := c.Do(req)
		if err != nil {
			return result{}, Trace{}, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr := waitTrace(t, h.s, func(t Trace) bool { return t.RequestHeaders.Get("X-Test-Id") == id })
		return result{resp.StatusCode, resp.Header, body}, tr, nil
	}
	// AllowValidOnly.
	if res, tr, err := get("strict.example.com", &good); err != nil || res.status != 200 || tr.ClientCert != "CN=alice (verified)" {
		t.Errorf("strict, valid: %v %d %q", err, res.status, tr.ClientCert)
	} else if e := res.echo(t); e.TLS == nil || len(e.TLS.PeerCertificates) != 0 {
		// The client's certificate went to the gateway, not to the backend.
		t.Errorf("strict, valid: the echo reports %+v", e.TLS)
	}
	for _, c := range []*tls.Certificate{nil, &bad} {
		if _, _, err := get("strict.example.com", c); err == nil {
			t.Errorf("strict: a client without a valid certificate got in")
		}
		tr := waitTrace(t, h.s, func(t Trace) bool {
			return t.SNI == "strict.example.com" && strings.Contains(t.Reason, "client certificate validation failed")
		})
		if tr.Listener != "gateway/default/gw/listener/strict" || !strings.Contains(tr.Reason, "ConfigMap default/client-ca") {
			t.Errorf("strict trace: %+v", tr)
		}
	}
	// AllowInsecureFallback.
	for _, c := range []struct {
		cert *tls.Certificate
		want string
	}{
		{&good, "CN=alice (verified)"},
		{nil, "none (let in: AllowInsecureFallback)"},
		{&bad, "CN=mallory (not valid: x509: certificate signed by unknown authority"},
	} {
		res, tr, err := get("lenient.example.com", c.cert)
		if err != nil || res.status != 200 || !strings.HasPrefix(tr.ClientCert, c.want) {
			t.Errorf("lenient: %v %d %q, want %q", err, res.status, tr.ClientCert, c.want)
		}
	}
}

// TestHTTPSBadCertificates: an expired certificate is served (clients
// refuse it; the trace says it expired); a key that does not match its
// certificate, or data that is not PEM, makes the listener refuse
// connections, and a port with nothing usable is not served at all. The
// other listeners keep serving.
func TestHTTPSBadCertificates(t *testing.T) {
	ca := newTestCA(t, "test CA")
	good := ca.certificate("good", certOpts{dnsNames: []string{"good.example.com"}})
	expired := ca.certificate("expired", certOpts{dnsNames: []string{"expired.example.com"}, expired: true})
	other := ca.certificate("other", certOpts{dnsNames: []string{"mismatch.example.com"}})
	mismatch := ca.certificate("mismatch", certOpts{dnsNames: []string{"mismatch.example.com"}})
	mismatch.KeyPEM = other.KeyPEM
	notPEM := &table.Certificate{Secret: "default/not-pem", CertPEM: []byte("not a certificate"), KeyPEM: []byte("nor a key")}
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("good", "good.example.com", []*table.Certificate{good}, vhost("", rule("good", prefix("/"), echo("good", 1)))),
			httpsListener("expired", "expired.example.com", []*table.Certificate{expired}, vhost("", rule("e", prefix("/"), echo("e", 1)))),
			httpsListener("mismatch", "mismatch.example.com", []*table.Certificate{mismatch}, vhost("", rule("m", prefix("/"), echo("m", 1)))),
			httpsListener("notpem", "notpem.example.com", []*table.Certificate{notPEM}, vhost("", rule("n", prefix("/"), echo("n", 1)))),
		)))
	})
	roots := &tls.Config{RootCAs: ca.pool()}
	if _, err := h.tlsDial("expired.example.com", roots); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired certificate: %v", err)
	}
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "expired.example.com" })
	if !strings.Contains(tr.Reason, "the client aborted the handshake") || !strings.Contains(tr.Reason, "Secret default/expired, which expired at") {
		t.Errorf("expired trace: %q", tr.Reason)
	}
	for _, c := range []struct{ sni, want string }{
		{"mismatch.example.com", "Secret default/mismatch: tls: private key does not match public key"},
		{"notpem.example.com", "Secret default/not-pem: tls: failed to find any PEM data in certificate input"},
	} {
		if _, err := h.tlsDial(c.sni, roots); err == nil || !strings.Contains(err.Error(), "unrecognized name") {
			t.Errorf("%s: %v", c.sni, err)
		}
		tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == c.sni })
		if !strings.Contains(tr.Reason, "refused: listener gateway/default/gw/listener/") || !strings.Contains(tr.Reason, c.want) {
			t.Errorf("%s trace: %q", c.sni, tr.Reason)
		}
	}
	if res, _, _ := h.httpsGet(h.httpsClient("good.example.com", roots, true), "good.example.com", "/"); res.status != 200 {
		t.Errorf("good listener: %d", res.status)
	}

	// Nothing usable on a port: it is not served, and says why.
	p := freePort(t, "127.0.0.1")
	rep := h.s.Apply(newTable(gateway("gw", "127.0.0.1", port(p, httpsListener("notpem", "", []*table.Certificate{notPEM})))))
	if rep.Ports[0].Bound != "" || !strings.Contains(rep.Ports[0].NotServed, "HTTPS listener notpem: no usable certificate (Secret default/not-pem") {
		t.Errorf("report %+v", rep.Ports[0])
	}
}

// TestTLSPortBadClients: a ClientHello without SNI when no listener is
// without a hostname, an SNI no listener serves, plain HTTP, garbage, and
// a client that says nothing are refused cleanly and traced; the port
// keeps serving.
func TestTLSPortBadClients(t *testing.T) {
	ca := newTestCA(t, "test CA")
	cert := []*table.Certificate{ca.certificate("app", certOpts{dnsNames: []string{"app.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("https", "app.example.com", cert, vhost("", rule("app", prefix("/"), echo("app", 1)))))))
	})
	roots := &tls.Config{RootCAs: ca.pool()}
	for _, c := range []struct{ sni, reason string }{
		{"", "refused: the ClientHello has no SNI and no listener of port"},
		{"other.example.com", `refused: no listener of port ` + fmt.Sprint(h.port) + ` matches SNI "other.example.com"`},
	} {
		_, err := h.tlsDial(c.sni, roots)
		if err == nil || !strings.Contains(err.Error(), "unrecognized name") {
			t.Errorf("SNI %q: %v", c.sni, err)
		}
		tr := waitTrace(t, h.s, func(t Trace) bool { return strings.HasPrefix(t.Reason, c.reason) })
		if tr.Gateway != "gateway/default/gw" || tr.SNI != c.sni || tr.Proto != "TLS" {
			t.Errorf("SNI %q: trace %+v", c.sni, tr)
		}
	}
	raw := func(send string) string {
		c, err := net.Dial("tcp", h.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if send == "" {
			return ""
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if send != "" {
			_, _ = io.WriteString(c, send)
		}
		if tc, ok := c.(*net.TCPConn); ok && send != "" {
			_ = tc.CloseWrite()
		}
		b, _ := io.ReadAll(c)
		return string(b)
	}
	// Plain HTTP gets a plain 400.
	if got := raw("GET / HTTP/1.1\r\nHost: app.example.com\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.0 400 Bad Request") || !strings.Contains(got, "use https://") {
		t.Errorf("plain HTTP: %q", got)
	}
	tr := waitTrace(t, h.s, func(t Trace) bool { return strings.HasPrefix(t.Reason, "plain HTTP on a TLS port") })
	if tr.Status != 400 || tr.Method != "GET" {
		t.Errorf("plain HTTP trace: %+v", tr)
	}
	// Garbage is dropped.
	if got := raw("\x00\x01garbage garbage\n"); got != "" {
		t.Errorf("garbage answered %q", got)
	}
	waitTrace(t, h.s, func(t Trace) bool { return strings.HasPrefix(t.Reason, "not TLS: the client's first bytes") })
	// A client that connects and leaves.
	raw("")
	waitTrace(t, h.s, func(t Trace) bool { return t.Reason == "the client closed the connection before sending a ClientHello" })
	// Still serving.
	if res, _, _ := h.httpsGet(h.httpsClient("app.example.com", roots, true), "app.example.com", "/"); res.status != 200 {
		t.Errorf("after bad clients: %d", res.status)
	}
}

// TestTLSHotReload: an unchanged TLS port keeps its socket and its open
// connections across Applies; new connections get the new certificate; a
// port that switches between HTTP and HTTPS is re-bound on the same port.
func TestTLSHotReload(t *testing.T) {
	ca := newTestCA(t, "test CA")
	build := func(p int32, secret, service string) *table.Table {
		cert := []*table.Certificate{ca.certificate(secret, certOpts{dnsNames: []string{"app.example.com"}, cn: secret})}
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("https", "app.example.com", cert, vhost("", rule("app", prefix("/"), echo(service, 1)))))))
	}
	h := serve(t, func(p int32) *table.Table { return build(p, "first", "v1") })
	roots := &tls.Config{RootCAs: ca.pool()}
	c := h.httpsClient("app.example.com", roots, true)
	if res, _, _ := h.httpsGet(c, "app.example.com", "/"); res.echo(t).Service != "v1" {
		t.Fatalf("before: %s", res.body)
	}
	rep := h.apply(build(h.port, "second", "v2"))
	if !rep.Ports[0].Reused {
		t.Errorf("TLS port re-bound: %+v", rep.Ports[0])
	}
	// The open HTTP/2 connection switches to the new routes.
	res, resp, _ := h.httpsGet(c, "app.example.com", "/")
	if res.echo(t).Service != "v2" || resp.TLS.PeerCertificates[0].Subject.CommonName != "first" {
		t.Errorf("open connection after reload: %s, certificate %s", res.body, resp.TLS.PeerCertificates[0].Subject.CommonName)
	}
	conn, err := h.tlsDial("app.example.com", roots)
	if err != nil {
		t.Fatal(err)
	}
	if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "second" {
		t.Errorf("new connection got certificate %q", cn)
	}
	conn.Close()

	// HTTP → HTTPS → HTTP on the same port.
	t0 := time.Now()
	rep = h.apply(simpleTable("127.0.0.1", h.port, "plain"))
	t.Logf("switch took %s", time.Since(t0))
	if rep.Ports[0].Reused || rep.Ports[0].Bound != h.addr() {
		t.Errorf("HTTPS → HTTP: %+v", rep.Ports[0])
	}
	if res := h.get("x", "/"); res.status != 200 {
		t.Errorf("HTTP after HTTPS: %d", res.status)
	}
	rep = h.apply(build(h.port, "third", "v3"))
	if rep.Ports[0].Reused || rep.Ports[0].Bound != h.addr() {
		t.Errorf("HTTP → HTTPS: %+v", rep.Ports[0])
	}
	if res, _, _ := h.httpsGet(h.httpsClient("app.example.com", roots, false), "app.example.com", "/"); res.echo(t).Service != "v3" {
		t.Errorf("HTTPS after HTTP: %s", res.body)
	}
	t.Logf("body done at %s", time.Since(t0))
}

// TestTLSCloseEndsStreams: Close waits for TLSRoute streams until its
// context ends, then closes them.
func TestTLSCloseEndsStreams(t *testing.T) {
	ca := newTestCA(t, "test CA")
	backend := lineServer(t, "plain", nil)
	cert := []*table.Certificate{ca.certificate("db", certOpts{dnsNames: []string{"db.example.com"}})}
	s := New(Config{})
	p := freePort(t, "127.0.0.1")
	rep := s.Apply(newTable(gateway("gw", "127.0.0.1", port(p,
		tlsListenerTable("tls", "", table.TLSModeTerminate, cert, sniRouteTo("db", "", mapped("db", 1, backend)))))))
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", rep.Ports[0].Bound, &tls.Config{RootCAs: ca.pool(), ServerName: "db.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_ = s.Close(ctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s", d)
	}
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadAll(conn); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("stream not closed: %v", err)
	}
}
