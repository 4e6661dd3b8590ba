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
	"sync"
	"sync/atomic"
	"time"

	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// tlsServe is the TLS side of a bound listener on a TLS port: the accept
// loop hands connections whose handshake chose an HTTPS listener to the
// listener's http.Server through queue, and serves TLSRoute streams itself.
type tlsServe struct {
	queue *wire.Queue

	mu    sync.Mutex
	conns map[net.Conn]struct{} // handshaking or streaming
	wg    sync.WaitGroup
	// ended, once set, is why the gateway closed the streams (Trace.End).
	ended atomic.Pointer[EndReason]
}

// setupTLS prepares a freshly bound listener of a TLS port: its HTTP server
// speaks HTTP/1.1 and HTTP/2 over TLS (no h2c) and accepts from a queue.
func (s *Server) setupTLS(bl *boundListener, pr *portRoutes) {
	if pr.tls == nil {
		return
	}
	if cl, ok := bl.ln.(countingListener); ok {
		// TLS ports trace their connections themselves, and passthrough
		// splices the raw socket (conntrace.go counts plain HTTP ones).
		bl.ln = cl.Listener
	}
	bl.tls = &tlsServe{queue: wire.NewQueue(bl.ln.Addr()), conns: map[net.Conn]struct{}{}}
	bl.srv.Protocols = new(http.Protocols)
	bl.srv.Protocols.SetHTTP1(true)
	bl.srv.Protocols.SetHTTP2(true)
}

// acceptor returns what a bound listener's HTTP server accepts from: the
// socket, or for a TLS port the queue of connections whose handshake chose
// an HTTPS listener (and then it starts the port's accept loop).
func (s *Server) acceptor(bl *boundListener) net.Listener {
	if bl.tls == nil {
		return bl.ln
	}
	s.retiring.Add(1)
	go func() {
		defer s.retiring.Done()
		s.acceptTLS(bl)
	}()
	return bl.tls.queue
}

// acceptTLS accepts connections on a TLS port until its socket is closed.
func (s *Server) acceptTLS(bl *boundListener) {
	acceptLoop(bl.ln, func(c net.Conn) {
		if !bl.tls.track(c) {
			_ = c.Close()
			return
		}
		go s.handshake(bl, c)
	})
}

// track registers a connection the TLS side owns; false once it drains.
func (ts *tlsServe) track(c net.Conn) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.conns == nil {
		return false
	}
	ts.conns[c] = struct{}{}
	ts.wg.Add(1)
	return true
}

func (ts *tlsServe) untrack(c net.Conn) {
	ts.mu.Lock()
	if ts.conns != nil {
		delete(ts.conns, c)
	}
	ts.mu.Unlock()
	ts.wg.Done()
}

// drain stops taking connections, waits for handshakes and TLSRoute
// streams until ctx is done, then closes what is left, with end as the
// reason in their traces. A nil tlsServe (a plain HTTP port) has nothing to
// drain.
func (ts *tlsServe) drain(ctx context.Context, end EndReason) {
	if ts == nil {
		return
	}
	ts.mu.Lock()
	conns := ts.conns
	ts.conns = nil
	ts.mu.Unlock()
	done := make(chan struct{})
	go func() {
		ts.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	ts.ended.Store(&end)
	for c := range conns {
		_ = c.Close()
	}
	<-done
}

// Refusals and abandoned handshakes.
var (
	errRefused     = errors.New("gwdev: connection refused")
	errPassthrough = errors.New("gwdev: passthrough")
)

// TLS alerts the gateway sends itself before a handshake (plaintext
// records: level fatal, then the description).
var (
	alertUnrecognizedName = []byte{21, 3, 1, 0, 2, 2, 112}
)

// handshakeConfig is the one configuration every TLS port starts a
// handshake with: the ClientHello picks the listener's own.
var handshakeConfig = &tls.Config{
	GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		hc, ok := hello.Conn.(*handshakeConn)
		if !ok {
			return nil, errRefused
		}
		return hc.choose(hello)
	},
}

// handshakeConn is a client connection on a TLS port. Until the listener is
// chosen it records what crypto/tls reads, so that a Passthrough listener
// can replay the ClientHello to its backend; when a handshake is abandoned
// it swallows what crypto/tls would write (an alert the client must not
// see: the backend answers the ClientHello instead).
type handshakeConn struct {
	net.Conn
	pr *portRoutes
	// trust names the CA file a refusal's hint trusts (nil: curl -k).
	trust caTrust

	recording bool
	rec       []byte
	mute      bool

	// What the ClientHello said and what the gateway chose.
	hello   bool
	sni     string
	alpn    []string
	tl      *tlsListener
	route   *sniRoute
	cert    *table.Certificate
	refused string
}

func (hc *handshakeConn) Read(p []byte) (int, error) {
	n, err := hc.Conn.Read(p)
	if hc.recording && n > 0 {
		hc.rec = append(hc.rec, p[:n]...)
	}
	return n, err
}

