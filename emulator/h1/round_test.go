package h1

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// roundConn records, at the first write of each trial, whether the
// goroutine the test made ready for that trial before the write had run
// (ran holds the last trial whose goroutine ran).
type roundConn struct {
	net.Conn
	ran     *atomic.Int64
	trial   atomic.Int64
	written atomic.Bool
	sawRan  atomic.Bool
}

func (c *roundConn) Write(p []byte) (int, error) {
	if !c.written.Swap(true) {
		c.sawRan.Store(c.ran.Load() == c.trial.Load())
	}
	return c.Conn.Write(p)
}

// start begins trial n: the next write records whether its goroutine ran.
func (c *roundConn) start(n int64) {
	c.trial.Store(n)
	c.written.Store(false)
	c.sawRan.Store(false)
}

// roundTrials is how many trials each round test makes, and roundMajority
// how many must see the ready goroutine run first. A yield lets it run
// first except when the scheduler's fairness tick comes (every 61st
// schedule takes the global run queue first, where the yield put the
// yielding goroutine): a yield fails a trial about once in 61, no yield
// fails every trial.
const (
	roundTrials   = 10
	roundMajority = 6
)

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
	var ran atomic.Int64
	rc := &roundConn{Conn: server, ran: &ran}
	f := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "answer")
		n, _ := strconv.ParseInt(r.Header.Get("X-Trial"), 10, 64)
		go ran.Store(n) // ready, not running: there is one P
	}), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	f.Start(rc, time.Now())
	defer func() { _ = f.Stop(t.Context()) }()
	_ = client.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(client)
	first := 0
	for n := int64(1); n <= roundTrials; n++ {
		rc.start(n)
		if _, err := fmt.Fprintf(client, "GET / HTTP/1.1\r\nHost: x\r\nX-Trial: %d\r\n\r\n", n); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(resp.Body); string(b) != "answer" {
			t.Fatalf("body %q", b)
		}
		if rc.sawRan.Load() {
			first++
		}
	}
	if first < roundMajority {
		t.Errorf("the goroutine made ready in the handler ran before the answer was written in %d of %d trials, want at least %d: the flush did not yield", first, roundTrials, roundMajority)
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
	var ran atomic.Int64
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
	onOneP(t)
	first := 0
	for n := int64(1); n <= roundTrials; n++ {
		conns[0].start(n)
		go ran.Store(n) // ready, not running: there is one P
		send()
		if len(conns) != 1 {
			t.Fatalf("%d connections dialled, want the pooled one reused", len(conns))
		}
		if conns[0].sawRan.Load() {
			first++
		}
	}
	if first < roundMajority {
		t.Errorf("the goroutine made ready before the exchange ran before the request was written in %d of %d trials, want at least %d: the exchange did not yield", first, roundTrials, roundMajority)
	}
}
