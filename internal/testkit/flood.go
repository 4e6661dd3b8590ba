package testkit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// HugeHeaderFlood sends requests GET /flood/0, /flood/1, … each with a
// 1 MB X-Big header to a gateway at addr (issue 12, finding 1), reusing a
// connection while the gateway keeps it open, and fails the test unless
// each is answered status. It sends 300 requests (a few seconds), or
// GWDEV_FLOOD of them (1000 repeats the measurement), and returns
// how many.
func HugeHeaderFlood(t testing.TB, addr string, status int) int {
	t.Helper()
	n := 300
	if v, err := strconv.Atoi(os.Getenv("GWDEV_FLOOD")); err == nil && v > 0 {
		n = v
	}
	big := strings.Repeat("h", 1<<20-100)
	var conn net.Conn
	var br *bufio.Reader
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for i := range n {
		if conn == nil {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conn, br = c, bufio.NewReader(c)
		}
		// A raw request: net/http's client would refuse nothing, but this
		// keeps the test's own memory flat.
		if _, err := fmt.Fprintf(conn, "GET /flood/%d HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", i, big); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("request %d: status %d, want %d", i, resp.StatusCode, status)
		}
		if resp.Close {
			conn.Close()
			conn = nil
		}
	}
	return n
}