func (hc *handshakeConn) Write(p []byte) (int, error) {
	if hc.mute {
		return len(p), nil
	}
	return hc.Conn.Write(p)
}

// choose picks the listener for a ClientHello and returns its TLS
// configuration, or abandons the handshake: for a Passthrough listener (the
// backend answers), or to refuse the connection.
func (hc *handshakeConn) choose(hello *tls.ClientHelloInfo) (*tls.Config, error) {
	hc.hello, hc.sni, hc.alpn = true, hello.ServerName, hello.SupportedProtos
	pr := hc.pr
	if pr == nil || pr.tls == nil {
		return hc.refuse("no Gateway serves this address and port")
	}
	i := pr.tls.listenerFor(pr, hello.ServerName)
	if i < 0 {
		if hello.ServerName == "" {
			return hc.refuse(fmt.Sprintf("the ClientHello has no SNI and no listener of port %d is without a hostname: connect by name (curl --resolve NAME:PORT:ADDRESS https://NAME:PORT/)", pr.port.Port))
		}
		return hc.refuse(fmt.Sprintf("no listener of port %d matches SNI %q", pr.port.Port, hello.ServerName))
	}
	tl := pr.tls.listeners[i]
	hc.tl = tl
	if tl.broken != "" {
		return hc.refuse("listener " + tl.l.Name + " cannot serve: " + tl.broken)
	}
	if tl.mode != tlsHTTPS {
		j := tl.index.Lookup(wire.NormalizeSNI(hello.ServerName))
		if j < 0 {
			return hc.refuse(fmt.Sprintf("no TLSRoute of listener %s serves SNI %q", tl.l.Name, hello.ServerName))
		}
		hc.route = tl.routes[j]
	}
	if tl.mode == tlsPassthrough {
		hc.mute = true
		return nil, errPassthrough
	}
	hc.recording, hc.rec = false, nil
	hc.cert = tl.certificateFor(hello)
	return tl.conf, nil
}

// refuse abandons the handshake. On a port with only HTTPS listeners the
// client gets an unrecognized_name alert (curl and browsers show it); on a
// port with TLS listeners the connection is just closed, as the Gateway
// API's TLSRoute tests require of an SNI no route serves.
func (hc *handshakeConn) refuse(reason string) (*tls.Config, error) {
	hc.refused = reason
	hc.recording, hc.rec = false, nil
	hc.mute = true
	if hc.pr == nil || hc.pr.tls == nil || !hc.pr.tls.streams {
		_, _ = hc.Conn.Write(alertUnrecognizedName)
	}
	return nil, errRefused
}

// handshakeOutcome is what a completed (or abandoned) handshake leads to.
type handshakeOutcome int

const (
	hsFailed      handshakeOutcome = iota // refused or broken: hc.failure traces it
	hsHTTPS                               // terminated for an HTTPS listener: serve HTTP
	hsTerminate                           // terminated for a TLS listener: forward the stream
	hsPassthrough                         // abandoned for a Passthrough listener: forward the raw stream
)

// newHandshakeConn wraps a connection accepted on a TLS port whose
// compiled routes are pr.
func newHandshakeConn(raw net.Conn, pr *portRoutes, trust caTrust) *handshakeConn {
	return &handshakeConn{Conn: raw, pr: pr, trust: trust, recording: true}
}

// run reads the ClientHello, chooses the listener (choose) and completes
// the handshake, or abandons it. The data plane and Explain both call it;
// only the connection differs.
func (hc *handshakeConn) run(start time.Time) (*tls.Conn, handshakeOutcome, error) {
	_ = hc.Conn.SetDeadline(start.Add(tlsHandshakeTimeout))
	tc := tls.Server(hc, handshakeConfig)
	err := tc.Handshake()
	switch {
	case hc.route != nil && hc.tl.mode == tlsPassthrough:
		_ = hc.Conn.SetDeadline(time.Time{})
		return nil, hsPassthrough, nil
	case err != nil:
		return nil, hsFailed, err
	case hc.tl.mode == tlsHTTPS:
		_ = hc.Conn.SetDeadline(time.Time{})
		return tc, hsHTTPS, nil
	}
	_ = hc.Conn.SetDeadline(time.Time{})
	return tc, hsTerminate, nil
}

// handshake serves one connection accepted on a TLS port.
func (s *Server) handshake(bl *boundListener, raw net.Conn) {
	start := time.Now()
	hc := newHandshakeConn(raw, bl.routes.Load(), s.trust)
	tc, outcome, err := hc.run(start)
	switch outcome {
	case hsPassthrough:
		s.forwardTLSStream(bl, hc, nil, start)
	case hsFailed:
		s.traces.record(hc.failure(bl.bound, err, start))
		_ = raw.Close()
		bl.tls.untrack(raw)
	case hsHTTPS:
		bl.tls.untrack(raw)
		if bl.fast != nil && tc.ConnectionState().NegotiatedProtocol != "h2" {
			bl.fast.Start(tc, time.Now()) // package h1: HTTP/1.1
			return
		}
		bl.tls.queue.Push(tc)
	default:
		s.forwardTLSStream(bl, hc, tc, start)
	}
}

