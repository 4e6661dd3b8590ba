package emulator

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/engine/table"
)

// connCountingBackend is an HTTP backend that counts the connections it
// accepted.
func connCountingBackend(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s, &conns
}

// servePooled serves every path of every host from the backend at addr.
func servePooled(t *testing.T, addr string) *harness {
	t.Helper()
	return serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "",
			vhost("*", rule("api", prefix("/"), mapped("api", 1, addr)))))))
	})
}

// rawBackend accepts connections and lets serve answer each one.
func rawBackend(t testing.TB, serve func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				serve(c, bufio.NewReader(c))
			}()
		}
	}()
	return ln.Addr().String()
}

// Sequential requests, with and without bodies, share one connection to
// the backend; the backend gets the request as the client sent it.
func TestH1PoolReusesConnections(t *testing.T) {
	backend, conns := connCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s host=%s len=%d te=%v body=%s x=%s", r.Method, r.URL.RequestURI(), r.Host, r.ContentLength,
			r.TransferEncoding, body, r.Header.Get("X-Client"))
	})
	h := servePooled(t, backend.Listener.Addr().String())
	for i := range 5 {
		res := h.get("a.example.com", fmt.Sprintf("/get/%d?q=1", i), "X-Client: c")
		want := fmt.Sprintf("GET /get/%d?q=1 host=a.example.com len=0 te=[] body= x=c", i)
		if res.status != 200 || string(res.body) != want {
			t.Fatalf("GET %d: %d %q, want %q", i, res.status, res.body, want)
		}
		req := h.request(http.MethodPost, "a.example.com", "/post")
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader("hello")), 5
		if res := h.do(req); res.status != 200 || string(res.body) != "POST /post host=a.example.com len=5 te=[] body=hello x=" {
			t.Fatalf("POST %d: %d %q", i, res.status, res.body)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the backend saw %d connections, want 1 (keep-alive)", n)
	}
	if n := pooledIdle(h.s, backend.Listener.Addr().String()); n != 1 {
		t.Errorf("the pool holds %d idle connections to the backend, want 1 (the pool, not net/http, sent the requests)", n)
	}
}

// pooledIdle counts the pool's idle connections to addr.
func pooledIdle(s *Server, addr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range s.pool.upstreams {
		if u.h1p != nil {
			n += u.h1p.Idle(addr)
		}
	}
	return n
}

// A backend that answers "Connection: close" closes its connection: the
// next request goes on a new one.
func TestH1PoolBackendConnectionClose(t *testing.T) {
	backend, conns := connCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		fmt.Fprint(w, "bye")
	})
	h := servePooled(t, backend.Listener.Addr().String())
	for range 3 {
		if res := h.get("x", "/"); res.status != 200 || string(res.body) != "bye" {
			t.Fatalf("%d %q", res.status, res.body)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("the backend saw %d connections, want 3", n)
	}
}

// A backend that closes an idle connection without saying so: a GET sent
// at once on it is sent again on a new connection; a POST sent later
// finds the connection closed before writing (the idle probe) and uses a
// new one.
func TestH1PoolBackendClosesIdleConnection(t *testing.T) {
	var conns atomic.Int64
	addr := rawBackend(t, func(c net.Conn, br *bufio.Reader) {
		conns.Add(1)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		reply := req.Method + " " + string(body)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(reply), reply)
		// and close, keep-alive notwithstanding
	})
	h := servePooled(t, addr)
	for i := range 3 {
		if res := h.get("x", "/"); res.status != 200 || string(res.body) != "GET " {
			t.Fatalf("GET %d: %d %q", i, res.status, res.body)
		}
	}
	time.Sleep(200 * time.Millisecond)
	req := h.request(http.MethodPost, "x", "/")
	req.Body, req.ContentLength = io.NopCloser(strings.NewReader("data")), 4
	if res := h.do(req); res.status != 200 || string(res.body) != "POST data" {
		t.Fatalf("POST: %d %q", res.status, res.body)
	}
	if n := conns.Load(); n < 4 {
		t.Errorf("the backend saw %d connections, want one per request", n)
	}
}

// A chunked answer streams: the client gets the first chunk before the
// backend writes the second; trailers arrive; the connection is reused.
func TestH1PoolStreamsChunkedResponses(t *testing.T) {
	next := make(chan struct{})
	backend, conns := connCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		fmt.Fprint(w, "first;")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/wait" {
			<-next
		}
		fmt.Fprint(w, "second")
		w.Header().Set("X-Sum", "42")
	})
	h := servePooled(t, backend.Listener.Addr().String())
	resp, err := h.client.Do(h.request(http.MethodGet, "x", "/wait"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("first;"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first;" {
		t.Fatalf("first chunk: %q %v", buf, err)
	}
	close(next)
	rest, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(rest) != "second" || resp.Trailer.Get("X-Sum") != "42" {
		t.Fatalf("rest %q %v, trailer %v", rest, err, resp.Trailer)
	}
	if res := h.get("x", "/again"); res.status != 200 || string(res.body) != "first;second" {
		t.Fatalf("second request: %d %q", res.status, res.body)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the backend saw %d connections, want 1", n)
	}
}

// Informational answers (103 Early Hints) reach the client before the
// final one.
func TestH1PoolPassesInformationalResponses(t *testing.T) {
	backend, _ := connCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		fmt.Fprint(w, "done")
	})
	h := servePooled(t, backend.Listener.Addr().String())
	var got []string
	req := h.request(http.MethodGet, "x", "/")
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, hdr textproto.MIMEHeader) error {
			got = append(got, fmt.Sprintf("%d %s", code, hdr.Get("Link")))
			return nil
		},
	}))
	res := h.do(req)
	if res.status != 200 || string(res.body) != "done" || len(got) != 1 || got[0] != "103 </style.css>; rel=preload" {
		t.Fatalf("%d %q, informational %q", res.status, res.body, got)
	}
}

