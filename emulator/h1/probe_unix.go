//go:build unix

package h1

import (
	"net"
	"syscall"
)

// CanProbeIdle: the pool can look at idle connections here (idleProbe).
const CanProbeIdle = true

// idleProbe looks at one idle connection before each reuse with one
// non-blocking peek. It is made once per connection, so that a look
// allocates nothing.
type idleProbe struct {
	rc  syscall.RawConn // nil: the connection has no socket to peek at
	err error           // the error getting rc
	buf [strayPeek]byte
	n   int
	st  idleState
	fn  func(fd uintptr) bool
}

func newIdleProbe(c net.Conn) *idleProbe {
	p := &idleProbe{}
	if sc, ok := c.(syscall.Conn); ok {
		p.rc, p.err = sc.SyscallConn()
	}
	p.fn = p.peek
	return p
}

func (p *idleProbe) peek(fd uintptr) bool {
	var err error
	p.n, _, err = syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
		p.st = idleOpen
	case err == nil && p.n > 0:
		p.st = idleStray
	}
	return true
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
	if err := p.rc.Read(p.fn); err != nil {
		return idleClosed, nil
	}
	if p.st == idleStray {
		return p.st, p.buf[:p.n]
	}
	return p.st, nil
}
