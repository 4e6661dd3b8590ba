package emulator

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// tlsOptionsManifests: on one port, "strict" (app.example.com) asks for TLS
// 1.3 at least; "legacy" (legacy.example.com) allows TLS 1.2 only with one
// cipher suite. The route's backend is the echo over TLS, with a
// BackendTLSPolicy limiting the gateway's side to TLS 1.2 and one suite.
const tlsOptionsManifests = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - name: strict
    protocol: HTTPS
    port: PORT
    hostname: app.example.com
    tls: {certificateRefs: [{name: cert}], options: {gwdev.dev/min-tls-version: "1.3"}}
  - name: legacy
    protocol: HTTPS
    port: PORT
    hostname: legacy.example.com
    tls:
      certificateRefs: [{name: cert}]
      options: {gwdev.dev/max-tls-version: "1.2", gwdev.dev/cipher-suites: TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: secure, port: 443}]}]
---
apiVersion: v1
kind: Service
metadata: {name: secure, annotations: {gwdev.dev/echo-tls-secret: backend-cert}}
spec: {ports: [{port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: secure}
spec:
  targetRefs: [{group: "", kind: Service, name: secure}]
  validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}], hostname: secure.internal}
  options: {gwdev.dev/max-tls-version: "1.2", gwdev.dev/cipher-suites: TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca}
data: {ca.crt: %q}
---
apiVersion: v1
kind: Secret
metadata: {name: cert}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
---
apiVersion: v1
kind: Secret
metadata: {name: backend-cert}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
`

// TestTLSOptionsEnforced: a listener whose tls.options ask for TLS 1.3
// refuses a TLS 1.2 client and serves a TLS 1.3 one; the legacy listener's
// cipher suite list refuses a client offering only another suite; the
// gateway's connection to the backend uses the BackendTLSPolicy's version
// and suite (the echo reports them).
func TestTLSOptionsEnforced(t *testing.T) {
	ca := newTestCA(t, "options CA")
	crt, key := ca.issue(certOpts{dnsNames: []string{"app.example.com", "legacy.example.com"}})
	bcrt, bkey := ca.issue(certOpts{dnsNames: []string{"secure.internal"}})
	b64 := base64.StdEncoding.EncodeToString
	m := fmt.Sprintf(tlsOptionsManifests, string(ca.pem), b64(crt), b64(key), b64(bcrt), b64(bkey))
	h := serve(t, func(p int32) *table.Table { return gwinTable(t, m, p, engine.Options{}) })
	roots := &tls.Config{RootCAs: ca.pool()}

	if c, err := h.tlsDial("app.example.com", &tls.Config{RootCAs: ca.pool(), MaxVersion: tls.VersionTLS12}); err == nil {
		c.Close()
		t.Fatal("a TLS 1.2 client got through a listener with gwdev.dev/min-tls-version 1.3")
	} else if !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("TLS 1.2 client: %v", err)
	}
	c, err := h.tlsDial("app.example.com", roots)
	if err != nil {
		t.Fatalf("TLS 1.3 client: %v", err)
	}
	if v := c.ConnectionState().Version; v != tls.VersionTLS13 {
		t.Errorf("version %s", tls.VersionName(v))
	}
	c.Close()

	if c, err := h.tlsDial("legacy.example.com", &tls.Config{RootCAs: ca.pool(), CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}); err == nil {
		v := c.ConnectionState()
		c.Close()
		t.Fatalf("legacy listener negotiated %s %s with a suite it does not allow", tls.VersionName(v.Version), tls.CipherSuiteName(v.CipherSuite))
	}
	c, err = h.tlsDial("legacy.example.com", roots)
	if err != nil {
		t.Fatalf("legacy client: %v", err)
	}
	if st := c.ConnectionState(); st.Version != tls.VersionTLS12 || st.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 {
		t.Errorf("legacy: %s %s", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))
	}
	c.Close()

	res, _, tr := h.httpsGet(h.httpsClient("app.example.com", roots, false), "app.example.com", "/")
	e := res.echo(t)
	if res.status != http.StatusOK || e.TLS == nil || e.TLS.Version != "TLS 1.2" || e.TLS.CipherSuite != "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" {
		t.Errorf("backend TLS: %d %+v (trace %q)", res.status, e.TLS, tr.Reason)
	}
}
