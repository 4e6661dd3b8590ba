package emulator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// TestBackendTLSPolicyToEcho: the echo backend serves TLS with its
// Service's Secret, so a BackendTLSPolicy is testable without a real
// backend: the right CA and hostname work (HTTP/1.1 and HTTP/2), a wrong CA,
// a wrong hostname or subjectAltNames fail with 502 and a trace that says
// why.
func TestBackendTLSPolicyToEcho(t *testing.T) {
	appCA, otherCA := newTestCA(t, "app CA"), newTestCA(t, "other CA")
	echoCert := appCA.certificate("app-tls", certOpts{dnsNames: []string{"app.internal"}})
	h := serve(t, func(p int32) *table.Table {
		policy := func(b *table.Backend, name, sni string, ca []byte) *table.Backend {
			b.Target.EchoTLS = echoCert
			b.TLS = &table.BackendTLS{Policy: "default/" + name, SNI: sni, CACertificates: ca, CARefs: []string{"ConfigMap default/" + name + "-ca"}}
			return b
		}
		grpcish := policy(echo("app", 1), "good", "app.internal", appCA.pem)
		grpcish.AppProtocol, grpcish.HTTP2 = "kubernetes.io/h2c", true
		san := policy(echo("app", 1), "san", "other.internal", appCA.pem)
		san.TLS.SubjectAltNames = []table.SubjectAltName{{Hostname: "app.internal"}}
		badSAN := policy(echo("app", 1), "badsan", "app.internal", appCA.pem)
		badSAN.TLS.SubjectAltNames = []table.SubjectAltName{{Hostname: "nope.internal"}}
		generated := echo("gen", 1)
		generated.TLS = &table.BackendTLS{Policy: "default/gen", SNI: "gen.internal", CACertificates: appCA.pem, CARefs: []string{"ConfigMap default/gen-ca"}}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("good", prefix("/good"), policy(echo("app", 1), "good", "app.internal", appCA.pem)),
			rule("h2", prefix("/h2"), grpcish),
			rule("san", prefix("/san"), san),
			rule("wrongca", prefix("/wrong-ca"), policy(echo("app", 1), "wrong-ca", "app.internal", otherCA.pem)),
			rule("wronghost", prefix("/wrong-host"), policy(echo("app", 1), "wrong-host", "db.internal", appCA.pem)),
			rule("badsan", prefix("/bad-san"), badSAN),
			rule("generated", prefix("/generated"), generated),
		)))))
	})
	for _, c := range []struct{ path, proto, sni string }{
		{"/good", "HTTP/1.1", "app.internal"},
		{"/h2", "HTTP/2.0", "app.internal"},
		{"/san", "HTTP/1.1", "other.internal"},
	} {
		res, tr := h.traced(h.request(http.MethodGet, "www.example.com", c.path))
		e := res.echo(t)
		if res.status != 200 || e.TLS == nil || e.TLS.ServerName != c.sni || e.Proto != c.proto || e.Host != "www.example.com" || tr.Upstream != "echo" {
			t.Errorf("%s: %d %s", c.path, res.status, res.body)
		}
	}
	for _, c := range []struct{ path, want string }{
		{"/wrong-ca", "its certificate is not signed by the CA certificates of ConfigMap default/wrong-ca-ca"},
		{"/wrong-host", "its certificate is not valid for db.internal"},
		{"/bad-san", "backend certificate matches none of the subjectAltNames"},
		{"/generated", "its certificate is not signed by the CA certificates of ConfigMap default/gen-ca"},
	} {
		res, tr := h.traced(h.request(http.MethodGet, "www.example.com", c.path))
		if res.status != http.StatusBadGateway || !strings.Contains(tr.Reason, c.want) || !strings.Contains(tr.Reason, "BackendTLSPolicy default/") ||
			!strings.HasPrefix(tr.Reason, "TLS to backend echo (default/") {
			t.Errorf("%s: %d, trace %q", c.path, res.status, tr.Reason)
		}
	}
}

// TestBackendTLSHTTP2ThenHTTP1 sends HTTP/2 and then HTTP/1.1 to one TLS
// backend: net/http rewrites the ALPN list of the TLS settings its HTTP/2
// transport is given, which must not leak into the HTTP/1.1 transport.
func TestBackendTLSHTTP2ThenHTTP1(t *testing.T) {
	ca := newTestCA(t, "app CA")
	echoCert := ca.certificate("app-tls", certOpts{dnsNames: []string{"app.internal"}})
	h := serve(t, func(p int32) *table.Table {
		withTLS := func(b *table.Backend) *table.Backend {
			b.Target.EchoTLS = echoCert
			b.TLS = &table.BackendTLS{Policy: "default/app", SNI: "app.internal", CACertificates: ca.pem, CARefs: []string{"ConfigMap default/app-ca"}}
			return b
		}
		h2 := withTLS(echo("app", 1))
		h2.AppProtocol, h2.HTTP2 = "kubernetes.io/h2c", true
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("h2", prefix("/h2"), h2),
			rule("h1", prefix("/h1"), withTLS(echo("app", 1))),
		)))))
	})
	for _, c := range []struct{ path, proto string }{{"/h2", "HTTP/2.0"}, {"/h1", "HTTP/1.1"}, {"/h2", "HTTP/2.0"}, {"/h1", "HTTP/1.1"}} {
		res, tr := h.traced(h.request(http.MethodGet, "www.example.com", c.path))
		if res.status != 200 || res.echo(t).Proto != c.proto {
			t.Fatalf("%s: %d %s (trace %q)", c.path, res.status, res.body, tr.Reason)
		}
	}
}
