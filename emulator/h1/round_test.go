package h1

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// roundConn records, at its first write, whether the goroutine the test
// made ready before that write had run.
type roundConn struct {
	net.Conn
	ran     *atomic.Bool
	written atomic.Bool
	sawRan  atomic.Bool
}

func (c *roundConn) Write(p []byte) (int, error) {
	if !c.written.Swap(true) {
		c.sawRan.Store(c.ran.Load())
	}
	return c.Conn.Write(p)
}

// onOneP runs the test on one P, as the data plane serves (ServeProcs):
// a goroutine made ready runs only when the running one yields or blocks.
func onOneP(t *testing.T) {
	t.Helper()
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// TestAnswerWaitsForTheRound: the answer's last flush comes after the
// goroutines ready to run when the handler returned (yieldRound): a
// round's answers go out together. Without the yield the flush is the
// first thing to run after the handler, and the ready goroutine has not.
func TestAnswerWaitsForTheRound(t *testing.T) {
	onOneP(t)
	client, server := net.Pipe()
	defer client.Close()
	var ran atomic.Bool
	rc := &roundConn{Conn: server, ran: &ran}
	f := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "answer")
		go ran.Store(true) // ready, not running: there is one P
	}), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	f.Start(rc, time.Now())
	defer func() { _ = f.Stop(t.Context()) }()
	_ = client.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(client, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "answer" {
		t.Fatalf("body %q", b)
	}
	if !rc.sawRan.Load() {
		t.Error("the answer was written before the goroutine made ready in the handler ran: the flush did not yield")
	}
}

// TestPooledRequestWaitsForTheRound: a request taken to a pooled backend
// connection is written after the goroutines ready to run when the
// exchange began (yieldRound before the connection is taken): a round's
// requests go out together.
func TestPooledRequestWaitsForTheRound(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer backend.Close()
	var ran atomic.Bool
	var conns []*roundConn
	var d net.Dialer
	tr := &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		rc := &roundConn{Conn: c, ran: &ran}
		conns = append(conns, rc)
		return rc, nil
	}}
	p := NewPool(tr, nil)
	defer p.CloseIdle()
	send := func() {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, backend.URL+"/", nil)
		resp, err := p.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
			t.Fatalf("body %q", b)
		}
		_ = resp.Body.Close()
	}
	send() // dials: the dial blocks, so it proves nothing; the connection is pooled
	if len(conns) != 1 {
		t.Fatalf("%d connections dialled, want 1", len(conns))
	}
	conns[0].written.Store(false)
	onOneP(t)
	go ran.Store(true) // ready, not running: there is one P
	send()
	if len(conns) != 1 {
		t.Fatalf("%d connections dialled, want the pooled one reused", len(conns))
	}
	if !conns[0].sawRan.Load() {
		t.Error("the request was written before the goroutine made ready before it ran: the exchange did not yield")
	}
}
