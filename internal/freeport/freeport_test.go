package freeport

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
)

func TestPortsOutsideTheEphemeralRange(t *testing.T) {
	lo, hi := outsideEphemeral()
	seen := map[int]bool{}
	for range 50 {
		p := TCP(t, "127.0.0.1")
		if p < lo || p >= hi || seen[p] {
			t.Fatalf("port %d: outside [%d, %d) or given twice", p, lo, hi)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d not free: %v", p, err)
		}
		ln.Close()
	}
	u := UDP(t, "127.0.0.1")
	pc, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(u))
	if err != nil {
		t.Fatalf("UDP port %d not free: %v", u, err)
	}
	pc.Close()
}

func TestRefusedStaysClosed(t *testing.T) {
	p := Refused(t, "127.0.0.1")
	addr := "127.0.0.1:" + strconv.Itoa(p)
	if c, err := net.Dial("tcp", addr); err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("another listener could bind %s", addr)
	}
}
