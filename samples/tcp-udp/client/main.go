// Command client sends a message through a gateway's TCP and UDP listeners
// and prints what comes back. Over TCP it half-closes after sending (like
// `nc -N` or socat) and reads the answer to the end.
//
//	go run ./samples/tcp-udp/client -tcp 127.0.0.1:9100 -udp 127.0.0.1:9053 -msg hello
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	tcpAddr := flag.String("tcp", "127.0.0.1:9100", "TCP listener address (empty: skip)")
	udpAddr := flag.String("udp", "127.0.0.1:9053", "UDP listener address (empty: skip)")
	msg := flag.String("msg", "hello, gateway", "the message")
	flag.Parse()
	failed := false
	if *tcpAddr != "" {
		if err := viaTCP(*tcpAddr, *msg); err != nil {
			fmt.Fprintln(os.Stderr, "tcp:", err)
			failed = true
		}
	}
	if *udpAddr != "" {
		if err := viaUDP(*udpAddr, *msg); err != nil {
			fmt.Fprintln(os.Stderr, "udp:", err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func viaTCP(addr, msg string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		return err
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	got, err := io.ReadAll(c)
	if err != nil {
		return err
	}
	if len(got) == 0 {
		return fmt.Errorf("%s closed the connection without an answer (see the trace for why)", addr)
	}
	fmt.Printf("tcp %s: sent %q, got %q\n", addr, msg, got)
	return nil
}

func viaUDP(addr, msg string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := io.WriteString(c, msg); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil {
		return fmt.Errorf("no answer from %s: %w", addr, err)
	}
	fmt.Printf("udp %s: sent %q, got %q\n", addr, msg, buf[:n])
	return nil
}
