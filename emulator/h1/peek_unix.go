//go:build unix && !linux

package h1

import "syscall"

// peek looks at the socket without reading or waiting.
func (p *idleProbe) peek(fd uintptr) {
	n, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
		p.st = idleOpen
	case err == nil && n > 0:
		p.st, p.n = idleStray, n
	} // else the end of the connection (0) or an error: idleClosed
}
