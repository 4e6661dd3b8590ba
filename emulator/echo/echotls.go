package echo

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// The echo backend over TLS. When the gateway reaches an echo backend over
// TLS (a BackendTLSPolicy, or a TLS passthrough listener), the echo backend
// makes a real TLS handshake in process with the certificate of the Secret
// its Service names (engine.EchoTLSSecretAnnotation), or else with one it
// generates for the requested name, signed by a CA that lives only in
// memory. So a BackendTLSPolicy with the right CA works, and one with the
// wrong CA fails the way it would in a cluster.

// The echo's in-process HTTP servers keep the gateway listeners' limits.
const (
	readHeaderTimeout = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	retireTimeout     = 30 * time.Second
)

// TCPWelcome is the first line the TCPRoute and TLSRoute echo backend
// sends: the conformance TCP echo server's (echo-basic tcpserver).
const TCPWelcome = "Gateway API Test TCP Server\n"

// StreamAssertions is the conformance TCP echo server's answer to TEST.
type StreamAssertions struct {
	Namespace string     `json:"namespace"`
	Ingress   string     `json:"ingress"`
	Service   string     `json:"service"`
	Pod       string     `json:"pod"`
	TCPPort   string     `json:"tcpport"`
	TLSPort   string     `json:"tlsport,omitempty"`
	IsTLS     bool       `json:"isTLS"`
	TLS       *StreamTLS `json:"tls,omitempty"`
}

// StreamTLS is the TLS part of StreamAssertions.
type StreamTLS struct {
	Version            string `json:"version"`
	ServerName         string `json:"serverName"`
	NegotiatedProtocol string `json:"negotiatedProtocol,omitempty"`
	Curves             string `json:"curves,omitempty"`
	CipherSuite        string `json:"cipherSuite"`
}

// echoSniffWindow is how long the TCPRoute and TLSRoute echo backend waits
// for a client that speaks first (HTTP) before it greets like the TCP echo
// server. A greeting sent too early breaks an HTTP client for good, one
// sent late only keeps a client that waits for it (nc, the conformance
// TCP tests) waiting: so the window is long enough for a client that loses
// the CPU between connect and write on a loaded machine (100 ms was not,
// for a test under -race), and short enough for a person at nc. It is
// never more than half the stream's idle timeout (sniffWindow), so that a
// waiting client is greeted before the gateway closes its connection as
// idle.
const echoSniffWindow = time.Second

// echoSniffWindowWaiting replaces echoSniffWindow once a client of the
// same echo Service has waited out the window for its greeting
// (Target.greetSoon): such clients come in series (the conformance TCP
// tests open a hundred connections one after another, nc users come
// back), and a second each made those tests take minutes. An HTTP client
// writes its request right after connecting, well within this; one that
// does not is greeted, and its request line (the first line echoLines
// reads) makes the echo wait the whole window again for the next client.
const echoSniffWindowWaiting = 50 * time.Millisecond

// sniffWindow is echoSniffWindow for a stream closed after idle without
// traffic (0: no idle timeout).
func sniffWindow(idle time.Duration) time.Duration {
	if idle > 0 {
		return min(echoSniffWindow, idle/2)
	}
	return echoSniffWindow
}

// ServeStream answers a TCPRoute or TLSRoute connection like the
// conformance TCP echo server: a welcome line, then PING → PONG, IS_TLS →
// true/false and TEST → a JSON description of the connection; any other
// line comes back as it was sent (echol4.go). With conf it first
// terminates TLS (passthrough, or a BackendTLSPolicy), as the backend of a
// passthrough route does. A client
// that speaks HTTP (ALPN h2 or http/1.1, or an HTTP request line sent at
// once) gets the HTTP echo backend instead, like the conformance
// tls-backend. idle is the stream's idle timeout (0: none), which bounds
// how long it waits for such a client (sniffWindow).
func ServeStream(conn net.Conn, e *Target, ingress string, conf *tls.Config, idle time.Duration) {
	a := StreamAssertions{Namespace: e.namespace, Ingress: ingress, Service: e.service, Pod: e.pod,
		TCPPort: strconv.Itoa(int(e.port))}
	var cs *tls.ConnectionState
	if conf != nil {
		tc := tls.Server(conn, conf)
		if err := tc.Handshake(); err != nil {
			if e.log != nil {
				e.log.Add("TLS handshake failed: " + err.Error())
			}
			_ = conn.Close()
			return
		}
		st := tc.ConnectionState()
		if st.NegotiatedProtocol == "h2" || st.NegotiatedProtocol == "http/1.1" {
			serveEchoHTTP(tc, e, &st)
			return
		}
		cs = &st
		a.IsTLS, a.TLSPort = true, a.TCPPort
		a.TLS = &StreamTLS{Version: tls.VersionName(st.Version), ServerName: st.ServerName,
			NegotiatedProtocol: st.NegotiatedProtocol, CipherSuite: tls.CipherSuiteName(st.CipherSuite), Curves: st.CurveID.String()}
		conn = tc
	}
	sc := sniff(conn, sniffWindow(idle), e.greetSoon.Load)
	if sc.http() {
		e.greetSoon.Store(false)
		serveEchoHTTP(sc, e, cs)
		return
	}
	if !sc.got {
		e.greetSoon.Store(true) // the client waited for the greeting
	}
	conn = sc
	defer conn.Close()
	test, _ := json.Marshal(a)
	if _, err := io.WriteString(conn, TCPWelcome); err != nil {
		return
	}
	echoed, err := echoLines(conn, test, a.IsTLS, func(line []byte) {
		if _, ok := wire.PlainHTTP(line); ok {
			e.greetSoon.Store(false) // an HTTP client greeted too soon
		}
	})
	// Logged before the half-close, which is what the client (and the
	// gateway's trace of the connection) waits for.
	if e.log != nil {
		e.log.Add(fmt.Sprintf("TCP connection (TLS: %t): greeted, %d bytes echoed", a.IsTLS, echoed))
	}
	if err == nil {
		wire.CloseWrite(conn)
	}
}

