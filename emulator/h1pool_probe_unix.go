//go:build unix

package emulator

import (
	"net"
	"syscall"
)

// canProbeIdle: the pool can look at idle connections here (probeIdle).
const canProbeIdle = true

// probeIdle looks at an idle connection before reuse with one non-blocking
// peek: idleOpen when nothing is there to read, idleClosed when the backend
// closed it, idleStray (with the first bytes) when the backend sent bytes
// no request asked for.
func probeIdle(c net.Conn) (idleState, []byte) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return idleOpen, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return idleClosed, nil
	}
	st := idleClosed
	var buf [strayPeek]byte
	var n int
	err = rc.Read(func(fd uintptr) bool {
		var perr error
		n, _, perr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case perr == syscall.EAGAIN || perr == syscall.EWOULDBLOCK:
			st = idleOpen
		case perr == nil && n > 0:
			st = idleStray
		}
		return true
	})
	if err != nil {
		return idleClosed, nil
	}
	if st == idleStray {
		return st, buf[:n]
	}
	return st, nil
}
