//go:build unix

package h1

import (
	"bufio"
	"net"
	"syscall"
)

// CanProbeIdle: the pool can look at idle connections here (idleProbe).
const CanProbeIdle = true

// idleProbe looks at one idle connection before each reuse with one
// non-blocking peek. It is made once per connection, so that a look
// allocates nothing. The peek runs under RawConn.Control (the descriptor
// held open, nothing else): a call that never waits needs neither the
// read lock nor the poller's read state that RawConn.Read takes and
// resets (no deadline is set on an idle connection: an aborted exchange's
// connection is closed, not pooled). On Linux the peek is a raw system
// call (peek_linux.go).
type idleProbe struct {
	rc  syscall.RawConn // nil: the connection has no socket to peek at
	err error           // the error getting rc
	buf [strayPeek]byte
	n   int
	st  idleState
	fn  func(fd uintptr)
	// flushAwait's state: the request to flush, whether it was, the
	// flush's error, and the wait's callback (made once).
	w       *bufio.Writer
	flushed bool
	werr    error
	awaitFn func(fd uintptr) bool
}

func newIdleProbe(c net.Conn) *idleProbe {
	p := &idleProbe{}
	if sc, ok := c.(syscall.Conn); ok {
		p.rc, p.err = sc.SyscallConn()
	}
	p.fn = p.peek
	p.awaitFn = p.await
	return p
}

// flushAwait sends the request buffered in w and waits until the
// connection has something to read (the answer, its end, an error),
// without a read that finds nothing yet: the wait is armed before the
// write (a raw read whose first call writes), so an answer that comes at
// once is not missed. The read that follows fails as a plain read would
// when the wait did (a deadline, a closed connection). Use it only when
// nothing of the request was written before (an answer could have come
// before the wait was armed).
func (p *idleProbe) flushAwait(w *bufio.Writer) error {
	if p.rc == nil || p.err != nil {
		return w.Flush()
	}
	p.w, p.flushed, p.werr = w, false, nil
	_ = p.rc.Read(p.awaitFn) // a failed wait: the read that follows says why
	p.w = nil
	if !p.flushed {
		return w.Flush() // the wait never started (a deadline, a closed connection)
	}
	return p.werr
}

func (p *idleProbe) await(uintptr) bool {
	if p.flushed {
		return true // readable
	}
	p.flushed = true
	p.werr = p.w.Flush()
	return p.werr != nil
}

// saw records what a peek found: n bytes, or the call's error (0: none).
func (p *idleProbe) saw(n int, errno syscall.Errno) {
	switch {
	case errno == syscall.EAGAIN || errno == syscall.EWOULDBLOCK:
		p.st = idleOpen
	case errno == 0 && n > 0:
		p.st, p.n = idleStray, n
	} // else the end of the connection (0) or an error: idleClosed
}

// look returns idleOpen when nothing is there to read, idleClosed when the
// backend closed the connection, idleStray (with the first bytes) when the
// backend sent bytes no request asked for.
func (p *idleProbe) look() (idleState, []byte) {
	if p.err != nil {
		return idleClosed, nil
	}
	if p.rc == nil {
		return idleOpen, nil
	}
	p.st = idleClosed
	if err := p.rc.Control(p.fn); err != nil {
		return idleClosed, nil
	}
	if p.st == idleStray {
		return p.st, p.buf[:p.n]
	}
	return p.st, nil
}
