package emulator

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gwdev/gwdev/emulator/clientcert"
	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/emulator/internal/wire"
)

// TLSRoute streams: a TLS listener in Passthrough mode forwards the raw
// connection, the ClientHello it read included, to a backend of the
// TLSRoute entry the SNI selects; in Terminate mode it forwards the
// decrypted stream (over TLS again when a BackendTLSPolicy applies). One
// trace per connection: SNI, ALPN, TLS version and protocol, the backend
// and its address, bytes each way and duration.

// tlsStreamDialTimeout bounds connecting to one backend endpoint.
const tlsStreamDialTimeout = 5 * time.Second

// forwardTLSStream serves a connection whose SNI chose a TLS listener: tc
// is the terminated connection (Terminate) or nil (Passthrough: hc.rec
// holds the ClientHello bytes, hc.Conn the raw socket).
func (s *Server) forwardTLSStream(bl *boundListener, hc *handshakeConn, tc *tls.Conn, start time.Time) {
	raw := hc.Conn
	defer bl.tls.untrack(raw)
	t := hc.trace(bl.bound, start)
	defer func() {
		t.Duration = Duration(time.Since(start))
		s.traces.record(t)
	}()
	passthrough := tc == nil
	var client net.Conn = raw
	if !passthrough {
		client = tc
	}
	b := hc.decideStream(&t, tc)
	if b == nil {
		s.refuseStream(client, passthrough)
		return
	}
	up, err := s.dialStream(b, hc, passthrough, &t)
	if err != nil {
		t.Reason, t.End = "refused: "+err.Error(), EndRefused
		s.refuseStream(client, passthrough)
		return
	}
	var prefix []byte
	if passthrough {
		prefix = hc.rec
		hc.rec = nil
	}
	client, up = withStreamIdle(bl.routes.Load(), client, up) // policy.go: a listener policy's stream.idleTimeout
	upStart := time.Now()
	sp := &tlsSplice{client: client, backend: up, passthrough: passthrough}
	sp.run(prefix)
	t.UpstreamDuration = Duration(time.Since(upStart))
	t.BytesIn, t.BytesOut = sp.in, sp.out
	if passthrough && sp.version != 0 {
		t.TLSVersion, t.NegotiatedProtocol = tls.VersionName(sp.version), sp.alpn
	}
	t.End = sp.end()
	if sp.err != nil {
		t.Reason = sp.err.Error()
	}
	if e := bl.tls.ended.Load(); e != nil {
		t.End = *e
	}
}

// decideStream records the TLSRoute entry the handshake chose and picks its
// backend; nil (with t.Reason and t.End set) when the connection must be
// refused. tc is the terminated connection (nil: Passthrough). The data
// plane and Explain both call it.
func (hc *handshakeConn) decideStream(t *Trace, tc *tls.Conn) *backendRoutes {
	if tc != nil {
		cs := tc.ConnectionState()
		t.TLSVersion, t.NegotiatedProtocol = tls.VersionName(cs.Version), cs.NegotiatedProtocol
	}
	sr := hc.route
	t.Rule, t.Matched, t.Route, t.Source = sr.r.Name, sr.at, sr.r.Route.String(), sr.source
	b, reason := sr.choose(t)
	if b == nil {
		t.Reason, t.End = "refused: "+reason, EndRefused
	}
	return b
}

// choose picks the entry's backend and checks it can take a connection.
func (sr *sniRoute) choose(t *Trace) (*backendRoutes, string) {
	b := sr.pick()
	if b == nil {
		if len(sr.backends) == 0 {
			return nil, sr.r.Name + " has no backendRefs"
		}
		return nil, "every backendRef of " + sr.r.Name + " has weight 0"
	}
	t.Backend, t.Service = b.b.Name, b.service
	if b.b.Target != nil {
		t.Target, t.Why = b.b.Target.Kind, b.b.Target.Why
	}
	switch {
	case b.b.Invalid != "" || b.up == nil:
		return nil, "backend " + b.b.Name + " is invalid: " + b.b.Invalid
	case b.up.echo == nil && len(b.up.addrs) == 0:
		return nil, "backend " + b.b.Name + " has no endpoints"
	}
	return b, ""
}

