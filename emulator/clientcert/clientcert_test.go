package clientcert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// selfSigned makes a certificate for cn as the engine puts one in the table.
func selfSigned(t *testing.T, cn string) *table.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}, DNSNames: []string{cn}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &table.Certificate{Secret: "default/" + cn,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})}
}

// A handshake on a wrapped connection marks it only when the server asks
// for a client certificate.
func TestWrapMarksOnlyWhenAsked(t *testing.T) {
	client := selfSigned(t, "gateway")
	for _, ask := range []bool{true, false} {
		cs, ss := net.Pipe()
		b := selfSigned(t, "backend")
		srvCert, err := tls.X509KeyPair(b.CertPEM, b.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		sconf := &tls.Config{Certificates: []tls.Certificate{srvCert}}
		if ask {
			sconf.ClientAuth = tls.RequestClientCert
		}
		done := make(chan error, 1)
		go func() { done <- tls.Server(ss, sconf).Handshake() }()
		conf := &tls.Config{ServerName: "backend", InsecureSkipVerify: true} //nolint:gosec // a test backend
		if err := Present(conf, client); err != nil {
			t.Fatal(err)
		}
		ctx, cc := Wrap(context.Background(), cs)
		if err := tls.Client(cc, conf).HandshakeContext(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if cc.Presented() != ask {
			t.Errorf("server asks %v: presented %v", ask, cc.Presented())
		}
		_ = cs.Close()
		_ = ss.Close()
	}
}

// Trace hands the note of the connection a transport with Dialer dialed,
// on the first request and on the reused connection.
func TestTraceNotesPresented(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	defer srv.Close()
	client := selfSigned(t, "gateway")
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = Dialer((&net.Dialer{}).DialContext)
	if err := Present(tr.TLSClientConfig, client); err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	for i := range 2 {
		var got string
		ctx := Trace(context.Background(), client.Secret, func(n string) { got = n })
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if want := Note(client.Secret, true); got != want {
			t.Errorf("request %d: note %q, want %q", i, got, want)
		}
	}
}
