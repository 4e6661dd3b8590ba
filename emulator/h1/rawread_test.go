//go:build linux

package h1

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// readCalls is the number of read system calls the process made so far
// (/proc/self/io's syscr).
func readCalls(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no read count here: %v", err)
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("syscr: ")); ok {
			n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no syscr in /proc/self/io")
	return 0
}

// TestKeepAliveRequestCostsOneRead: on a plain keep-alive connection a
// request that comes after the previous answer costs the fast path one
// read, not two (a read that finds nothing after the answer, then the one
// after the wait): the wait for the next request happens inside a raw read
// whose callback wrote the answer (serveRaw). The client is a blocking
// socket outside the runtime's poller, so that each of its answers costs it
// exactly one read too.
func TestKeepAliveRequestCostsOneRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	defer func() { _ = f.Stop(t.Context()) }()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			f.Start(c, time.Now())
		}
	}()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	port := ln.Addr().(*net.TCPAddr).Port
	if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	tv := syscall.NsecToTimeval(int64(5 * time.Second))
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	buf := make([]byte, 4096)
	ask := func(i int) {
		t.Helper()
		if _, err := syscall.Write(fd, req); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		n, err := syscall.Read(fd, buf)
		if err != nil || !bytes.HasSuffix(buf[:max(n, 0)], []byte("\r\n\r\nok")) {
			t.Fatalf("request %d: answer %q, %v", i, buf[:max(n, 0)], err)
		}
	}
	for i := range 3 { // the first request, and the connection on the raw path
		ask(i)
	}
	const n = 200
	before := readCalls(t)
	for i := range n {
		ask(i)
	}
	reads := readCalls(t) - before
	// n reads of the client's, n of the fast path's, and a few of the
	// runtime's (its poller's wake-ups) and of /proc/self/io.
	if reads > 2*n+n/5 {
		t.Fatalf("%d requests made %d read system calls, want about %d (one each side per request)", n, reads, 2*n)
	}
	t.Logf("%d requests, %d read system calls", n, reads)
}

// TestStopEndsARequestServedInsideARawRead: a shutdown whose grace ran out
// closes a connection whose handler runs inside the raw read of its socket
// (where a Close waits for that read to end, and the client watch reads a
// duplicate of the connection, which a Close does not end): the socket is
// shut down, the watch sees it and cancels the request, and Stop returns.
func TestStopEndsARequestServedInsideARawRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	arrived, cancelled := make(chan struct{}), make(chan struct{})
	f := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wait" {
			close(arrived)
			<-r.Context().Done()
			close(cancelled)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	go func() {
		c, err := ln.Accept()
		if err == nil {
			f.Start(c, time.Now())
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_, _ = io.WriteString(c, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n") // served inside a raw read
	<-arrived
	time.Sleep(2 * ClientWatchAfter) // the client watch reads now (a Close alone would not end its read)
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // no grace: Stop closes every connection
	stopped := make(chan error, 1)
	go func() { stopped <- f.Stop(ctx) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the request was not cancelled")
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("client read %v, want EOF (closed)", err)
	}
}
