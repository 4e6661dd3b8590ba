package emulator

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gwdev/gwdev/emulator/h1"
)

// connTracker traces the connections of an HTTP listener that end without
// carrying a single request: garbage, a TLS client on a plain port, a
// client that connects and sends nothing. net/http answers or drops those
// before any handler runs, so they would leave no trace otherwise.
// Requests are counted through the connection's context (ConnContext and
// noteRequest); ConnState sees the connection end.
type connTracker struct {
	s  *Server
	bl *boundListener

	mu    sync.Mutex
	conns map[net.Conn]*trackedConn
}

// trackedConn is one connection's start and request count.
type trackedConn struct {
	start    time.Time
	requests atomic.Int64
	// memo is the redaction memo of the connection's traces.
	memo headerMemo
}

type trackedConnKey struct{}

func newConnTracker(s *Server, bl *boundListener) *connTracker {
	return &connTracker{s: s, bl: bl, conns: map[net.Conn]*trackedConn{}}
}

// connContext is the http.Server's ConnContext: it starts tracking c.
func (ct *connTracker) connContext(ctx context.Context, c net.Conn) context.Context {
	tc := &trackedConn{start: time.Now()}
	if rc := h1.Replayed(c); rc != nil { // handed over by the fast path (package h1)
		tc.start = rc.Start
		tc.requests.Store(rc.Served)
	}
	ct.mu.Lock()
	ct.conns[c] = tc
	ct.mu.Unlock()
	return context.WithValue(withServedCert(ctx, c), trackedConnKey{}, tc) // tlsconn.go
}

// connState is the http.Server's ConnState: a connection that closes
// without a request is traced.
func (ct *connTracker) connState(c net.Conn, st http.ConnState) {
	if st != http.StateClosed && st != http.StateHijacked {
		return
	}
	ct.mu.Lock()
	tc := ct.conns[c]
	delete(ct.conns, c)
	ct.mu.Unlock()
	if tc == nil || st == http.StateHijacked || tc.requests.Load() > 0 {
		return
	}
	ct.record(c, tc)
}

// noteRequest counts a request on the connection it arrived on and
// returns the connection's redaction memo (nil: the connection is not
// tracked).
func noteRequest(ctx context.Context) *headerMemo {
	if tc, ok := ctx.Value(trackedConnKey{}).(*trackedConn); ok {
		tc.requests.Add(1)
		return &tc.memo
	}
	return nil
}

// http2Preface starts every HTTP/2 connection with prior knowledge.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

func (ct *connTracker) record(c net.Conn, tc *trackedConn) {
	d := time.Since(tc.start)
	t := Trace{Time: tc.start, Client: c.RemoteAddr().String(), Address: ct.bl.bound, Duration: Duration(d)}
	if pr := ct.bl.routes.Load(); pr != nil {
		t.Gateway, t.Port = pr.gateway.Name, pr.port.Port
	}
	var head, answer []byte
	if cc := countedConn(c); cc != nil {
		t.BytesIn, t.BytesOut = cc.in.Load(), cc.out.Load()
		head, answer = cc.heads()
	}
	noRequest(&t, head, answer, d)
	ct.s.traces.record(t)
}

// noRequest says in t why a connection on an HTTP port carried no request,
// from its first bytes each way and how long it was open. The data plane
// and Explain both call it.
func noRequest(t *Trace, head, answer []byte, d time.Duration) {
	switch {
	case t.BytesIn == 0 && d >= readHeaderTimeout:
		t.Reason = fmt.Sprintf("the client sent nothing for %s: closed", readHeaderTimeout)
	case t.BytesIn == 0:
		t.Reason = "the client closed the connection without sending anything"
	case len(head) > 0 && head[0] == 0x16:
		t.Reason = "a TLS handshake on a plain HTTP port (use http://, or an HTTPS listener)"
	case bytes.HasPrefix(head, []byte(http2Preface)) || bytes.HasPrefix([]byte(http2Preface), head):
		t.Proto = "HTTP/2.0"
		t.Reason = fmt.Sprintf("HTTP/2 (h2c) connection closed without a complete request (%d bytes received)", t.BytesIn)
	default:
		t.Reason = fmt.Sprintf("not an HTTP request (%d bytes received, starting %q)", t.BytesIn, head)
		if st := answeredStatus(answer); st != 0 {
			t.Status = st
			t.Reason += fmt.Sprintf(": answered %d %s and closed", st, http.StatusText(st))
		}
	}
}

// answeredStatus is the status of an HTTP/1 answer's first bytes (0: none).
func answeredStatus(b []byte) int {
	rest, ok := bytes.CutPrefix(b, []byte("HTTP/1.1 "))
	if !ok || len(rest) < 3 {
		return 0
	}
	st, err := strconv.Atoi(string(rest[:3]))
	if err != nil {
		return 0
	}
	return st
}

// countingListener wraps accepted connections in countingConns.
type countingListener struct{ net.Listener }

// Accept returns the next connection, counted.
func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c}, nil
}

// countingConn counts a connection's bytes and keeps the first bytes each
// way, for the trace of a connection that carried no request.
type countingConn struct {
	net.Conn
	in, out atomic.Int64

	mu           sync.Mutex
	head, answer []byte
}

// headSize is how many first bytes a countingConn keeps each way.
const headSize = 32

var _ h1.RawReadable = (*countingConn)(nil)

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.CountRead(p[:max(n, 0)])
	return n, err
}

// CountRead counts bytes read from the connection's socket, whether by
// Read or by the fast path's own system calls (h1.RawReadable).
func (c *countingConn) CountRead(p []byte) {
	n := len(p)
	if n > 0 && c.in.Add(int64(n)) == int64(n) {
		c.mu.Lock()
		c.head = append([]byte(nil), p[:min(n, headSize)]...)
		c.mu.Unlock()
	}
}

// SyscallConn is the socket's, when the connection has one.
func (c *countingConn) SyscallConn() (syscall.RawConn, error) { return syscallConn(c.Conn) }

// syscallConn returns c's socket (errors.ErrUnsupported: none).
func syscallConn(c net.Conn) (syscall.RawConn, error) {
	if sc, ok := c.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 && c.out.Add(int64(n)) == int64(n) {
		c.mu.Lock()
		c.answer = append([]byte(nil), p[:min(n, headSize)]...)
		c.mu.Unlock()
	}
	return n, err
}

// CloseWrite half-closes the connection (net/http does before closing one
// it answered with an error, so the answer is not lost to a reset).
func (c *countingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *countingConn) heads() (head, answer []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head, c.answer
}

// countedConn finds the countingConn under c (nil: c is not counted).
func countedConn(c net.Conn) *countingConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if rc := h1.Replayed(c); rc != nil {
		c = rc.Conn
	}
	cc, _ := c.(*countingConn)
	return cc
}
