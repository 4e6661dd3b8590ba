// Package wire holds the connection plumbing that the data plane and the
// echo backends share: an in-memory connection pair, a listener fed by an
// accept loop, half-close, and telling a protocol from a connection's first
// bytes or a request's headers. It imports the standard library only.
package wire

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Pipe returns the two ends of an in-process connection. Unlike
// net.Pipe each direction is buffered (a TLS peer that stops reading to
// send an alert must not deadlock the other) and each end can half-close.
func Pipe() (*Conn, *Conn) {
	ab, ba := newBuffer(), newBuffer()
	return &Conn{in: ba, out: ab, local: Addr("gateway"), remote: Addr("echo")},
		&Conn{in: ab, out: ba, local: Addr("echo"), remote: Addr("gateway")}
}

// Conn is one end of Pipe. Deadlines are not supported (the echo
// backend never stalls).
type Conn struct {
	in, out       *buffer
	local, remote net.Addr
}

var _ net.Conn = (*Conn)(nil)

func (c *Conn) Read(p []byte) (int, error)  { return c.in.read(p) }
func (c *Conn) Write(p []byte) (int, error) { return c.out.write(p) }

// CloseWrite ends what this end sends; the other end reads EOF.
func (c *Conn) CloseWrite() error {
	c.out.closeWrite()
	return nil
}

// Close ends both directions.
func (c *Conn) Close() error {
	c.out.closeWrite()
	c.in.closeRead()
	return nil
}

// bufferSize is how much one direction of a Pipe holds before
// writes wait for the reader.
const bufferSize = 256 << 10

// buffer is one direction of a Pipe.
type buffer struct {
	mu      sync.Mutex
	cond    sync.Cond
	buf     bytes.Buffer
	wclosed bool // no more writes: reads drain, then EOF
	rclosed bool // the reader is gone: writes fail
}

func newBuffer() *buffer {
	b := &buffer{}
	b.cond.L = &b.mu
	return b
}

func (b *buffer) read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.buf.Len() == 0 && !b.wclosed && !b.rclosed {
		b.cond.Wait()
	}
	switch {
	case b.rclosed:
		return 0, net.ErrClosed
	case b.buf.Len() == 0:
		return 0, io.EOF
	}
	n, _ := b.buf.Read(p)
	b.cond.Broadcast()
	return n, nil
}

func (b *buffer) write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for len(p) > 0 {
		for b.buf.Len() >= bufferSize && !b.wclosed && !b.rclosed {
			b.cond.Wait()
		}
		if b.wclosed || b.rclosed {
			return n, io.ErrClosedPipe
		}
		k := min(len(p), bufferSize-b.buf.Len())
		b.buf.Write(p[:k])
		p, n = p[k:], n+k
		b.cond.Broadcast()
	}
	return n, nil
}

func (b *buffer) closeWrite() {
	b.mu.Lock()
	b.wclosed = true
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *buffer) closeRead() {
	b.mu.Lock()
	b.rclosed = true
	b.buf.Reset()
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (c *Conn) LocalAddr() net.Addr              { return c.local }
func (c *Conn) RemoteAddr() net.Addr             { return c.remote }
func (c *Conn) SetDeadline(time.Time) error      { return nil }
func (c *Conn) SetReadDeadline(time.Time) error  { return nil }
func (c *Conn) SetWriteDeadline(time.Time) error { return nil }

// Addr names an in-process endpoint.
type Addr string

func (a Addr) Network() string { return "memory" }
func (a Addr) String() string  { return string(a) }

// Queue is a net.Listener fed by the TLS accept loop: an http.Server
// serves the connections pushed into it.
type Queue struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

var _ net.Listener = (*Queue)(nil)

func NewQueue(addr net.Addr) *Queue {
	return &Queue{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

// Accept returns the next pushed connection.
func (q *Queue) Accept() (net.Conn, error) {
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

// Close makes Accept fail; connections pushed later are closed.
func (q *Queue) Close() error {
	q.once.Do(func() { close(q.done) })
	return nil
}

// Addr is the address of the socket the connections came from.
func (q *Queue) Addr() net.Addr { return q.addr }

// push hands c to the server, or closes it once the queue is closed.
func (q *Queue) Push(c net.Conn) {
	select {
	case q.ch <- c:
	case <-q.done:
		_ = c.Close()
	}
}

// PlainHTTP reports whether a connection's first bytes are an HTTP/1.x
// request line (or the HTTP/2 preface), and its method.
func PlainHTTP(b []byte) (string, bool) {
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE", "PRI"} {
		if bytes.HasPrefix(b, []byte(m+" ")) {
			return m, true
		}
	}
	return "", false
}

// CloseWrite half-closes c when it can, else closes it.
func CloseWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// IsGRPC reports whether r is a gRPC request: HTTP/2 with a gRPC content type.
func IsGRPC(r *http.Request) bool {
	if r.ProtoMajor != 2 {
		return false
	}
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/grpc")
}

// NormalizeSNI lower-cases an SNI and drops a trailing dot.
func NormalizeSNI(sni string) string {
	return strings.TrimSuffix(strings.ToLower(sni), ".")
}

// Sleep waits d, or until ctx is done (its error then).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
