//go:build unix && !linux

package h1

import (
	"errors"
	"syscall"
)

// peek looks at the socket without reading or waiting.
func (p *idleProbe) peek(fd uintptr) {
	n, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	var errno syscall.Errno
	if err != nil && !errors.As(err, &errno) {
		errno = syscall.EIO // not an errno: a failure all the same
	}
	p.saw(n, errno)
}
