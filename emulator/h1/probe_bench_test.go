//go:build unix

package h1

import (
	"net"
	"testing"
)

// BenchmarkIdleLook is the pool's look at an idle loopback connection
// before a reuse (one peek that finds nothing): a system call per reused
// connection, so its Go side is part of every pooled request's CPU.
func BenchmarkIdleLook(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if peer := <-accepted; peer != nil {
		defer peer.Close()
	}
	p := newIdleProbe(c)
	b.ReportAllocs()
	for b.Loop() {
		if st, _ := p.look(); st != idleOpen {
			b.Fatalf("state %d, want open", st)
		}
	}
}
