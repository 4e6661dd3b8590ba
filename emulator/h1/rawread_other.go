//go:build !unix

package h1

import "net"

// rawClient is unused here: every client connection is read through its
// Read.
type rawClient struct{}

func newRawClient(net.Conn) *rawClient { return nil }

func (*rawClient) enter(uintptr)                 {}
func (*rawClient) read([]byte) (int, error)      { return 0, errWouldBlock }
func (*rawClient) wait(func(uintptr) bool) error { return errWouldBlock }
func (*rawClient) shutdown()                     {}
func (*rawClient) dup() (net.Conn, error)        { return nil, errWouldBlock }