// refuseStream closes a connection the gateway cannot forward. A
// passthrough client, whose ClientHello nobody answered, sees the
// connection end (EOF), as the Gateway API's TLSRoute tests require of a
// route whose backend is invalid; a terminated one gets a close_notify.
func (s *Server) refuseStream(client net.Conn, passthrough bool) {
	_ = client.Close()
}

// dialStream connects to the chosen backend: the echo backend in process,
// or the backend's endpoints round-robin, each tried once. In Terminate
// mode a BackendTLSPolicy makes the gateway speak TLS to the backend.
func (s *Server) dialStream(b *backendRoutes, hc *handshakeConn, passthrough bool, t *Trace) (net.Conn, error) {
	up := b.up
	reencrypt := !passthrough && b.b.TLS != nil
	if reencrypt && up.tlsErr != "" {
		return nil, errors.New(up.tlsErr)
	}
	var conn net.Conn
	if up.echo != nil {
		t.Upstream = "echo"
		gw, echoSide := wire.Pipe()
		var conf *tls.Config
		if passthrough || reencrypt {
			conf = echosrv.ServerTLS(b.b.Target.EchoTLS, true, reencrypt)
		}
		ingress, idle := "", time.Duration(0)
		if hc.pr != nil {
			ingress, idle = hc.pr.gateway.Gateway.Name, streamIdleTimeout(hc.pr)
		}
		go echosrv.ServeStream(echoSide, up.echo, ingress, conf, idle)
		conn = gw
	} else {
		c, err := up.dialEndpoints(tlsStreamDialTimeout, t)
		if err != nil {
			return nil, err
		}
		conn = c
	}
	if !reencrypt {
		return conn, nil
	}
	ctx, cc := context.Background(), (*clientcert.Conn)(nil)
	if up.clientCert != "" {
		ctx, cc = clientcert.Wrap(ctx, conn)
		conn = cc
	}
	tc := tls.Client(conn, up.tls)
	_ = conn.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("TLS to the backend (BackendTLSPolicy %s, SNI %s%s): %s", b.b.TLS.Policy, b.b.TLS.SNI,
			clientCertHint(b.b.TLS, err), strings.TrimPrefix(err.Error(), "tls: "))
	}
	_ = conn.SetDeadline(time.Time{})
	if cc != nil {
		t.BackendClientCert = clientcert.Note(up.clientCert, cc.Presented())
	}
	return tc, nil
}

// tlsSplice copies a forwarded connection both ways until both sides have
// closed or one fails. A side that half-closes is passed on as a
// half-close, so the other side can still answer.
type tlsSplice struct {
	client, backend net.Conn
	passthrough     bool

	in, out int64 // bytes client→backend, backend→client
	err     error // the first failure, if any
	// errFrom is the side err came from ("client" or "backend");
	// firstEOF the side that closed first.
	errFrom, firstEOF string
	mu                sync.Mutex
	// version and alpn are what the backend's ServerHello chose
	// (Passthrough).
	version uint16
	alpn    string
}

func (sp *tlsSplice) run(prefix []byte) {
	var wg sync.WaitGroup
	var once sync.Once
	fail := func(from string, err error) {
		once.Do(func() {
			sp.err, sp.errFrom = err, from
			_ = sp.client.Close()
			_ = sp.backend.Close()
		})
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		tlsToBackend{sp}.copy(prefix, fail)
	}()
	go func() {
		defer wg.Done()
		tlsToClient{sp}.copy(fail)
	}()
	wg.Wait()
	_ = sp.client.Close()
	_ = sp.backend.Close()
}

// tlsToBackend copies what the client sends to the backend.
type tlsToBackend struct{ sp *tlsSplice }

