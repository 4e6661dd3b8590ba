package emulator

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// clientCertificate issues a client certificate as the engine puts a
// Gateway's spec.tls.backend.clientCertificateRef in the table.
func (ca *testCA) clientCertificate(secret, cn string) *table.Certificate {
	c, k := ca.issue(certOpts{client: true, cn: cn})
	return &table.Certificate{Secret: "default/" + secret, CertPEM: c, KeyPEM: k}
}

// mtlsBackend is a real HTTPS backend on loopback that answers with the
// common name of the client certificate it got ("-" : none). With clients
// set it requires one signed by that CA.
func mtlsBackend(t *testing.T, serverCA *testCA, clients *testCA) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn := "-"
		if len(r.TLS.PeerCertificates) > 0 {
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		fmt.Fprintf(w, "%s %s", r.Proto, cn)
	}))
	srv.TLS = serverCA.serverConfig("backend.internal")
	if clients != nil {
		srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
		srv.TLS.ClientCAs = clients.pool()
	}
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// TestBackendClientCertificate: with the Gateway's client certificate in
// the table, the gateway presents it to a real backend that requires one
// (HTTP/1.1 and HTTP/2, on new and reused connections), and the trace says
// so without the key; without it, or with one the backend's CA did not
// sign, the backend refuses the handshake and the client gets 502 with a
// reason; a backend that does not ask gets none.
func TestBackendClientCertificate(t *testing.T) {
	backendCA, clientCA, otherCA := newTestCA(t, "backend CA"), newTestCA(t, "client CA"), newTestCA(t, "other CA")
	gwCert := clientCA.clientCertificate("gw-client", "gateway")
	wrongCert := otherCA.clientCertificate("wrong-client", "impostor")
	strict := mtlsBackend(t, backendCA, clientCA)
	lax := mtlsBackend(t, backendCA, nil)
	h := serve(t, func(p int32) *table.Table {
		to := func(addr string, cert *table.Certificate) *table.Backend {
			b := mapped("api", 1, addr)
			b.TLS = &table.BackendTLS{Policy: "default/api-tls", SNI: "backend.internal", CACertificates: backendCA.pem,
				CARefs: []string{"ConfigMap default/backend-ca"}, ClientCertificate: cert}
			return b
		}
		h2 := to(strict, gwCert)
		h2.AppProtocol, h2.HTTP2 = "kubernetes.io/h2c", true
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("with", prefix("/with"), to(strict, gwCert)),
			rule("h2", prefix("/h2"), h2),
			rule("without", prefix("/without"), to(strict, nil)),
			rule("wrong", prefix("/wrong"), to(strict, wrongCert)),
			rule("lax", prefix("/lax"), to(lax, gwCert)),
			rule("plain", prefix("/plain"), to(lax, nil)),
		)))))
	})
	presented := "Secret default/gw-client presented"
	for _, c := range []struct{ path, body, note string }{
		{"/with", "HTTP/1.1 gateway", presented},
		{"/with", "HTTP/1.1 gateway", presented}, // a reused connection remembers its handshake
		{"/h2", "HTTP/2.0 gateway", presented},
		{"/lax", "HTTP/1.1 -", "Secret default/gw-client not presented: the backend did not ask for a client certificate"},
		{"/plain", "HTTP/1.1 -", ""},
	} {
		res, tr := h.traced(h.request(http.MethodGet, "www.example.com", c.path))
		if res.status != 200 || string(res.body) != c.body || tr.BackendClientCert != c.note {
			t.Errorf("%s: %d %q, trace %q", c.path, res.status, res.body, tr.BackendClientCert)
		}
		j, _ := json.Marshal(tr)
		if strings.Contains(string(j), "PRIVATE KEY") || strings.Contains(string(j), string(gwCert.KeyPEM[30:60])) {
			t.Errorf("%s: the trace holds key material: %s", c.path, j)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"/without", "it refused the handshake (alert: certificate required) [BackendTLSPolicy default/api-tls, SNI backend.internal; the backend requires a client certificate: the Gateway has none (spec.tls.backend.clientCertificateRef)]"},
		{"/wrong", "it refused the Gateway's client certificate (alert: unknown certificate authority) [BackendTLSPolicy default/api-tls, SNI backend.internal, client certificate Secret default/wrong-client]"},
	} {
		res, tr := h.traced(h.request(http.MethodGet, "www.example.com", c.path))
		if res.status != http.StatusBadGateway || !strings.HasSuffix(tr.Reason, c.want) {
			t.Errorf("%s: %d %q, trace %q", c.path, res.status, res.body, tr.Reason)
		}
	}
	if tr := h.explain(h.request(http.MethodGet, "www.example.com", "/with")); tr.BackendClientCert != "Secret default/gw-client (presented when the backend asks)" {
		t.Errorf("explain: %q", tr.BackendClientCert)
	}
}

