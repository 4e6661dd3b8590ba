package h1

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The pool takes the common case only; the rest goes through net/http.
func TestH1PoolHandles(t *testing.T) {
	mk := func(method, url string, body io.Reader, length int64, hdr ...string) *http.Request {
		r, _ := http.NewRequest(method, url, body)
		r.ContentLength = length
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		return r
	}
	withTrailer := mk("POST", "http://a/", strings.NewReader("x"), 1)
	withTrailer.Trailer = http.Header{"X-T": nil}
	for _, c := range []struct {
		name string
		req  *http.Request
		want bool
	}{
		{"GET", mk("GET", "http://a/", nil, 0), true},
		{"small body", mk("POST", "http://a/", strings.NewReader("x"), 1), true},
		{"body at the limit", mk("POST", "http://a/", strings.NewReader(""), MaxPooledBody), true},
		{"body over the limit", mk("POST", "http://a/", strings.NewReader(""), MaxPooledBody+1), false},
		{"body of unknown length", mk("POST", "http://a/", strings.NewReader("x"), -1), false},
		{"body without a length", mk("POST", "http://a/", io.NopCloser(strings.NewReader("x")), 0), false},
		{"https", mk("GET", "https://a/", nil, 0), false},
		{"upgrade", mk("GET", "http://a/", nil, 0, "Upgrade", "websocket", "Connection", "Upgrade"), false},
		{"expect", mk("POST", "http://a/", strings.NewReader("x"), 1, "Expect", "100-continue"), false},
		{"trailers", withTrailer, false},
	} {
		if got := (&Pool{}).handles(c.req); got != c.want {
			t.Errorf("%s: handles = %t, want %t", c.name, got, c.want)
		}
	}
}

// Straight through the pool: a body read to its end keeps answering EOF
// and gives its connection back; a body closed early closes it.
func TestH1PoolBodyEnd(t *testing.T) {
	var conns atomic.Int64
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "0123456789") }))
	backend.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	backend.Start()
	defer backend.Close()
	addr := backend.Listener.Addr().String()
	p := NewPool(&http.Transport{DialContext: (&net.Dialer{}).DialContext, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}, nil)
	defer p.CloseIdle()
	get := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		resp, err := p.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := get()
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "0123456789" {
		t.Fatalf("%q %v", b, err)
	}
	if n, err := resp.Body.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("read after the end: %d %v, want 0 EOF", n, err)
	}
	resp.Body.Close()
	if n := p.Idle(addr); n != 1 {
		t.Fatalf("%d idle connections after a body read to its end, want 1", n)
	}
	resp = get()
	if _, err := resp.Body.Read(make([]byte, 2)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
		t.Error("read after Close succeeded")
	}
	if n := p.Idle(addr); n != 0 {
		t.Errorf("%d idle connections after a body closed early, want 0", n)
	}
	resp = get()
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := conns.Load(); n != 2 {
		t.Errorf("the backend saw %d connections, want 2 (the early close costs one)", n)
	}
}