func (c tlsToBackend) copy(prefix []byte, fail func(string, error)) {
	sp := c.sp
	if len(prefix) > 0 {
		n, err := sp.backend.Write(prefix)
		sp.in += int64(n)
		if err != nil {
			fail("backend", fmt.Errorf("sending the ClientHello to the backend: %w", err))
			return
		}
	}
	n, err := io.Copy(sp.backend, sp.client)
	sp.in += n
	if err != nil && !errors.Is(err, net.ErrClosed) {
		fail("client", fmt.Errorf("client to backend: %w", err))
		return
	}
	sp.eof("client")
	wire.CloseWrite(sp.backend)
}

// tlsToClient copies what the backend sends to the client; in Passthrough
// mode it reads the ServerHello on its way, for the trace.
type tlsToClient struct{ sp *tlsSplice }

func (c tlsToClient) copy(fail func(string, error)) {
	sp := c.sp
	if sp.passthrough {
		first, err := readRecord(sp.backend)
		sp.version, sp.alpn = parseServerHello(first)
		if len(first) > 0 {
			n, werr := sp.client.Write(first)
			sp.out += int64(n)
			if werr != nil {
				fail("client", fmt.Errorf("backend to client: %w", werr))
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) {
				fail("backend", fmt.Errorf("backend to client: %w", err))
				return
			}
			sp.eof("backend")
			wire.CloseWrite(sp.client)
			return
		}
	}
	n, err := io.Copy(sp.client, sp.backend)
	sp.out += n
	if err != nil && !errors.Is(err, net.ErrClosed) {
		fail("backend", fmt.Errorf("backend to client: %w", err))
		return
	}
	sp.eof("backend")
	wire.CloseWrite(sp.client)
}

// eof notes that side half-closed.
func (sp *tlsSplice) eof(side string) {
	sp.mu.Lock()
	if sp.firstEOF == "" {
		sp.firstEOF = side
	}
	sp.mu.Unlock()
}

// end says how the stream ended, for Trace.End.
func (sp *tlsSplice) end() EndReason {
	switch {
	case sp.err != nil && sp.errFrom == "client":
		return EndClientClosed
	case sp.err != nil:
		return EndBackendError
	case sp.firstEOF == "backend":
		return EndBackendClosed
	}
	return EndClientClosed
}

// maxRecord is the largest TLS record body readRecord accepts.
const maxRecord = 16384 + 2048

// readRecord reads the first TLS record a backend sends. Bytes that are
// not a handshake record are returned as read so far, unparsed.
func readRecord(r io.Reader) ([]byte, error) {
	hdr := make([]byte, 5, 5+512)
	n, err := io.ReadFull(r, hdr)
	if err != nil {
		return hdr[:n], err
	}
	size := int(binary.BigEndian.Uint16(hdr[3:5]))
	if hdr[0] != 22 || size > maxRecord {
		return hdr, nil
	}
	rec := append(hdr, make([]byte, size)...)
	n, err = io.ReadFull(r, rec[5:])
	return rec[:5+n], err
}

// parseServerHello returns the TLS version and ALPN protocol a ServerHello
// record chose (0 and "" when rec is not a whole ServerHello).
func parseServerHello(rec []byte) (uint16, string) {
	if len(rec) < 5+4+38 || rec[0] != 22 || rec[5] != 2 {
		return 0, ""
	}
	b := rec[9:]
	version := binary.BigEndian.Uint16(b)
	b = b[34:] // version, random
	sid := int(b[0])
	if len(b) < 1+sid+3+2 {
		return version, ""
	}
	b = b[1+sid+3:] // session id, cipher suite, compression
	ext := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if ext < len(b) {
		b = b[:ext]
	}
	alpn := ""
	for len(b) >= 4 {
		typ, size := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		b = b[4:]
		if size > len(b) {
			break
		}
		data := b[:size]
		b = b[size:]
		switch {
		case typ == 43 && size == 2: // supported_versions: the chosen one
			version = binary.BigEndian.Uint16(data)
		case typ == 16 && size >= 3: // ALPN: one protocol
			if l := int(data[2]); 3+l <= size {
				alpn = string(data[3 : 3+l])
			}
		}
	}
	return version, alpn
}