// A WebSocket-style upgrade to a mapped backend is not pooled: it goes
// through net/http and switches protocols end to end.
func TestH1PoolUpgradeGoesThroughNetHTTP(t *testing.T) {
	addr := rawBackend(t, func(c net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil || req.Header.Get("Upgrade") != "echo" {
			fmt.Fprint(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
			return
		}
		fmt.Fprint(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		line, _ := br.ReadString('\n')
		fmt.Fprint(c, "echo: "+line)
	})
	h := servePooled(t, addr)
	c, err := net.Dial("tcp", net.JoinHostPort(h.ip, fmt.Sprint(h.port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	fmt.Fprint(c, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "echo: ping\n" {
		t.Fatalf("after the upgrade: %q %v", line, err)
	}
}

// A request body cut short by the client is not the backend's fault: the
// exchange ends as it does through net/http (the client is gone: 499), and
// the connection to the backend is not reused.
func TestH1PoolRequestBodyCutShort(t *testing.T) {
	backend, conns := connCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d %v", len(body), err)
	})
	h := servePooled(t, backend.Listener.Addr().String())
	if res := h.get("x", "/warm"); res.status != 200 {
		t.Fatalf("warm-up: %d", res.status)
	}
	c, err := net.Dial("tcp", net.JoinHostPort(h.ip, fmt.Sprint(h.port)))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(c, "POST /cut HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b")
	time.Sleep(50 * time.Millisecond)
	c.Close()
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == "/cut" })
	if tr.Status != 499 && tr.Status != http.StatusBadRequest {
		t.Errorf("trace status %d reason %q, want 499 or 400", tr.Status, tr.Reason)
	}
	if res := h.get("x", "/after"); res.status != 200 || string(res.body) != "0 <nil>" {
		t.Fatalf("after: %d %q", res.status, res.body)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("the backend saw %d connections, want 2 (the cut request's is not reused)", n)
	}
}

// A client that goes away while the backend thinks ends the exchange (499)
// and the backend connection; the next request gets a new one.
func TestH1PoolClientGoneAbortsExchange(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{}, 1)
	backend, conns := connCountingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case arrived <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, "ok")
	})
	defer close(release)
	h := servePooled(t, backend.Listener.Addr().String())
	// The client gives up once the backend has the request (not after a
	// fixed time, which a loaded machine can spend before it gets there).
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	if _, err := http.DefaultClient.Do(h.request(http.MethodGet, "x", "/slow").WithContext(ctx)); err == nil {
		t.Fatal("the slow request answered")
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == "/slow" })
	if tr.Status != 499 {
		t.Errorf("trace status %d reason %q, want 499", tr.Status, tr.Reason)
	}
	if res := h.get("x", "/next"); res.status != 200 || string(res.body) != "ok" {
		t.Fatalf("next: %d %q", res.status, res.body)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("the backend saw %d connections, want 2", n)
	}
}

// A response header past h1.MaxResponseHeaderBytes is refused: 502 naming the
// limit.
func TestH1PoolResponseHeaderLimit(t *testing.T) {
	addr := rawBackend(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		w := bufio.NewWriter(c)
		fmt.Fprint(w, "HTTP/1.1 200 OK\r\n")
		line := "X-Big: " + strings.Repeat("a", 1<<16) + "\r\n"
		for range h1.MaxResponseHeaderBytes/len(line) + 2 {
			if _, err := w.WriteString(line); err != nil {
				return
			}
		}
		_ = w.Flush()
	})
	h := servePooled(t, addr)
	req := h.request(http.MethodGet, "x", "/big")
	res, tr := h.traced(req)
	if res.status != http.StatusBadGateway || !strings.Contains(tr.Reason, fmt.Sprintf("exceed %d bytes", h1.MaxResponseHeaderBytes)) {
		t.Fatalf("%d, reason %q", res.status, tr.Reason)
	}
}

// A header net/http would refuse to send (a name with a space, from a
// filter the table did not check) is refused by the pool too: 502, and the
// backend sees nothing.
func TestH1PoolRefusesInvalidHeaders(t *testing.T) {
	backend, conns := connCountingBackend(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") })
	h := serve(t, func(p int32) *table.Table {
		r := rule("api", prefix("/"), mapped("api", 1, backend.Listener.Addr().String()))
		r.Filters = []table.Filter{{Type: table.FilterRequestHeaderModifier,
			RequestHeaderModifier: &table.HeaderModifier{Set: []table.Header{{Name: "Bad Name", Value: "x"}}}}}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("*", r)))))
	})
	res, tr := h.traced(h.request(http.MethodGet, "x", "/"))
	if res.status != http.StatusBadGateway || !strings.Contains(tr.Reason, `invalid header field name "Bad Name"`) {
		t.Fatalf("%d %q, reason %q", res.status, res.body, tr.Reason)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the backend saw %d connections, want none", n)
	}
}
