package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testPKI issues certificates for one test: a CA, and leaves it signs.
type testPKI struct {
	t    *testing.T
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestPKI(t *testing.T, cn string) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testPKI{t: t, cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf for cn (a server certificate for dnsNames, or a
// client certificate) and returns its PEM certificate and key.
func (p *testPKI) issue(cn string, client bool, dnsNames ...string) (crtPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	usage := x509.ExtKeyUsageServerAuth
	if client {
		usage = x509.ExtKeyUsageClientAuth
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn}, DNSNames: dnsNames,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	if err != nil {
		p.t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// TestExplainClientCertificate: on a listener that requires client
// certificates, explain without --cert is refused as the handshake is, and
// with a certificate the CA signed it is let in and says so.
func TestExplainClientCertificate(t *testing.T) {
	dir, certFile, keyFile := mtlsFolder(t)
	for _, c := range []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{nil, []string{"connection:    refused", "client certificate validation failed", "ConfigMap default/client-ca"}, []string{"backend:"}},
		{[]string{"--cert", certFile, "--key", keyFile}, []string{"client cert:   CN=alice (verified)", "route:         HTTPRoute/default/app", "from the backend"}, []string{"refused"}},
	} {
		args := append(append([]string{"explain", "--dir", dir}, c.args...), "https://mtls.example.com/")
		out, errOut, code := runGwdev(t, "", args...)
		if want := map[bool]int{true: exitProblems, false: 0}[c.args == nil]; code != want { // refused without a certificate
			t.Fatalf("%v: exit %d, want %d: %s", c.args, code, want, errOut)
		}
		checkLines(t, c.args, out, c.want, c.notWant)
		if strings.Contains(out, "PRIVATE KEY") {
			t.Errorf("explain printed a private key")
		}
	}
}

// mtlsFolder writes a folder with an HTTPS listener for mtls.example.com
// on port 443 that validates client certificates against a CA, and a
// client certificate and key that CA signed (alice).
func mtlsFolder(t *testing.T) (dir, certFile, keyFile string) {
	t.Helper()
	dir = t.TempDir()
	server, clients := newTestPKI(t, "server CA"), newTestPKI(t, "client CA")
	crt, key := server.issue("mtls.example.com", false, "mtls.example.com")
	indent := func(b []byte) string {
		return "    " + strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n    ")
	}
	manifest := `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  tls:
    frontend:
      default:
        validation:
          caCertificateRefs: [{group: "", kind: ConfigMap, name: client-ca}]
  listeners:
  - name: mtls
    protocol: HTTPS
    port: 443
    hostname: mtls.example.com
    tls: {certificateRefs: [{name: cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: app, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: client-ca}
data:
  ca.crt: |
` + indent(clients.pem) + `
---
apiVersion: v1
kind: Secret
metadata: {name: cert}
type: kubernetes.io/tls
data:
  tls.crt: ` + base64.StdEncoding.EncodeToString(crt) + `
  tls.key: ` + base64.StdEncoding.EncodeToString(key) + `
`
	if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	ccrt, ckey := clients.issue("alice", true)
	certFile, keyFile = filepath.Join(t.TempDir(), "alice.crt"), filepath.Join(t.TempDir(), "alice.key")
	if os.WriteFile(certFile, ccrt, 0o600) != nil || os.WriteFile(keyFile, ckey, 0o600) != nil {
		t.Fatal("writing the client certificate")
	}
	return dir, certFile, keyFile
}
