package emulator

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/engine/table"
)

// fastDiffBackend answers by path, covering what the response writer must
// put on the wire as net/http does: lengths, chunking, sniffing, bodiless
// statuses, informational answers, trailers; /headers echoes the request
// header the backend got.
func fastDiffBackend(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/headers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Fprintf(w, "%s %s host=%s\n", r.Method, r.RequestURI, r.Host)
		for _, k := range keys {
			fmt.Fprintf(w, "%s: %q\n", k, r.Header[k])
		}
	})
	mux.HandleFunc("/api/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for i := range 3 {
			fmt.Fprintf(w, "part %d\n", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/api/sniff", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // the backend sends none
		io.WriteString(w, "<html><body>sniff me</body></html>")
	})
	mux.HandleFunc("/api/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(bytes.Repeat([]byte("x"), 5000))
	})
	mux.HandleFunc("/api/204", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	mux.HandleFunc("/api/304", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"x"`)
		w.WriteHeader(304)
	})
	mux.HandleFunc("/api/hints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "after hints")
	})
	mux.HandleFunc("/api/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		io.WriteString(w, "body with a trailer")
		w.Header().Set("X-Sum", "42")
	})
	mux.HandleFunc("/api/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "closing")
	})
	mux.HandleFunc("/api/status", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(599)
		io.WriteString(w, "odd status")
	})
	b := httptest.NewServer(mux)
	t.Cleanup(b.Close)
	return b.Listener.Addr().String()
}

// fastDiffTable routes api.example.com/api to the backend (a request
// header set) and redirects /old, on an HTTP listener or, with cert, an
// HTTPS one.
func fastDiffTable(backend string, cert *table.Certificate) *table.Table {
	api := rule("api", prefix("/api"), mapped("api", 1, backend))
	api.Filters = []table.Filter{{Type: table.FilterRequestHeaderModifier,
		RequestHeaderModifier: &table.HeaderModifier{Set: []table.Header{{Name: "X-Route", Value: "api"}}}}}
	old := redirectRule("old", "/old", table.Redirect{Hostname: "new.example.com", StatusCode: 301})
	vh := vhost("api.example.com", api, old)
	l := listener("http", "", vh)
	if cert != nil {
		l = httpsListener("https", "", []*table.Certificate{cert}, vh)
	}
	return newTable(gateway("gw", "127.0.0.1", port(0, l)))
}

// fastDiffServer serves the table with or without the fast path and
// returns the server and the address bound.
func fastDiffServer(t *testing.T, tab *table.Table, noFast bool) (*Server, string) {
	t.Helper()
	return diffServer(t, tab, Config{NoFastHTTP1: noFast})
}

// diffVia is the Via pseudonym of every diffServer, whose outbound
// requests are compared byte for byte.
var diffVia = newViaEntries("")

// diffServer serves the table with cfg and returns the server and the
// address bound.
func diffServer(t *testing.T, tab *table.Table, cfg Config) (*Server, string) {
	t.Helper()
	s := New(cfg)
	s.via = diffVia // the servers compared send one Via entry (loop.go)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	rep := s.Apply(tab)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	return s, rep.Ports[0].Bound
}

// rawExchange writes the chunks of a raw request to addr and returns what
// came back: n answers (1xx included), or everything up to the server
// closing the connection when n is 0. Date fields are blanked.
func rawExchange(t *testing.T, dial func() net.Conn, chunks []string, n int, head bool) string {
	t.Helper()
	c := dial()
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	for i, ch := range chunks {
		if i > 0 {
			time.Sleep(5 * time.Millisecond) // separate segments; the outcome must not depend on it
		}
		if _, err := io.WriteString(c, ch); err != nil {
			t.Fatal(err)
		}
	}
	var raw bytes.Buffer
	br := bufio.NewReader(io.TeeReader(c, &raw))
	method := http.MethodGet
	if head {
		method = http.MethodHead
	}
	for i := 0; n == 0 || i < n; i++ {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			if n > 0 {
				t.Errorf("answer %d: %v", i, err)
			}
			break
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if n == 0 {
		_, _ = io.Copy(io.Discard, br)
	}
	return canonicalAnswers(raw.String(), method)
}

// canonicalAnswers rewrites raw HTTP/1.1 answers to requests of method
// for comparison: each answer's header block as sent (Date blanked), then
// its body decoded and its trailers. How a chunked body was cut into
// chunks is left out: it follows how the backend's bytes arrived, on
// either path.
func canonicalAnswers(raw, method string) string {
	rd := strings.NewReader(raw)
	br := bufio.NewReader(rd)
	var out strings.Builder
	for {
		pos := int(rd.Size()) - rd.Len() - br.Buffered()
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			out.WriteString(raw[pos:])
			break
		}
		end := strings.Index(raw[pos:], "\r\n\r\n")
		body, err := io.ReadAll(resp.Body)
		fmt.Fprintf(&out, "%s[body %q %v trailer %v]\n", raw[pos:pos+end+4], body, err, resp.Trailer)
	}
	return dateField.ReplaceAllString(out.String(), "Date: <date>\r\n")
}

var dateField = regexp.MustCompile(`Date: [^\r\n]*\r\n`)

// comparableTrace is a trace without what differs between two servers
// serving the same request (times, addresses, the backend's Date).
func comparableTrace(tr Trace) Trace {
	tr.Time, tr.Duration, tr.UpstreamDuration = time.Time{}, 0, 0
	tr.Client, tr.Address = "", ""
	if tr.ResponseHeaders != nil {
		tr.ResponseHeaders = tr.ResponseHeaders.Clone()
		delete(tr.ResponseHeaders, "Date") // the backend's clock
	}
	return tr
}

// The fast path answers every request exactly as net/http's server does:
// the same bytes on the wire (Date aside) and the same traces, for the
// requests it serves and for those it hands to net/http.
func TestFastPathMatchesNetHTTP(t *testing.T) {
	backend := fastDiffBackend(t)
	t.Run("http", func(t *testing.T) { fastDiff(t, fastDiffTable(backend, nil), nil) })
	ca := newTestCA(t, "fast path CA")
	cert := ca.certificate("api", certOpts{dnsNames: []string{"api.example.com"}})
	t.Run("https", func(t *testing.T) {
		fastDiff(t, fastDiffTable(backend, cert), &tls.Config{ServerName: "api.example.com", RootCAs: ca.pool(),
			NextProtos: []string{"http/1.1"}})
	})
}

// fastDiff sends the same raw requests to a server with the fast path and
// one without, over TLS with conf.
func fastDiff(t *testing.T, tab *table.Table, conf *tls.Config) {
	fast, fastAddr := fastDiffServer(t, tab, false)
	std, stdAddr := fastDiffServer(t, tab, true)
	fastDial, stdDial := diffDialer(t, fastAddr, conf), diffDialer(t, stdAddr, conf)
	const host = "Host: api.example.com\r\n"
	long := "X-Long: " + strings.Repeat("a", 6000) + "\r\n"
	cases := []struct {
		name   string
		chunks []string
		n      int  // answers expected (0: read until the server closes)
		head   bool // the answers are to HEAD requests
		fast   bool // the fast path serves it (no hand-over)
	}{
		{"get", []string{"GET /api/headers?q=1 HTTP/1.1\r\n" + host + "Accept: */*\r\n\r\n"}, 1, false, true},
		{"hop-by-hop and forwarded", []string{"GET /api/headers HTTP/1.1\r\n" + host +
			"Connection: keep-alive, X-Drop\r\nX-Drop: 1\r\nKeep-Alive: 5\r\nTe: trailers\r\nX-Forwarded-For: 10.0.0.1\r\nX-Forwarded-Proto: https\r\n\r\n"}, 1, false, true},
		{"lower-case names, repeated fields, odd spacing", []string{"GET /api/headers HTTP/1.1\r\nhost: api.example.com\r\nx-a: 1\r\nX-A:2\r\nx-b: \t spaced \t\r\n\r\n"}, 1, false, true},
		{"pragma", []string{"GET /api/headers HTTP/1.1\r\n" + host + "Pragma: no-cache\r\n\r\n"}, 1, false, true},
		{"pragma after cache-control, and a second pragma", []string{"GET /api/headers HTTP/1.1\r\nCache-Control: max-age=0\r\n" + host + "Pragma: no-cache\r\nPragma: x\r\n\r\n"}, 1, false, true},
		{"pragma not first", []string{"GET /api/headers HTTP/1.1\r\n" + host + "Pragma: x\r\nPragma: no-cache\r\n\r\n"}, 1, false, true},
		{"close in a connection list", []string{"GET /api/headers HTTP/1.1\r\n" + host + "Connection: X-A, Close\r\nX-A: 1\r\n\r\n"}, 0, false, true},
		{"bare LF", []string{"GET /api/headers HTTP/1.1\n" + host[:len(host)-2] + "\n\n"}, 1, false, true},
		{"connection close", []string{"GET /api/headers HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n"}, 0, false, true},
		{"head", []string{"HEAD /api/big HTTP/1.1\r\n" + host + "\r\n"}, 1, true, true},
		{"pipelined", []string{"GET /api/big HTTP/1.1\r\n" + host + "\r\nGET /api/chunked HTTP/1.1\r\n" + host + "\r\nGET /api/204 HTTP/1.1\r\n" + host + "\r\n"}, 3, false, true},
		{"split across segments", []string{"GET /api/heade", "rs HTTP/1.1\r\nHost: api.exa", "mple.com\r\n\r\n"}, 1, false, true},
		// A second request is read from inside raw reads of the socket (h1's serveRaw): its head
		// waits for more bytes there.
		{"second request split across segments", []string{"GET /api/headers HTTP/1.1\r\n" + host + "\r\nGET /api/heade", "rs HTTP/1.1\r\nHost: api.exa", "mple.com\r\n\r\n"}, 2, false, true},
		{"second request's first bytes alone", []string{"GET /api/headers HTTP/1.1\r\n" + host + "\r\nGE", "T /api/headers HTTP/1.1\r\n" + host + "\r\n"}, 2, false, true},
		{"chunked answer", []string{"GET /api/chunked HTTP/1.1\r\n" + host + "\r\n"}, 1, false, true},
		{"sniffed type", []string{"GET /api/sniff HTTP/1.1\r\n" + host + "\r\n"}, 1, false, true},
		{"204 and 304", []string{"GET /api/204 HTTP/1.1\r\n" + host + "\r\nGET /api/304 HTTP/1.1\r\n" + host + "\r\n"}, 2, false, true},
		{"early hints", []string{"GET /api/hints HTTP/1.1\r\n" + host + "\r\n"}, 2, false, true},
		{"trailers", []string{"GET /api/trailers HTTP/1.1\r\n" + host + "\r\n"}, 1, false, true},
		{"backend closes", []string{"GET /api/close HTTP/1.1\r\n" + host + "\r\n"}, 1, false, true},
		{"unknown status", []string{"GET /api/status HTTP/1.1\r\n" + host + "\r\n"}, 1, false, true},
		{"redirect", []string{"GET /old/x HTTP/1.1\r\n" + host + "\r\n"}, 1, false, true},
		{"no route", []string{"GET /nothing HTTP/1.1\r\n" + host + "\r\n"}, 1, false, true},
		{"unknown host", []string{"GET /api/headers HTTP/1.1\r\nHost: other.example.com\r\n\r\n"}, 1, false, true},
		{"head of a gateway error", []string{"HEAD /nothing HTTP/1.1\r\n" + host + "\r\n"}, 1, true, true},
		// Handed to net/http.
		{"missing host", []string{"GET /api/headers HTTP/1.1\r\n\r\n"}, 0, false, false},
		{"two hosts", []string{"GET /api/headers HTTP/1.1\r\n" + host + host + "\r\n"}, 0, false, false},
		{"obs-fold", []string{"GET /api/headers HTTP/1.1\r\n" + host + "X-A: 1\r\n  folded\r\n\r\n"}, 1, false, false},
		{"space in a name", []string{"GET /api/headers HTTP/1.1\r\n" + host + "Bad Name: 1\r\n\r\n"}, 0, false, false},
		{"space before colon", []string{"GET /api/headers HTTP/1.1\r\n" + host + "X-A : 1\r\n\r\n"}, 0, false, false},
		{"control byte in a value", []string{"GET /api/headers HTTP/1.1\r\n" + host + "X-A: a\x01b\r\n\r\n"}, 0, false, false},
		{"content-length and transfer-encoding", []string{"POST /api/headers HTTP/1.1\r\n" + host +
			"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/headers HTTP/1.1\r\n" + host + "\r\n"}, 2, false, false},
		{"two content-lengths", []string{"POST /api/headers HTTP/1.1\r\n" + host + "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab"}, 0, false, false},
		{"chunked body", []string{"POST /api/headers HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"}, 1, false, false},
		{"body", []string{"POST /api/headers HTTP/1.1\r\n" + host + "Content-Length: 3\r\n\r\nabc"}, 1, false, false},
		{"expect", []string{"POST /api/headers HTTP/1.1\r\n" + host + "Content-Length: 3\r\nExpect: 100-continue\r\n\r\n", "abc"}, 1, false, false},
		{"bad expect", []string{"GET /api/headers HTTP/1.1\r\n" + host + "Expect: nothing\r\n\r\n"}, 0, false, false},
		{"http/1.0", []string{"GET /api/headers HTTP/1.0\r\n" + host + "\r\n"}, 0, false, false},
		{"absolute form", []string{"GET http://api.example.com/api/headers HTTP/1.1\r\n" + host + "\r\n"}, 1, false, false},
		{"bad version", []string{"GET /api/headers HTTP/9.9\r\n" + host + "\r\n"}, 0, false, false},
		{"garbage", []string{"\x16\x03\x01\x00\x05 hello there\r\n\r\n"}, 0, false, false},
		{"malformed request line, header unfinished", []string{"hello there friend\r\nX: y\r\n"}, 0, false, false},
		{"long header", []string{"GET /api/headers HTTP/1.1\r\n" + host + long + "\r\n"}, 1, false, false},
		{"fast then handed over", []string{"GET /api/headers HTTP/1.1\r\n" + host + "\r\nPOST /api/headers HTTP/1.1\r\n" + host + "Content-Length: 2\r\n\r\nhi"}, 2, false, false},
		{"fast then handed over after a wait", []string{"GET /api/headers HTTP/1.1\r\n" + host + "\r\nPOST /api/headers HTTP/1.1\r\n", host + "Content-Length: 2\r\n\r\nhi"}, 2, false, false},
		{"cut short", []string{"GET /api/headers HTTP/1.1\r\nHost: api.exa"}, -1, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := fast.bound(t).fast.HandedOver()
			nf, ns := len(fast.Traces()), len(std.Traces())
			chunks := tc.chunks
			n := tc.n
			if n < 0 {
				n = 0
			}
			var got, want string
			if tc.n < 0 {
				got, want = cutShort(t, fastDial(), chunks), cutShort(t, stdDial(), chunks)
			} else {
				got = rawExchange(t, fastDial, chunks, n, tc.head)
				want = rawExchange(t, stdDial, chunks, n, tc.head)
			}
			if got != want {
				t.Errorf("fast path answered\n%q\nnet/http answered\n%q", got, want)
			}
			if handed := fast.bound(t).fast.HandedOver() > before; handed == tc.fast {
				t.Errorf("handed to net/http: %v, want %v", handed, !tc.fast)
			}
			ft, st := newTraces(t, fast, nf, std, ns)
			if len(ft) != len(st) {
				t.Fatalf("fast path traced %d, net/http %d:\n%+v\n%+v", len(ft), len(st), ft, st)
			}
			for i := range ft {
				if a, b := comparableTrace(ft[i]), comparableTrace(st[i]); !traceEqual(a, b) {
					t.Errorf("trace %d: fast path\n%+v\nnet/http\n%+v", i, a, b)
				}
			}
		})
	}
}

// diffDialer dials addr, over TLS with conf when it is set.
func diffDialer(t *testing.T, addr string, conf *tls.Config) func() net.Conn {
	return func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if conf == nil {
			return c
		}
		tc := tls.Client(c, conf)
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		return tc
	}
}

// cutShort sends a partial request and closes the connection's write side
// after a moment, then reads what comes back.
func cutShort(t *testing.T, c net.Conn, chunks []string) string {
	t.Helper()
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, strings.Join(chunks, ""))
	time.Sleep(5 * time.Millisecond)
	_ = c.(interface{ CloseWrite() error }).CloseWrite()
	b, _ := io.ReadAll(c)
	return dateField.ReplaceAllString(string(b), "Date: <date>\r\n")
}

// newTraces waits until both servers recorded the same number of traces
// since nf and ns (connection traces come when the server closes), and
// returns them.
func newTraces(t *testing.T, fast *Server, nf int, std *Server, ns int) (ft, st []Trace) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ft, st = fast.Traces()[nf:], std.Traces()[ns:]
		if (len(ft) == len(st) && len(ft) > 0) || time.Now().After(deadline) {
			return ft, st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func traceEqual(a, b Trace) bool {
	return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b)
}

// bound returns the server's only bound listener.
func (s *Server) bound(t *testing.T) *boundListener {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, bl := range s.listeners {
		return bl
	}
	t.Fatal("no listener")
	return nil
}

// A request pipelined behind one whose backend is slow arrives while the
// fast path watches the client (the watch reads its first byte): both are
// answered, in order, on the one connection.
func TestFastPathPipelinedBehindSlowRequest(t *testing.T) {
	pipelinedBehindSlow(t, 2*h1.ClientWatchAfter, false) // the watch is reading now (it only matters for coverage)
}

// A request pipelined behind a slow one that arrives before the client
// watch starts is in the socket, not read, when the first answer ends: it is
// answered at once, not after the idle timeout (a wait for the next request
// that clears the socket's readiness first would miss it).
func TestFastPathPipelinedBeforeTheWatch(t *testing.T) {
	pipelinedBehindSlow(t, h1.ClientWatchAfter/5, false)
}

// The same two after a first request, when the connection is served from
// inside raw reads of its socket (h1's serveRaw): the handler runs inside
// the read that waits for the next request, and the client watch reads a
// duplicate of the connection.
func TestFastPathPipelinedAfterAFirstRequest(t *testing.T) {
	for _, pause := range []time.Duration{h1.ClientWatchAfter / 5, 2 * h1.ClientWatchAfter} {
		pipelinedBehindSlow(t, pause, true)
	}
}

// pipelinedBehindSlow sends a request the backend holds, then after pause
// a second one, then lets the backend answer; both answers must come, in
// order, on the one connection, within a few seconds. warm: a first
// request is answered on the connection before.
func pipelinedBehindSlow(t *testing.T, pause time.Duration, warm bool) {
	got, release := make(chan struct{}, 1), make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/slow" {
			got <- struct{}{}
			<-release
		}
		io.WriteString(w, r.URL.Path)
	}))
	t.Cleanup(backend.Close)
	s, addr := fastDiffServer(t, fastDiffTable(backend.Listener.Addr().String(), nil), false)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	if warm {
		io.WriteString(c, "GET /api/first HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if body, _ := io.ReadAll(resp.Body); string(body) != "/api/first" {
			t.Fatalf("first answer %q", body)
		}
	}
	io.WriteString(c, "GET /api/slow HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
	<-got
	time.Sleep(pause)
	io.WriteString(c, "GET /api/next HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
	time.Sleep(5 * time.Millisecond) // the second request is in the gateway's socket
	close(release)
	for _, want := range []string{"/api/slow", "/api/next"} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(body) != want {
			t.Errorf("answer %d %q, want 200 %q", resp.StatusCode, body, want)
		}
	}
	if n := s.bound(t).fast.HandedOver(); n != 0 {
		t.Errorf("%d connections handed to net/http, want 0", n)
	}
}

// Requests that run about as long as h1.ClientWatchAfter start the client
// watch just as the handler ends (or just after): one connection carries
// them all, each answered whole, and the watch never reads alongside the
// next request (the race detector watches this one).
func TestFastPathClientWatchAroundHandlerEnd(t *testing.T) {
	h := serve(t, func(p int32) *table.Table { return simpleTable("127.0.0.1", p, "svc") })
	for i := range 30 {
		d := h1.ClientWatchAfter + time.Duration(i%5-2)*time.Millisecond
		path := fmt.Sprintf("/watch-%d?delay=%s", i, d)
		res := h.get("x", path)
		if res.status != 200 || !strings.Contains(string(res.body), fmt.Sprintf("/watch-%d", i)) {
			t.Fatalf("%s: %d %q", path, res.status, res.body)
		}
	}
	if n := h.s.bound(t).fast.HandedOver(); n != 0 {
		t.Errorf("%d connections handed to net/http, want 0", n)
	}
}
