// Package freeport gives tests loopback ports for servers that must be told
// their port (a Gateway listener's port is in the manifest) instead of
// binding port 0 and keeping the listener.
//
// A port that a test found free by binding port 0 and closing again is in
// the kernel's ephemeral range: until the server binds it, the kernel may
// hand it to any other socket, a client's connect or another test's
// listener (in this process or in another package's test binary running
// alongside). On a loaded machine that window is long enough to lose the
// port. So TCP and UDP pick ports outside the ephemeral range, which the
// kernel never hands out by itself, at random, and never the same one
// twice in a process; only another caller of this package picking the same
// port at the same moment can take it. Refused gives a port that stays
// closed for the whole test.
package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Ports below lowest are left alone (well-known services, privileged ports).
const lowest = 10000

var (
	mu    sync.Mutex
	given = map[string]bool{} // "network ip port"
)

// TCP returns a port on ip where nothing listened just now and that the
// kernel does not hand out to sockets binding port 0.
func TCP(t testing.TB, ip string) int {
	t.Helper()
	return pick(t, "tcp", ip)
}

// UDP is TCP for UDP.
func UDP(t testing.TB, ip string) int {
	t.Helper()
	return pick(t, "udp", ip)
}

// Refused returns a TCP port on ip where connections are refused until the
// test ends: an established connection holds the port as its local end,
// so no listener (of this process or another) can bind it meanwhile.
func Refused(t testing.TB, ip string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); peer.Close() })
	return c.LocalAddr().(*net.TCPAddr).Port
}

func pick(t testing.TB, network, ip string) int {
	t.Helper()
	lo, hi := outsideEphemeral()
	mu.Lock()
	defer mu.Unlock()
	for range 1000 {
		p := lo + rand.IntN(hi-lo)
		key := network + " " + ip + " " + strconv.Itoa(p)
		if given[key] || !bindable(network, ip, p) {
			continue
		}
		given[key] = true
		return p
	}
	// No free port outside the ephemeral range: let the kernel choose.
	if network == "udp" {
		pc, err := net.ListenPacket("udp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		return pc.LocalAddr().(*net.UDPAddr).Port
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func bindable(network, ip string, port int) bool {
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	if network == "udp" {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		return pc.Close() == nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	return ln.Close() == nil
}

// outsideEphemeral returns the widest range [lo, hi) of ports above lowest
// outside the kernel's ephemeral range (Linux's ip_local_port_range; other
// systems use 49152-65535 by default).
func outsideEphemeral() (lo, hi int) {
	first, last := 49152, 65535
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			a, err1 := strconv.Atoi(f[0])
			z, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil {
				first, last = a, z
			}
		}
	}
	below, above := first-lowest, 65536-(last+1)
	if below >= above {
		return lowest, max(first, lowest+1)
	}
	return last + 1, 65536
}