// sniffedConn is a connection whose first read started before anyone
// asked: sniff waits a moment for it to tell whether the client speaks
// first (HTTP) or waits for a greeting (the TCP echo protocol).
type sniffedConn struct {
	net.Conn
	first   chan sniffRead
	got     bool
	pending []byte
	err     error
}

type sniffRead struct {
	b   []byte
	err error
}

// sniff starts the first read of c and waits up to window for it, or
// echoSniffWindowWaiting while soon reports true (asked when that much has
// passed, so that a client greeted too soon just before still counts).
func sniff(c net.Conn, window time.Duration, soon func() bool) *sniffedConn {
	s := &sniffedConn{Conn: c, first: make(chan sniffRead, 1)}
	go func() {
		b := make([]byte, 4096)
		n, err := c.Read(b)
		s.first <- sniffRead{b[:n], err}
	}()
	start := time.Now()
	short := min(window, echoSniffWindowWaiting)
	t := time.NewTimer(short)
	defer t.Stop()
	for {
		select {
		case r := <-s.first:
			s.got, s.pending, s.err = true, r.b, r.err
			return s
		case <-t.C:
			if rest := window - time.Since(start); short > 0 && rest > 0 && !soon() {
				short = 0
				t.Reset(rest)
				continue
			}
			return s
		}
	}
}

// http reports whether the client spoke first with an HTTP/1.x request.
func (s *sniffedConn) http() bool {
	_, ok := wire.PlainHTTP(s.pending)
	return s.got && ok
}

func (s *sniffedConn) Read(p []byte) (int, error) {
	if !s.got {
		r := <-s.first
		s.got, s.pending, s.err = true, r.b, r.err
	}
	if len(s.pending) > 0 {
		n := copy(p, s.pending)
		s.pending = s.pending[n:]
		return n, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	return s.Conn.Read(p)
}

// CloseWrite half-closes the underlying connection.
func (s *sniffedConn) CloseWrite() error {
	wire.CloseWrite(s.Conn)
	return nil
}

// ServerTLS returns the echo backend's server configuration: the
// Secret's certificate, or generated ones. With withALPN it offers h2 and
// http/1.1 to clients that ask for either (and no protocol to others, so
// that a client of some other protocol still gets its TCP echo). With
// askClientCert it asks the client for a certificate, without requiring or
// verifying one, and the echo reports what it got (peerCertificates): it
// is set where the gateway is the client (a BackendTLSPolicy), not for
// passthrough, whose client is the user's.
func ServerTLS(cert *table.Certificate, withALPN, askClientCert bool) *tls.Config {
	key := "generated"
	if cert != nil {
		h := sha256.New()
		h.Write(cert.CertPEM)
		h.Write(cert.KeyPEM)
		key = string(h.Sum(nil))
	}
	key += "|" + strconv.FormatBool(withALPN) + "|" + strconv.FormatBool(askClientCert)
	if c, ok := echoTLSConfigs.Load(key); ok {
		return c.(*tls.Config)
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if askClientCert {
		conf.ClientAuth = tls.RequestClientCert
	}
	if cert != nil {
		if pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM); err == nil {
			conf.Certificates = []tls.Certificate{pair}
		}
	}
	if len(conf.Certificates) == 0 {
		conf.GetCertificate = generatedCertificate
	}
	if withALPN {
		http := conf.Clone()
		http.NextProtos = []string{"h2", "http/1.1"}
		conf.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			for _, p := range hello.SupportedProtos {
				if p == "h2" || p == "http/1.1" {
					return http, nil
				}
			}
			return nil, nil
		}
	}
	c, _ := echoTLSConfigs.LoadOrStore(key, conf)
	return c.(*tls.Config)
}

// echoTLSConfigs caches echo server configurations by certificate.
var echoTLSConfigs sync.Map