// TestBackendClientCertificateToEcho: the echo backend reached over TLS
// asks for a client certificate and reports it the way the conformance
// echo server does (tls.peerCertificates, PEM), which is what the
// conformance test GatewayTLSBackendClientCertificate compares with the
// Secret's tls.crt; without one configured it reports none.
func TestBackendClientCertificateToEcho(t *testing.T) {
	appCA, clientCA := newTestCA(t, "app CA"), newTestCA(t, "client CA")
	echoCert := appCA.certificate("app-tls", certOpts{dnsNames: []string{"app.internal"}})
	gwCert := clientCA.clientCertificate("gw-client", "gateway")
	h := serve(t, func(p int32) *table.Table {
		to := func(cert *table.Certificate) *table.Backend {
			b := echo("app", 1)
			b.Target.EchoTLS = echoCert
			b.TLS = &table.BackendTLS{Policy: "default/app-tls", SNI: "app.internal", CACertificates: appCA.pem,
				CARefs: []string{"ConfigMap default/app-ca"}, ClientCertificate: cert}
			return b
		}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("with", prefix("/with"), to(gwCert)),
			rule("without", prefix("/without"), to(nil)),
		)))))
	})
	res, tr := h.traced(h.request(http.MethodGet, "abc.example.com", "/with"))
	e := res.echo(t)
	if res.status != 200 || e.TLS == nil || len(e.TLS.PeerCertificates) != 1 || e.TLS.PeerCertificates[0] != string(gwCert.CertPEM) ||
		tr.BackendClientCert != "Secret default/gw-client presented" {
		t.Errorf("with: %d %s, trace %q", res.status, res.body, tr.BackendClientCert)
	}
	res, tr = h.traced(h.request(http.MethodGet, "abc.example.com", "/without"))
	e = res.echo(t)
	if res.status != 200 || e.TLS == nil || len(e.TLS.PeerCertificates) != 0 || tr.BackendClientCert != "" {
		t.Errorf("without: %d %s, trace %q", res.status, res.body, tr.BackendClientCert)
	}
}

// TestTLSTerminateClientCertificate: a TLS listener in Terminate mode
// re-encrypts to a backend with a BackendTLSPolicy and presents the
// Gateway's client certificate to a backend that requires one.
func TestTLSTerminateClientCertificate(t *testing.T) {
	gwCA, beCA, clientCA := newTestCA(t, "gateway CA"), newTestCA(t, "backend CA"), newTestCA(t, "client CA")
	conf := beCA.serverConfig("secure.internal")
	conf.ClientAuth, conf.ClientCAs = tls.RequireAndVerifyClientCert, clientCA.pool()
	secure := lineServer(t, "secure", conf)
	cert := []*table.Certificate{gwCA.certificate("gw", certOpts{dnsNames: []string{"*.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		b := mapped("secure", 1, secure)
		b.TLS = &table.BackendTLS{Policy: "default/secure", SNI: "secure.internal", CACertificates: beCA.pem,
			CARefs: []string{"ConfigMap default/backend-ca"}, ClientCertificate: clientCA.clientCertificate("gw-client", "gateway")}
		return newTable(gateway("gw", "127.0.0.1", port(p,
			tlsListenerTable("tls", "*.example.com", table.TLSModeTerminate, cert, sniRouteTo("secure", "secure.example.com", b)))))
	})
	conn, err := h.tlsDial("secure.example.com", &tls.Config{RootCAs: gwCA.pool()})
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	if got := readLine(t, conn, r); got != "secure secure.internal" {
		t.Errorf("greeting %q", got)
	}
	conn.Close()
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "secure.example.com" && t.End != "" })
	if tr.BackendClientCert != "Secret default/gw-client presented" {
		t.Errorf("trace %q (reason %q)", tr.BackendClientCert, tr.Reason)
	}
}
