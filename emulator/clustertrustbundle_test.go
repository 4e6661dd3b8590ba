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

// trustBundleManifests: two Services answered by the echo over TLS with a
// certificate of the app CA; BackendTLSPolicy "good" trusts the
// ClusterTrustBundle holding the app CA, "wrong" one holding another CA.
const trustBundleManifests = gatewayGW + `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /good}}]
    backendRefs: [{name: good, port: 443}]
  - matches: [{path: {type: PathPrefix, value: /wrong}}]
    backendRefs: [{name: wrong, port: 443}]
---
apiVersion: v1
kind: Service
metadata: {name: good, annotations: {gwdev.dev/echo-tls-secret: backend-cert}}
spec: {ports: [{port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: wrong, annotations: {gwdev.dev/echo-tls-secret: backend-cert}}
spec: {ports: [{port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: good}
spec:
  targetRefs: [{group: "", kind: Service, name: good}]
  validation: {caCertificateRefs: [{group: certificates.k8s.io, kind: ClusterTrustBundle, name: app-ca}], hostname: secure.internal}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: wrong}
spec:
  targetRefs: [{group: "", kind: Service, name: wrong}]
  validation: {caCertificateRefs: [{group: certificates.k8s.io, kind: ClusterTrustBundle, name: other-ca}], hostname: secure.internal}
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: app-ca}
spec: {trustBundle: %q}
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: other-ca}
spec: {trustBundle: %q}
---
apiVersion: v1
kind: Secret
metadata: {name: backend-cert}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
`

// TestBackendTLSPolicyClusterTrustBundle: manifests through the loader and
// the engine to real listeners: the backend's certificate verifies against
// the ClusterTrustBundle holding its CA (200, TLS to the echo with the
// policy's SNI), and fails against a bundle of another CA (502, the trace
// naming the bundle).
func TestBackendTLSPolicyClusterTrustBundle(t *testing.T) {
	appCA, otherCA := newTestCA(t, "app CA"), newTestCA(t, "other CA")
	crt, key := appCA.issue(certOpts{dnsNames: []string{"secure.internal"}})
	b64 := base64.StdEncoding.EncodeToString
	m := fmt.Sprintf(trustBundleManifests, string(appCA.pem), string(otherCA.pem), b64(crt), b64(key))
	h := serve(t, func(p int32) *table.Table { return gwinTable(t, m, p, engine.Options{}) })

	res, tr := h.traced(h.request(http.MethodGet, "www.example.com", "/good"))
	e := res.echo(t)
	if res.status != http.StatusOK || e.TLS == nil || e.TLS.ServerName != "secure.internal" || tr.Upstream != "echo" {
		t.Errorf("/good: %d %s (trace %q)", res.status, res.body, tr.Reason)
	}
	res, tr = h.traced(h.request(http.MethodGet, "www.example.com", "/wrong"))
	if want := "its certificate is not signed by the CA certificates of ClusterTrustBundle other-ca"; res.status != http.StatusBadGateway || !strings.Contains(tr.Reason, want) {
		t.Errorf("/wrong: %d, trace %q, want 502 and %q", res.status, tr.Reason, want)
	}
}

// frontendTrustBundleManifests: an HTTPS listener validating client
// certificates against a ClusterTrustBundle (AllowValidOnly).
const frontendTrustBundleManifests = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  tls:
    frontend:
      default:
        validation:
          caCertificateRefs: [{group: certificates.k8s.io, kind: ClusterTrustBundle, name: clients}]
  listeners:
  - {name: https, protocol: HTTPS, port: PORT, hostname: app.example.com, tls: {certificateRefs: [{name: cert}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {ports: [{port: 80}]}
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: clients}
spec: {trustBundle: %q}
---
apiVersion: v1
kind: Secret
metadata: {name: cert}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
`

// TestFrontendValidationClusterTrustBundle: a client certificate issued by
// the CA in the listener's ClusterTrustBundle gets through (200); one of
// another CA, and no certificate, are refused in the handshake.
func TestFrontendValidationClusterTrustBundle(t *testing.T) {
	serverCA, clientCA, otherCA := newTestCA(t, "server CA"), newTestCA(t, "client CA"), newTestCA(t, "other CA")
	crt, key := serverCA.issue(certOpts{dnsNames: []string{"app.example.com"}})
	b64 := base64.StdEncoding.EncodeToString
	m := fmt.Sprintf(frontendTrustBundleManifests, string(clientCA.pem), b64(crt), b64(key))
	h := serve(t, func(p int32) *table.Table { return gwinTable(t, m, p, engine.Options{}) })
	clientCert := func(ca *testCA) []tls.Certificate {
		c, k := ca.issue(certOpts{client: true, cn: "client"})
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{pair}
	}
	good := &tls.Config{RootCAs: serverCA.pool(), Certificates: clientCert(clientCA)}
	res, _, tr := h.httpsGet(h.httpsClient("app.example.com", good, false), "app.example.com", "/")
	if res.status != http.StatusOK || tr.Upstream != "echo" {
		t.Errorf("client of the bundle's CA: %d %s (trace %q)", res.status, res.body, tr.Reason)
	}
	for name, conf := range map[string]*tls.Config{
		"other CA":       {RootCAs: serverCA.pool(), Certificates: clientCert(otherCA)},
		"no certificate": {RootCAs: serverCA.pool()},
	} {
		c := h.httpsClient("app.example.com", conf, false)
		req := h.request(http.MethodGet, "app.example.com", "/")
		req.URL.Scheme = "https"
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("%s: got %d, want the handshake refused", name, resp.StatusCode)
		}
	}
}
