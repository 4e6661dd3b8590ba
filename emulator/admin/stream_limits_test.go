package admin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
)

// stalledStream opens /traces/stream on a connection whose receive buffer
// is as small as the kernel allows, reads nothing, and returns it.
func stalledStream(t *testing.T, admin string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
		return cmp.Or(err, serr)
	}}
	conn, err := d.Dial("tcp", admin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := fmt.Fprintf(conn, "GET /traces/stream HTTP/1.1\r\nHost: %s\r\n\r\n", admin); err != nil {
		t.Fatal(err)
	}
	return conn
}

// sendPadded sends n requests whose traces are about 4 KB each (a long
// query), from 4 connections.
func sendPadded(t *testing.T, port, n int) {
	t.Helper()
	pad := strings.Repeat("p", 4<<10)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/echo/%d?pad=%s", port, i, pad))
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}

// TestTraceStreamStalledClientDisconnected: a /traces/stream client that
// stops reading (issue 35: it held ~5.5 MB of queued traces forever) holds
// at most the stream's byte bound while traces keep coming, and is
// disconnected once a write waits past the write deadline; the
// disconnection is counted in gwdev_trace_streams_stalled_total.
func TestTraceStreamStalledClientDisconnected(t *testing.T) {
	const bound = 64 << 10
	var adm *Admin
	_, port, admin := serveGatewayWith(t, emulator.Config{}, func(a *Admin) {
		adm = a
		a.writeTimeout = 300 * time.Millisecond
		a.streamBytes = bound
	})
	conn := stalledStream(t, admin)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if n, _ := adm.streamUsage(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream never opened")
		}
	}
	maxQueued, rounds := 0, 0
	for deadline := time.Now().Add(20 * time.Second); ; rounds++ {
		n, queued := adm.streamUsage()
		maxQueued = max(maxQueued, queued)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a client that reads nothing still has its stream after %d requests (%d bytes queued at most)", rounds*200, maxQueued)
		}
		sendPadded(t, port, 200)
	}
	// One trace may take the queue past the bound (a first trace always
	// goes in); each is about 5 KB here.
	if maxQueued > bound+8<<10 {
		t.Errorf("a stalled stream queued %d bytes, want at most about %d", maxQueued, bound)
	}
	if got := waitMetric(admin, regexp.MustCompile(`(?m)^gwdev_trace_streams_stalled_total (\S+)$`), "1"); got != "1" {
		t.Errorf("gwdev_trace_streams_stalled_total %q, want 1", got)
	}
	// The connection is closed: reading what was sent ends.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("the stalled client's connection is still open: %v", err)
	}
}

// TestTraceStreamCap: past maxStreams clients a new one is refused with
// 503 and a reason (counted in gwdev_trace_streams_refused_total); once
// one goes, a new one is served.
func TestTraceStreamCap(t *testing.T) {
	var adm *Admin
	_, _, admin := serveGatewayWith(t, emulator.Config{}, func(a *Admin) { adm, a.maxStreams = a, 2 })
	open := func() (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+admin+"/traces/stream", nil)
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); resp.Body.Close() })
		return resp, cancel
	}
	first, closeFirst := open()
	second, _ := open()
	if first.StatusCode != 200 || second.StatusCode != 200 {
		t.Fatalf("the first two streams: %d %d", first.StatusCode, second.StatusCode)
	}
	third, _ := open()
	if third.StatusCode == http.StatusOK {
		t.Fatal("a third stream was served past the cap of 2")
	}
	body, _ := io.ReadAll(third.Body)
	if third.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "too many /traces/stream clients: 2 are connected") {
		t.Errorf("a third stream: %d %q, want 503 with the reason", third.StatusCode, body)
	}
	if got := waitMetric(admin, regexp.MustCompile(`(?m)^gwdev_trace_streams_refused_total (\S+)$`), "1"); got != "1" {
		t.Errorf("gwdev_trace_streams_refused_total %q, want 1", got)
	}
	closeFirst()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if n, _ := adm.streamUsage(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the closed stream is still counted")
		}
	}
	if fourth, _ := open(); fourth.StatusCode != 200 {
		t.Errorf("a stream after one went: %d", fourth.StatusCode)
	}
}
