package emulator

import (
	"crypto/tls"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// tlsBackend starts an HTTPS server with conf that answers its name, the
// SNI it got and the client certificate's CN; it returns the port.
func tlsBackend(t *testing.T, name string, conf *tls.Config) string {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn := ""
		if len(r.TLS.PeerCertificates) > 0 {
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		w.Write([]byte(name + " sni=" + r.TLS.ServerName + " client=" + cn))
	}))
	srv.TLS = conf
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

// indent puts PEM under a YAML block scalar.
func indent(pem []byte) string {
	return "    " + strings.ReplaceAll(strings.TrimSpace(string(pem)), "\n", "\n    ")
}

// TestXBackendTargets routes to XBackends (type ExternalHostname, hostname
// localhost, each dialled at its own port): a plain HTTP server; a TLS
// server with mode ServerOnly, the CA from a ConfigMap and the SNI from
// validation.hostname; the same server with another CA (refused: 502
// naming the certificate); a server that requires a client certificate,
// reached with mode ClientAndServer and the XBackend's clientCertificateRef
// (its CN reaches the server), and with mode ServerOnly (no certificate:
// the server refuses, 502).
func TestXBackendTargets(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("plain")) }))
	defer plain.Close()
	_, plainPort, _ := net.SplitHostPort(plain.Listener.Addr().String())
	serverCA, otherCA, clientCA := newTestCA(t, "server CA"), newTestCA(t, "other CA"), newTestCA(t, "client CA")
	securePort := tlsBackend(t, "secure", serverCA.serverConfig("secure.internal"))
	mconf := serverCA.serverConfig("secure.internal")
	mconf.ClientAuth, mconf.ClientCAs = tls.RequireAndVerifyClientCert, clientCA.pool()
	mtlsPort := tlsBackend(t, "mtls", mconf)
	clientCert, clientKey := clientCA.issue(certOpts{client: true, cn: "gateway-client"})
	b64 := base64.StdEncoding.EncodeToString
	manifests := strings.NewReplacer("PLAINPORT", plainPort, "SECUREPORT", securePort, "MTLSPORT", mtlsPort,
		"CA_GOOD", indent(serverCA.pem), "CA_OTHER", indent(otherCA.pem),
		"CLIENT_CRT", b64(clientCert), "CLIENT_KEY", b64(clientKey)).Replace(gatewayGW + `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /plain}}]
    backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: plain}]
  - matches: [{path: {type: PathPrefix, value: /secure}}]
    backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: secure}]
  - matches: [{path: {type: PathPrefix, value: /wrong-ca}}]
    backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: wrong-ca}]
  - matches: [{path: {type: PathPrefix, value: /mtls}}]
    backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: mtls}]
  - matches: [{path: {type: PathPrefix, value: /no-client-cert}}]
    backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: no-client-cert}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: plain}
spec:
  type: ExternalHostname
  externalHostname: {hostname: localhost}
  port: {number: PLAINPORT}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: secure}
spec:
  type: ExternalHostname
  externalHostname: {hostname: localhost}
  port: {number: SECUREPORT}
  tls:
    mode: ServerOnly
    validation:
      caCertificateRefs: [{group: "", kind: ConfigMap, name: good-ca}]
      hostname: secure.internal
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: wrong-ca}
spec:
  type: ExternalHostname
  externalHostname: {hostname: localhost}
  port: {number: SECUREPORT}
  tls:
    mode: ServerOnly
    validation:
      caCertificateRefs: [{group: "", kind: ConfigMap, name: other-ca}]
      hostname: secure.internal
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: mtls}
spec:
  type: ExternalHostname
  externalHostname: {hostname: localhost}
  port: {number: MTLSPORT}
  tls:
    mode: ClientAndServer
    clientCertificateRef: {name: client-cert}
    validation:
      caCertificateRefs: [{group: "", kind: ConfigMap, name: good-ca}]
      hostname: secure.internal
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: no-client-cert}
spec:
  type: ExternalHostname
  externalHostname: {hostname: localhost}
  port: {number: MTLSPORT}
  tls:
    mode: ServerOnly
    validation:
      caCertificateRefs: [{group: "", kind: ConfigMap, name: good-ca}]
      hostname: secure.internal
---
apiVersion: v1
kind: ConfigMap
metadata: {name: good-ca}
data:
  ca.crt: |
CA_GOOD
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other-ca}
data:
  ca.crt: |
CA_OTHER
---
apiVersion: v1
kind: Secret
metadata: {name: client-cert}
type: kubernetes.io/tls
data: {tls.crt: CLIENT_CRT, tls.key: CLIENT_KEY}
`)
	h := serve(t, func(p int32) *table.Table { return gwinTable(t, manifests, p, engine.Options{}) })
	for _, tc := range []struct {
		path, body, reason string
		status             int
	}{
		{path: "/plain", status: 200, body: "plain"},
		{path: "/secure", status: 200, body: "secure sni=secure.internal client="},
		{path: "/wrong-ca", status: http.StatusBadGateway, reason: "certificate"},
		{path: "/mtls", status: 200, body: "mtls sni=secure.internal client=gateway-client"},
		{path: "/no-client-cert", status: http.StatusBadGateway, reason: "certificate"},
	} {
		res, tr := h.traced(h.request("GET", "app.example.com", tc.path))
		if res.status != tc.status || (tc.body != "" && string(res.body) != tc.body) || !strings.Contains(tr.Reason, tc.reason) {
			t.Errorf("%s: %d %q (reason %q); want %d %q with a reason naming %q", tc.path, res.status, res.body, tr.Reason, tc.status, tc.body, tc.reason)
		}
		if tr.Target != table.TargetXBackend {
			t.Errorf("%s: target %q, want %q", tc.path, tr.Target, table.TargetXBackend)
		}
	}
}

// TestXBackendProtocolH2C: an XBackend with protocol H2C is reached with
// HTTP/2 over cleartext (prior knowledge); without it, HTTP/1.1.
func TestXBackendProtocolH2C(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.Proto)) }))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	manifests := strings.ReplaceAll(gatewayGW+`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /h2c}}]
    backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: h2c}]
  - matches: [{path: {type: PathPrefix, value: /h1}}]
    backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: h1}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: h2c}
spec:
  type: ExternalHostname
  externalHostname: {hostname: localhost}
  port: {number: BACKENDPORT}
  protocol: H2C
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: h1}
spec:
  type: ExternalHostname
  externalHostname: {hostname: localhost}
  port: {number: BACKENDPORT}
`, "BACKENDPORT", port)
	h := serve(t, func(p int32) *table.Table { return gwinTable(t, manifests, p, engine.Options{}) })
	if res := h.get("app.example.com", "/h2c"); string(res.body) != "HTTP/2.0" {
		t.Errorf("protocol H2C: the backend got %d %q, want HTTP/2.0", res.status, res.body)
	}
	if res := h.get("app.example.com", "/h1"); string(res.body) != "HTTP/1.1" {
		t.Errorf("no protocol: the backend got %d %q, want HTTP/1.1", res.status, res.body)
	}
}
