//go:build unix

package h1

import (
	"io"
	"net"
	"os"
	"syscall"
)

// rawClient reads a plain client connection's socket with system calls of
// its own, inside one raw read per wait (fastConn.serveRaw): the read
// after a response that would find nothing (and then park) is not made.
// A raw read clears the socket's readiness when it starts, so its
// callback reads first; after that, every byte that arrives while the
// callback runs leaves the readiness set, and the callback waits without
// another read only when its last read emptied the socket (drained).
type rawClient struct {
	rc syscall.RawConn
	// count is told the bytes read (RawReadable.CountRead; nil: none).
	count func(p []byte)
	// fd is the socket during a callback.
	fd int
	// drained is set when the callback's last read found the socket empty
	// (nothing, or fewer bytes than asked): a wait then misses nothing.
	drained bool
}

// newRawClient returns the raw reader of c (nil: c is read through its Read:
// TLS, a pipe, a connection that counts its reads and does not say so).
func newRawClient(c net.Conn) *rawClient {
	var count func([]byte)
	switch cc := c.(type) {
	case *net.TCPConn:
	case RawReadable:
		count = cc.CountRead
	default:
		return nil
	}
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		return nil
	}
	return &rawClient{rc: rc, count: count}
}

// enter starts a callback on the socket fd: its first read is a system
// call (the raw read cleared the readiness an earlier arrival left).
func (r *rawClient) enter(fd uintptr) {
	r.fd, r.drained = int(fd), false
}

// wait runs fn inside one raw read of the socket: fn returns false to wait
// until the socket is readable, true when done.
func (r *rawClient) wait(fn func(fd uintptr) bool) error { return r.rc.Read(fn) }

// read reads the socket without waiting: errWouldBlock when it has
// nothing now.
func (r *rawClient) read(p []byte) (int, error) {
	if r.drained || len(p) == 0 {
		return 0, errWouldBlock
	}
	for {
		n, err := syscall.Read(r.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			r.drained = true
			return 0, errWouldBlock
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0:
			return 0, io.EOF
		}
		if n < len(p) {
			r.drained = true
		}
		if r.count != nil {
			r.count(p[:n])
		}
		return n, nil
	}
}

// shutdown ends the connection both ways at once, from any goroutine and
// while a raw read runs (which a Close waits for): the client sees the
// end, writes fail, and the client watch's read returns.
func (r *rawClient) shutdown() {
	_ = r.rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
}

// dup returns a second connection on the same socket, for the client
// watch: the raw read the handler runs in holds the connection's read
// lock.
func (r *rawClient) dup() (net.Conn, error) {
	nfd, derr := -1, error(nil)
	err := r.rc.Control(func(fd uintptr) {
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		if nfd, derr = syscall.Dup(int(fd)); derr == nil {
			syscall.CloseOnExec(nfd)
		}
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(nfd), "client")
	defer f.Close()
	return net.FileConn(f) // a duplicate of its own, in the poller
}
