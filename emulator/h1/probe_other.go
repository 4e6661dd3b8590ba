//go:build !unix

package h1

import (
	"bufio"
	"net"
)

// CanProbeIdle is false here: a socket cannot be peeked at without
// blocking, so stray bytes from a backend could be read as the next
// request's answer. The pool is not used; net/http's transport (which reads
// idle connections with a goroutine of its own) sends every request.
const CanProbeIdle = false

type idleProbe struct{}

func newIdleProbe(net.Conn) *idleProbe { return &idleProbe{} }

func (*idleProbe) look() (idleState, []byte) { return idleOpen, nil }

func (*idleProbe) flushAwait(w *bufio.Writer) error { return w.Flush() }
