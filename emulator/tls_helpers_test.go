package emulator

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// testCA is a certificate authority for tests.
type testCA struct {
	t    testing.TB
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var testSerial atomic.Int64

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(testSerial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{t: t, cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// certOpts tune issued certificates.
type certOpts struct {
	rsa      bool
	expired  bool
	client   bool
	cn       string
	dnsNames []string
}

// issue signs a certificate and returns its PEM chain and PEM key.
func (ca *testCA) issue(o certOpts) (certPEM, keyPEM []byte) {
	ca.t.Helper()
	var pub, priv any
	if o.rsa {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			ca.t.Fatal(err)
		}
		pub, priv = &k.PublicKey, k
	} else {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			ca.t.Fatal(err)
		}
		pub, priv = &k.PublicKey, k
	}
	cn := o.cn
	if cn == "" && len(o.dnsNames) > 0 {
		cn = o.dnsNames[0]
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(testSerial.Add(1)), Subject: pkix.Name{CommonName: cn},
		DNSNames: o.dnsNames, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if o.expired {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	}
	if o.client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		ca.t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// certificate issues a serving certificate as the engine puts it in the
// table.
func (ca *testCA) certificate(secret string, o certOpts) *table.Certificate {
	c, k := ca.issue(o)
	b, _ := pem.Decode(c)
	leaf, _ := x509.ParseCertificate(b.Bytes)
	return &table.Certificate{Secret: "default/" + secret, DNSNames: leaf.DNSNames, NotAfter: leaf.NotAfter, CertPEM: c, KeyPEM: k}
}

// clientCert issues a client certificate for crypto/tls.
func (ca *testCA) clientCert(cn string) tls.Certificate {
	c, k := ca.issue(certOpts{client: true, cn: cn})
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		ca.t.Fatal(err)
	}
	return pair
}

// serverConfig is a crypto/tls server configuration for a local backend.
func (ca *testCA) serverConfig(names ...string) *tls.Config {
	c, k := ca.issue(certOpts{dnsNames: names})
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		ca.t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}}
}

// httpsListener is an HTTPS listener terminating with certs.
func httpsListener(section, hostname string, certs []*table.Certificate, vhs ...*table.VirtualHost) *table.ListenerTable {
	l := listener(section, hostname, vhs...)
	l.Protocol = table.HTTPSProtocolType
	l.TLS = &table.ListenerTLS{Mode: table.TLSModeTerminate, Certificates: certs}
	return l
}

// tlsListener is a TLS listener (Passthrough or Terminate) with TLSRoute
// entries.
func tlsListenerTable(section, hostname string, mode table.TLSModeType, certs []*table.Certificate, routes ...*table.SNIRoute) *table.ListenerTable {
	l := &table.ListenerTable{SectionName: section, Hostname: hostname, Protocol: table.TLSProtocolType,
		TLS: &table.ListenerTLS{Mode: mode, Certificates: certs}, TLSRoutes: routes}
	return l
}

// sniRouteTo is the TLSRoute entry "tlsroute/default/<route>/rule/0" for one
// hostname.
func sniRouteTo(route, hostname string, backends ...*table.Backend) *table.SNIRoute {
	name := "tlsroute/default/" + route + "/rule/0"
	for i, b := range backends {
		b.Name = name + "/backend/" + string(rune('0'+i))
	}
	return &table.SNIRoute{Name: name, Route: table.ObjectKey{Kind: "TLSRoute", Namespace: "default", Name: route},
		Hostnames: []string{hostname}, Backends: backends}
}

// addr is the harness's gateway address.
func (h *harness) addr() string {
	return net.JoinHostPort(h.ip, strconv.Itoa(int(h.port)))
}

// tlsDial connects to the harness with SNI sni (no SNI when "").
func (h *harness) tlsDial(sni string, conf *tls.Config) (*tls.Conn, error) {
	c := conf.Clone()
	c.ServerName = sni
	if sni == "" {
		c.InsecureSkipVerify = true // verification needs a name
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	return tls.DialWithDialer(d, "tcp", h.addr(), c)
}

// lineServer is a local TCP (or TLS) backend that greets with its name and
// the SNI it saw, then echoes lines.
func lineServer(t *testing.T, name string, conf *tls.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sni := "-"
				if conf != nil {
					tc := tls.Server(c, conf)
					if err := tc.Handshake(); err != nil {
						return
					}
					sni = tc.ConnectionState().ServerName
					c = tc
				}
				_, _ = c.Write([]byte(name + " " + sni + "\n"))
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					_, _ = c.Write([]byte("echo " + sc.Text() + "\n"))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// readLine reads one line with a deadline.
func readLine(t *testing.T, c net.Conn, r *bufio.Reader) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading a line: %v (got %q)", err, s)
	}
	return strings.TrimSuffix(s, "\n")
}