// trace starts the trace of a connection on a TLS port that arrived on
// address ("" in Explain).
func (hc *handshakeConn) trace(address string, start time.Time) Trace {
	t := Trace{Time: start, Client: hc.RemoteAddr().String(), Address: address, Proto: "TLS", SNI: hc.sni, ALPN: hc.alpn}
	if pr := hc.pr; pr != nil {
		t.Gateway, t.Port = pr.gateway.Name, pr.port.Port
	}
	if hc.tl != nil {
		t.Listener, t.Proto = hc.tl.l.Name, hc.tl.mode.String()
	}
	if hc.cert != nil {
		t.Certificate = hc.cert.Secret
	}
	return t
}

type servedTLSKey struct{}

// servedTLS is what an HTTPS connection's handshake said, for its
// requests' traces (checkTLS): the Secret of the certificate presented
// ("" : none) and the ALPN protocols the client offered (nil: none).
type servedTLS struct {
	cert string
	alpn []string
}

// withServedCert remembers, in the context of an HTTPS connection's
// requests, the certificate its handshake presented and the protocols the
// client offered (checkTLS traces them).
func withServedCert(ctx context.Context, c net.Conn) context.Context {
	if rc := h1.Replayed(c); rc != nil { // handed over by the fast path (package h1)
		c = rc.Conn
	}
	if tc, ok := c.(*tls.Conn); ok {
		if hc, ok := tc.NetConn().(*handshakeConn); ok && (hc.cert != nil || len(hc.alpn) > 0) {
			st := &servedTLS{alpn: hc.alpn}
			if hc.cert != nil {
				st.cert = hc.cert.Secret
			}
			return context.WithValue(ctx, servedTLSKey{}, st)
		}
	}
	return ctx
}

// failure is the trace of a connection whose handshake did not complete.
// A plain HTTP request gets a plain 400 answer, as net/http gives one.
func (hc *handshakeConn) failure(address string, err error, start time.Time) Trace {
	t := hc.trace(address, start)
	if address != "" && (hc.tl == nil || hc.route == nil && hc.tl.mode != tlsHTTPS && hc.refused != "") && (hc.hello || len(hc.rec) > 0) {
		t.Hint = tlsRefusalHint(address, hc.pr, hc.trust, hc.sni, hc.rec) // hints.go
	}
	var rhe tls.RecordHeaderError
	msg := strings.TrimPrefix(err.Error(), "tls: ")
	switch {
	case hc.refused != "":
		t.Reason = "refused: " + hc.refused
	case !hc.hello && errors.As(err, &rhe):
		if method, ok := wire.PlainHTTP(hc.rec); ok {
			body := "gwdev: this port serves TLS; use https://\n"
			if t.Hint != "" {
				body += "gwdev: " + t.Hint + "\n"
			}
			_, _ = io.WriteString(hc.Conn, "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"+body)
			t.Proto, t.Method, t.Status, t.BytesOut = "HTTP/1.x", method, http.StatusBadRequest, int64(len(body))
			t.Reason = "plain HTTP on a TLS port: answered 400 (use https://)"
		} else {
			t.Reason = fmt.Sprintf("not TLS: the client's first bytes %q are not a TLS handshake record", preview(hc.rec))
		}
	case !hc.hello && errors.Is(err, io.EOF):
		t.Reason = "the client closed the connection before sending a ClientHello"
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.Reason = fmt.Sprintf("no complete TLS handshake within %s", tlsHandshakeTimeout)
	case strings.Contains(msg, "remote error"):
		t.Reason = "the client aborted the handshake (" + msg + ")" + hc.certHint()
	case hc.tl != nil && hc.tl.clientCAs != nil && strings.Contains(msg, "certificate"):
		t.Reason = "client certificate validation failed (mode AllowValidOnly, CAs from " +
			strings.Join(hc.tl.l.TLS.ClientCARefs, ", ") + "): " + msg
	default:
		t.Reason = "TLS handshake failed: " + msg
	}
	t.BytesIn = int64(len(hc.rec))
	t.Duration = Duration(time.Since(start))
	t.End = EndRefused
	return t
}

// certHint says which certificate the client refused, and whether it had
// expired.
func (hc *handshakeConn) certHint() string {
	c := hc.cert
	if c == nil {
		return ""
	}
	s := "; it was offered the certificate from Secret " + c.Secret
	if !c.NotAfter.IsZero() && time.Now().After(c.NotAfter) {
		s += ", which expired at " + c.NotAfter.UTC().Format(time.RFC3339)
	} else {
		s += " (trust its CA with --cacert: gwdev certs prints how)"
	}
	return s
}

// preview is the start of b, for traces.
func preview(b []byte) []byte {
	if len(b) > 16 {
		return b[:16]
	}
	return b
}
