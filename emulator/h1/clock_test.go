package h1

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// countClock makes the package's clock count its reads (clockNow two,
// clockSince one) until the test ends.
func countClock(t *testing.T) *atomic.Int64 {
	t.Helper()
	if raceEnabled {
		t.Skip("the clock's seam is swapped without synchronisation with goroutines other tests left")
	}
	var reads atomic.Int64
	now, since := clockNow, clockSince
	clockNow = func() time.Time { reads.Add(2); return now() }
	clockSince = func(t time.Time) time.Duration { reads.Add(1); return since(t) }
	t.Cleanup(func() { clockNow, clockSince = now, since })
	return &reads
}

// TestKeepAliveClockReads holds the package's clock reads per request on
// a plain keep-alive connection whose handler forwards through the pool:
// the request's start (the wall clock too: its trace prints it), the idle
// deadline's (one, after the start) and the pooled connection's idle time
// (one, after the pool's making). Counts do not depend on the machine's
// load.
func TestKeepAliveClockReads(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	backend, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	go func() {
		c, err := backend.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\nContent-Length: 2\r\n\r\nok"); err != nil {
				return
			}
		}
	}()
	pool := NewPool(&http.Transport{DialContext: (&net.Dialer{}).DialContext, MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute}, nil)
	defer pool.CloseIdle()
	f := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "http://"+backend.Addr().String()+"/", nil)
		resp, err := pool.RoundTrip(out)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		w.Header()["Date"] = resp.Header["Date"] // the backend's, as the lane forwards it
		_, _ = io.WriteString(w, "ok")
	}), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	defer func() { _ = f.Stop(t.Context()) }()
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
	br := bufio.NewReader(c)
	ask := func() {
		t.Helper()
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("answer %v, %v", resp, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	for range 10 {
		ask() // the raw loop and the pooled connection
	}
	reads := countClock(t)
	const n = 300
	for range n {
		ask()
	}
	// The last request's end may still run: at most one request's reads
	// short, under half a read per request.
	if got, want := float64(reads.Load())/n, 4.0; got > want+0.5 || got < want-0.5 {
		t.Errorf("%.2f clock reads per request, want %v", got, want)
	}
}