// echoCA is the in-memory CA that signs generated echo certificates; no
// client trusts it unless told to.
var echoCA struct {
	once sync.Once
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	err  error
	// leaves caches generated certificates by server name.
	leaves sync.Map
}

// generatedCertificate signs a certificate for the requested server name
// ("localhost" without SNI) with the in-memory echo CA.
func generatedCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := wire.NormalizeSNI(hello.ServerName)
	if name == "" {
		name = "localhost"
	}
	if c, ok := echoCA.leaves.Load(name); ok {
		return c.(*tls.Certificate), nil
	}
	echoCA.once.Do(func() {
		echoCA.key, echoCA.err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if echoCA.err != nil {
			return
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gwdev echo backend CA (in memory, untrusted)"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &echoCA.key.PublicKey, echoCA.key)
		if err == nil {
			echoCA.cert, err = x509.ParseCertificate(der)
		}
		echoCA.err = err
	})
	if echoCA.err != nil {
		return nil, echoCA.err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, echoCA.cert, &key.PublicKey, echoCA.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, echoCA.cert.Raw}, PrivateKey: key, Leaf: leaf}
	actual, _ := echoCA.leaves.LoadOrStore(name, c)
	return actual.(*tls.Certificate), nil
}

// HTTPS serves the HTTP echo backend of one upstream over TLS, in
// process: the upstream's transports dial it instead of a socket, so the
// gateway's BackendTLSPolicy configuration (CA, SNI, subjectAltNames) meets
// a real server certificate.
type HTTPS struct {
	e *Target
	// tls, when set, is the TLS state of a connection whose requests do
	// not carry it (HTTP sniffed on a TLS stream).
	tls   *tls.ConnectionState
	conf  *tls.Config
	once  sync.Once
	queue *wire.Queue
	srv   *http.Server
}

// NewHTTPS returns the TLS echo of e, with cert (nil: generated ones).
func NewHTTPS(e *Target, cert *table.Certificate) *HTTPS {
	return &HTTPS{e: e, conf: ServerTLS(cert, true, true), queue: wire.NewQueue(wire.Addr("echo"))}
}

// Transport makes t dial the in-process echo server; a nil HTTPS (the
// upstream has a real address) leaves t as it is.
func (es *HTTPS) Transport(t *http.Transport) *http.Transport {
	if es != nil {
		t.DialContext = es.dial
	}
	return t
}

func (es *HTTPS) dial(context.Context, string, string) (net.Conn, error) {
	es.once.Do(func() {
		es.srv = &http.Server{Handler: es, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout,
			Protocols: new(http.Protocols), ErrorLog: log.New(io.Discard, "", 0)}
		es.srv.Protocols.SetHTTP1(true)
		es.srv.Protocols.SetHTTP2(true)
		go func() { _ = es.srv.Serve(es.queue) }()
	})
	gw, echoSide := wire.Pipe()
	go es.queue.Push(tls.Server(echoSide, es.conf))
	return gw, nil
}

// serveEchoHTTP serves HTTP/1.1 or HTTP/2 (by the ALPN agreed) on one
// connection with the echo backend's HTTP handler; cs, when set, is the
// connection's TLS state for requests that do not carry it themselves.
func serveEchoHTTP(c net.Conn, e *Target, cs *tls.ConnectionState) {
	srv := &http.Server{Handler: &HTTPS{e: e, tls: cs}, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout,
		Protocols: new(http.Protocols), ErrorLog: log.New(io.Discard, "", 0)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	_ = srv.Serve(&oneConn{c: c}) // returns after the one Accept; the connection is served on
}

// oneConn is a net.Listener that yields one connection.
type oneConn struct {
	c    net.Conn
	done bool
}

func (l *oneConn) Accept() (net.Conn, error) {
	if l.done {
		return nil, net.ErrClosed
	}
	l.done = true
	return l.c, nil
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.c.LocalAddr() }

// ServeHTTP answers like the in-process echo backend.
func (es *HTTPS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		r.TLS = es.tls
	}
	// Here the echo itself terminated TLS, so the peer certificates are the
	// ones presented to it.
	r = r.WithContext(context.WithValue(r.Context(), echoTerminatedTLS{}, true))
	resp, err := es.e.RoundTrip(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer resp.Body.Close()
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	for k := range resp.Trailer {
		h.Add("Trailer", k)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
	// Trailers known only once the body is read (gRPC's grpc-status) were
	// not announced before WriteHeader: send them with TrailerPrefix.
	for k, v := range resp.Trailer {
		h[http.TrailerPrefix+k] = v
	}
}

// Close stops the in-process server (the upstream left the table).
func (es *HTTPS) Close() {
	if es == nil {
		return
	}
	_ = es.queue.Close()
	if es.srv != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), retireTimeout)
			defer cancel()
			_ = es.srv.Shutdown(ctx)
		}()
	}
}
