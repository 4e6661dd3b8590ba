package emulator

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/engine/table"
)

// laneStrays counts the stray bytes laneBackend wrote after an answer
// (/extra).
var laneStrays atomic.Int64

// laneBackend is a raw HTTP/1.1 backend whose answers, by path, cover what
// the lane must pass on exactly as ReverseProxy does: Transfer-Encoding
// forms, hop-by-hop fields, bodiless statuses, informational answers,
// trailers, huge and slow bodies, answers cut short, odd statuses, bytes
// after the answer. /echo answers with the request head it got, so that
// the upstream request is compared byte for byte too.
func laneBackend(t *testing.T) string {
	huge := strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB
	return rawBackend(t, func(c net.Conn, br *bufio.Reader) {
		for {
			var head strings.Builder
			req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(br, &head)))
			if err != nil {
				return
			}
			write := func(s string) { _, _ = io.WriteString(c, s) }
			pause := func() { time.Sleep(20 * time.Millisecond) }
			const ok = "HTTP/1.1 200 OK\r\n"
			switch strings.TrimPrefix(req.URL.Path, "/api") {
			case "/echo":
				h := head.String()
				h = h[:strings.Index(h, "\r\n\r\n")+4] // what the tee read past the head
				write(fmt.Sprintf(ok+"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(h), h))
			case "/cl":
				write(ok + "Content-Type: text/plain\r\nContent-Length: 5\r\n\r\n")
				if req.Method != http.MethodHead {
					write("hello")
				}
			case "/no-type":
				write(ok + "Content-Length: 22\r\n\r\n<html>sniff me</html>\n")
			case "/chunked":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\n\r\n")
			case "/chunked-head":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n")
			case "/chunked-204":
				write("HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n")
			case "/chunked-kelvin":
				write(ok + "Transfer-Encoding: chun\u212aed\r\nContent-Length: 2\r\n\r\nok")
			case "/trailer-cut":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Late: 1\r\n")
				return
			case "/two-trailers":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Late: 1\r\nX-Late: 2\r\n\r\n")
			case "/chunked-upper":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: CHUNKED\r\n\r\n2\r\nok\r\n0\r\n\r\n")
			case "/te-and-cl":
				write(ok + "Content-Type: text/plain\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
			case "/te-gzip-chunked":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
			case "/te-identity":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: identity\r\n\r\nok")
				return
			case "/two-te":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
			case "/two-cl-same":
				write(ok + "Content-Type: text/plain\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok")
			case "/two-cl-differ":
				write(ok + "Content-Type: text/plain\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!")
			case "/bad-cl":
				write(ok + "Content-Type: text/plain\r\nContent-Length: +2\r\n\r\nok")
			case "/close-delimited":
				write(ok + "Content-Type: text/plain\r\nConnection: close\r\n\r\nuntil the end")
				return
			case "/unbounded":
				write(ok + "Content-Type: text/plain\r\n\r\nno length, no close field")
				return
			case "/unbounded-keep-alive":
				// A type: without one, whether ReverseProxy's header goes out
				// before the body (no sniffed type) is its timer's race.
				write(ok + "Content-Type: text/plain\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n\r\nuntil the end")
				return
			case "/http10":
				write("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nold")
				return
			case "/hop-close": // ReadResponse drops a Connection field that asks to close: what it lists stays
				write(ok + "Content-Type: text/plain\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nContent-Length: 2\r\n\r\nok")
				return
			case "/hop-lists":
				write(ok + "Content-Type: text/plain\r\nconnection: x-hop ,, Bad Name, content-length\r\nCONNECTION: Date\r\nX-HOP: 1\r\n" +
					"x-hop: 2\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\nContent-Length: 2\r\nX-Resp: backend's\r\n\r\nok")
			case "/names":
				write(ok + "content-type: text/plain\r\nx-lower: a\r\nX-LOWER: b\r\nx_under: c\r\nX-Empty:\r\nX-Spaces: \t v \t\r\n" +
					"Set-Cookie: s=1\r\nX-Added: one\r\nX-Added: two\r\nPragma: no-cache\r\nContent-Length: 002\r\n\r\nok")
			case "/pragma-cached":
				write(ok + "Pragma: no-cache\r\nCache-Control: max-age=5\r\nContent-Length: 2\r\n\r\nok")
			case "/big":
				write(fmt.Sprintf(ok+"Content-Length: %d\r\n\r\n%s", 3000, strings.Repeat("<p>", 1000)))
			case "/head-no-length":
				write(ok + "Content-Type: text/plain\r\n\r\n")
			case "/head-bad-length":
				write(ok + "Content-Type: text/plain\r\nContent-Length: x\r\n\r\n")
			case "/folded":
				write(ok + "Content-Type: text/plain\r\nX-Fold: a\r\n b\r\nContent-Length: 2\r\n\r\nok")
			case "/bare-lf":
				write("HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 2\n\nok")
			case "/long-head":
				write(ok + "X-Long: " + strings.Repeat("l", 5000) + "\r\nContent-Length: 2\r\n\r\nok")
			case "/ctl-value":
				write(ok + "X-Ctl: a\x01b\r\nContent-Length: 2\r\n\r\nok")
			case "/two-spaces":
				write("HTTP/1.1  200 OK\r\nContent-Length: 2\r\n\r\nok")
			case "/secrets": // the trace redacts and clips them as it does a header map
				write(ok + "Set-Cookie: session=s3cret\r\nX-Api-Key: k3y\r\nLocation: http://user:pw@example.com/?token=t0k\r\n" +
					"X-Long: " + strings.Repeat("v", 3000) + "\r\nContent-Length: 2\r\n\r\nok")
			case "/encoded":
				write(ok + "Content-Encoding: gzip\r\nContent-Length: 2\r\n\r\nok")
			case "/hop":
				write(ok + "Content-Type: text/plain\r\nConnection: X-Hop, keep-alive\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\n" +
					"Proxy-Authenticate: Basic\r\nUpgrade: foo\r\nTe: trailers\r\nX-Kept: 1\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 2\r\n\r\nok")
			case "/204":
				write("HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n")
			case "/204-length":
				write("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
			case "/304":
				write("HTTP/1.1 304 Not Modified\r\nEtag: \"x\"\r\nContent-Type: text/plain\r\nContent-Length: 50\r\n\r\n")
			case "/trailers":
				write(ok + "Content-Type: text/plain\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Sum: 42\r\n\r\n")
			case "/trailer-unannounced":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Late: 1\r\n\r\n")
			case "/hints":
				write("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n")
				write("HTTP/1.1 100 Continue\r\n\r\n")
				write(ok + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
			case "/huge":
				write(fmt.Sprintf(ok+"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n%s", len(huge), huge))
			case "/slow":
				write(ok + "Content-Type: text/plain\r\nContent-Length: 9\r\n\r\n")
				for _, p := range []string{"one", "two", "333"} {
					pause()
					write(p)
				}
			case "/slow-chunked":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
				for _, p := range []string{"3\r\none\r\n", "3\r\ntwo\r\n", "0\r\n\r\n"} {
					pause()
					write(p)
				}
			case "/event-stream":
				write(ok + "Content-Type: text/event-stream\r\nContent-Length: 10\r\n\r\ndata: hi\n\n")
			case "/early-close":
				write(ok + "Content-Le")
				return
			case "/cut-short":
				write(ok + "Content-Type: text/plain\r\nContent-Length: 10\r\n\r\nabc")
				return
			case "/cut-chunked":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
				pause() // ReverseProxy's flush of the header races a failure already here
				write("5\r\nab")
				return
			case "/bad-chunk":
				write(ok + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
				pause()
				write("zz\r\nab\r\n0\r\n\r\n")
				return
			case "/status-099":
				write("HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n")
			case "/status-599":
				write("HTTP/1.1 599 Whatever\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
			case "/no-reason":
				write("HTTP/1.1 200\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
			case "/switch":
				write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\nConnection: Upgrade\r\n\r\n")
				return
			case "/garbage":
				write("HTTP/1.1 2000 OK\r\n\r\n")
				return
			case "/extra": // bytes after the answer: the next request's trace notes them
				write(ok + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
				time.Sleep(5 * time.Millisecond)
				write("stray")
				laneStrays.Add(1)
			default:
				write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
			}
		}
	})
}

// laneTable routes api.example.com/api to the backend with request and
// response header filters, and /v1 with a URL rewrite, on an HTTP
// listener or, with cert, an HTTPS one.
func laneTable(backend string, cert *table.Certificate) *table.Table {
	api := rule("api", prefix("/api"), mapped("api", 1, backend))
	api.Filters = []table.Filter{
		{Type: table.FilterRequestHeaderModifier, RequestHeaderModifier: &table.HeaderModifier{
			Set: []table.Header{{Name: "X-Route", Value: "api"}}, Add: []table.Header{{Name: "X-Add", Value: "more"}},
			Remove: []string{"X-Remove"}}},
		{Type: table.FilterResponseHeaderModifier, ResponseHeaderModifier: &table.HeaderModifier{
			Set: []table.Header{{Name: "X-Resp", Value: "set"}}, Remove: []string{"X-Kept"},
			Add: []table.Header{{Name: "X-Added", Value: "gw"}, {Name: "Set-Cookie", Value: "gw=1"}}}},
	}
	v1 := rule("v1", prefix("/v1"), mapped("api", 1, backend))
	v1.Filters = []table.Filter{{Type: table.FilterURLRewrite, URLRewrite: &table.URLRewrite{Hostname: "rewritten.example.com",
		Path: &table.PathRewrite{Type: table.ReplacePrefixMatch, Prefix: "/v1", Value: "/api"}}}}
	vh := vhost("api.example.com", api, v1)
	l := listener("http", "", vh)
	if cert != nil {
		l = httpsListener("https", "", []*table.Certificate{cert}, vh)
	}
	return newTable(gateway("gw", "127.0.0.1", port(0, l)))
}

// The forwarding lane forwards what it takes exactly as the ReverseProxy
// path does: the same bytes to the backend (/echo) and to the client (Date
// aside; chunk boundaries follow the backend's writes on either path) and
// the same traces, over HTTP and HTTPS, for many raw backends' answers.
func TestForwardLaneMatchesReverseProxy(t *testing.T) {
	backend := laneBackend(t)
	t.Run("http", func(t *testing.T) { laneDiff(t, laneTable(backend, nil), nil) })
	ca := newTestCA(t, "lane CA")
	cert := ca.certificate("api", certOpts{dnsNames: []string{"api.example.com"}})
	t.Run("https", func(t *testing.T) {
		laneDiff(t, laneTable(backend, cert), &tls.Config{ServerName: "api.example.com", RootCAs: ca.pool(),
			NextProtos: []string{"http/1.1"}})
	})
}

func laneDiff(t *testing.T, tab *table.Table, conf *tls.Config) {
	lane, laneAddr := diffServer(t, tab, Config{})
	std, stdAddr := diffServer(t, tab, Config{NoForwardLane: true})
	laneDial, stdDial := diffDialer(t, laneAddr, conf), diffDialer(t, stdAddr, conf)
	get := func(path string, hdr ...string) string {
		return "GET " + path + " HTTP/1.1\r\nHost: api.example.com\r\n" + strings.Join(hdr, "") + "\r\n"
	}
	cases := []struct {
		name   string
		chunks []string
		n      int  // answers expected (0: read until the server closes)
		head   bool // the answers are to HEAD requests
		lane   bool // the lane takes it
	}{
		{"echo", []string{get("/api/echo?q=1&r=%41", "Accept: */*\r\nUser-Agent: curl/8\r\n")}, 1, false, true},
		{"echo without user agent", []string{get("/api/echo")}, 1, false, true},
		{"echo two user agents", []string{get("/api/echo", "User-Agent: a\r\nUser-Agent: b\r\n")}, 1, false, true},
		{"request hop-by-hop and forwarding fields", []string{get("/api/echo", "Connection: keep-alive, X-Drop\r\nX-Drop: 1\r\n"+
			"Keep-Alive: 5\r\nTe: trailers\r\nProxy-Authorization: x\r\nProxy-Connection: y\r\nX-Forwarded-For: 10.0.0.1\r\n"+
			"X-Forwarded-For: 10.0.0.2\r\nX-Forwarded-Host: h\r\nX-Forwarded-Proto: https\r\nForwarded: for=x\r\nX-Remove: 1\r\nX-Add: one\r\n")}, 1, false, true},
		{"te without trailers", []string{get("/api/echo", "Te: gzip\r\n")}, 1, false, true},
		{"post without body", []string{"POST /api/echo HTTP/1.1\r\nHost: api.example.com\r\n\r\n"}, 1, false, true},
		{"delete and options", []string{"DELETE /api/echo HTTP/1.1\r\nHost: api.example.com\r\n\r\nOPTIONS /api/echo HTTP/1.1\r\nHost: api.example.com\r\n\r\n"}, 2, false, true},
		{"url rewrite", []string{get("/v1/echo?x=1")}, 1, false, true},
		{"query re-encoded", []string{get("/api/echo?a=1;b=2&c=%zz")}, 1, false, false},
		{"escaped path", []string{get("/api/echo/a%20b")}, 1, false, true},
		{"content length", []string{get("/api/cl")}, 1, false, true},
		{"head", []string{"HEAD /api/cl HTTP/1.1\r\nHost: api.example.com\r\n\r\n"}, 1, true, true},
		{"sniffed type", []string{get("/api/no-type")}, 1, false, true},
		{"chunked", []string{get("/api/chunked")}, 1, false, true},
		{"chunked upper case", []string{get("/api/chunked-upper")}, 1, false, true},
		{"chunked and content length", []string{get("/api/te-and-cl")}, 1, false, true},
		{"gzip, chunked", []string{get("/api/te-gzip-chunked")}, 1, false, true},
		{"head of a chunked answer", []string{"HEAD /api/chunked-head HTTP/1.1\r\nHost: api.example.com\r\n\r\n"}, 1, true, true},
		{"chunked 204", []string{get("/api/chunked-204")}, 1, false, true},
		{"chunked with a kelvin sign", []string{get("/api/chunked-kelvin")}, 1, false, true},
		{"trailer cut short", []string{get("/api/trailer-cut")}, 0, false, true},
		{"two trailers", []string{get("/api/two-trailers")}, 1, false, true},
		{"identity", []string{get("/api/te-identity")}, 1, false, true},
		{"two transfer-encodings", []string{get("/api/two-te")}, 1, false, true},
		{"two equal content lengths", []string{get("/api/two-cl-same")}, 1, false, true},
		{"two different content lengths", []string{get("/api/two-cl-differ")}, 1, false, true},
		{"bad content length", []string{get("/api/bad-cl")}, 1, false, true},
		{"close-delimited", []string{get("/api/close-delimited")}, 1, false, true},
		{"unbounded", []string{get("/api/unbounded")}, 1, false, true},
		{"unbounded, keep-alive asked", []string{get("/api/unbounded-keep-alive")}, 1, false, true},
		{"http/1.0 backend", []string{get("/api/http10")}, 1, false, true},
		{"response hop-by-hop", []string{get("/api/hop")}, 1, false, true},
		{"connection close and a list", []string{get("/api/hop-close")}, 1, false, true},
		{"connection lists", []string{get("/api/hop-lists")}, 1, false, true},
		{"field names and values", []string{get("/api/names")}, 1, false, true},
		{"pragma with cache-control", []string{get("/api/pragma-cached")}, 1, false, true},
		{"big sniffed body", []string{get("/api/big")}, 1, false, true},
		{"head without length", []string{"HEAD /api/head-no-length HTTP/1.1\r\nHost: api.example.com\r\n\r\n"}, 1, true, true},
		{"head with a bad length", []string{"HEAD /api/head-bad-length HTTP/1.1\r\nHost: api.example.com\r\n\r\n"}, 1, true, true},
		{"folded field", []string{get("/api/folded")}, 1, false, true},
		{"bare line feeds", []string{get("/api/bare-lf")}, 1, false, true},
		{"head over the buffer", []string{get("/api/long-head")}, 1, false, true},
		{"control byte in a value", []string{get("/api/ctl-value")}, 1, false, true},
		{"two spaces before the status", []string{get("/api/two-spaces")}, 1, false, true},
		{"encoded without a type", []string{get("/api/encoded")}, 1, false, true},
		{"secrets and a long value", []string{get("/api/secrets")}, 1, false, true},
		{"204 and 304", []string{get("/api/204") + get("/api/204-length") + get("/api/304")}, 3, false, true},
		{"trailers", []string{get("/api/trailers")}, 1, false, true},
		{"trailer not announced", []string{get("/api/trailer-unannounced")}, 1, false, true},
		{"informational answers", []string{get("/api/hints")}, 3, false, true},
		{"huge", []string{get("/api/huge")}, 1, false, true},
		{"slow", []string{get("/api/slow")}, 1, false, true},
		{"slow chunked", []string{get("/api/slow-chunked")}, 1, false, true},
		{"event stream", []string{get("/api/event-stream")}, 1, false, true},
		{"early close", []string{get("/api/early-close")}, 1, false, true},
		{"cut short", []string{get("/api/cut-short")}, 0, false, true},
		{"chunked cut short", []string{get("/api/cut-chunked")}, 0, false, true},
		{"bad chunk", []string{get("/api/bad-chunk")}, 0, false, true},
		{"status 099", []string{get("/api/status-099")}, 1, false, true},
		{"status 599", []string{get("/api/status-599")}, 1, false, true},
		{"no reason phrase", []string{get("/api/no-reason")}, 1, false, true},
		{"unasked switch", []string{get("/api/switch")}, 1, false, true},
		{"garbage status", []string{get("/api/garbage")}, 1, false, true},
		{"stray bytes, then a victim", []string{get("/api/extra")}, 1, false, true},
		{"victim", []string{get("/api/cl")}, 1, false, true},
		{"keep-alive series", []string{get("/api/cl") + get("/api/chunked") + get("/api/204") + get("/api/cl")}, 4, false, true},
		{"client closes", []string{get("/api/cl", "Connection: close\r\n")}, 0, false, true},
		{"pipelined with a slow answer", []string{get("/api/slow") + get("/api/cl")}, 2, false, true},
		// The ReverseProxy path.
		{"body", []string{"POST /api/echo HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 2\r\n\r\nhi"}, 1, false, false},
		{"upgrade", []string{get("/api/echo", "Connection: Upgrade\r\nUpgrade: websocket\r\n")}, 1, false, false},
	}
	// parsed are the answers the pool's own parser reads (the lane passes
	// them on as header fields); the others go through ReadResponse.
	parsed := map[string]int64{
		"echo": 1, "echo without user agent": 1, "echo two user agents": 1, "request hop-by-hop and forwarding fields": 1,
		"te without trailers": 1, "post without body": 1, "delete and options": 2, "url rewrite": 1, "escaped path": 1,
		"content length": 1, "head": 1, "sniffed type": 1, "two equal content lengths": 0, "response hop-by-hop": 1,
		"connection close and a list": 1, "connection lists": 1, "field names and values": 1, "pragma with cache-control": 1,
		"big sniffed body": 1, "head without length": 1, "encoded without a type": 1, "secrets and a long value": 1, "204 and 304": 3, "huge": 1, "slow": 1,
		"event stream": 1, "cut short": 1, "status 599": 1, "no reason phrase": 1, "stray bytes, then a victim": 1,
		"victim": 1, "keep-alive series": 4, "client closes": 1, "pipelined with a slow answer": 2,
		"chunked": 1, "chunked upper case": 1, "chunked and content length": 1, "trailer not announced": 1,
		"slow chunked": 1, "chunked cut short": 1, "bad chunk": 1, "head of a chunked answer": 1, "chunked 204": 1,
		"chunked with a kelvin sign": 0, "trailer cut short": 1, "two trailers": 1, "close-delimited": 1, "unbounded": 1,
		"unbounded, keep-alive asked": 1,
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, parsedBefore := lane.laneServed.Load(), lane.laneParsed.Load()
			nl, ns := len(lane.Traces()), len(std.Traces())
			got := rawExchange(t, laneDial, tc.chunks, tc.n, tc.head)
			want := rawExchange(t, stdDial, tc.chunks, tc.n, tc.head)
			if got != want {
				t.Errorf("lane answered\n%q\nReverseProxy answered\n%q", got, want)
			}
			if took := lane.laneServed.Load() > before; took != tc.lane {
				t.Errorf("lane took it: %v, want %v", took, tc.lane)
			}
			if n := lane.laneParsed.Load() - parsedBefore; n != parsed[tc.name] {
				t.Errorf("the pool's parser read %d answers, want %d", n, parsed[tc.name])
			}
			if std.laneServed.Load() != 0 {
				t.Fatal("the lane served with NoForwardLane")
			}
			lt, st := newTraces(t, lane, nl, std, ns)
			if len(lt) != len(st) {
				t.Fatalf("lane traced %d, ReverseProxy %d:\n%+v\n%+v", len(lt), len(st), lt, st)
			}
			for i := range lt {
				if a, b := comparableTrace(lt[i]), comparableTrace(st[i]); !traceEqual(a, b) {
					t.Errorf("trace %d: lane\n%+v\nReverseProxy\n%+v", i, a, b)
				}
			}
		})
		time.Sleep(15 * time.Millisecond) // stray bytes arrive before the next case
		if tc.name == "stray bytes, then a victim" {
			// Both servers' backend connections got theirs before the
			// victim is sent (a loaded machine may delay the backend).
			for deadline := time.Now().Add(5 * time.Second); laneStrays.Load()%2 != 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(5 * time.Millisecond) // the bytes reach the gateway's socket
		}
	}
}

// Many clients at once through the lane share the pool's few backend
// connections: an answer the pool's parser read belongs to its connection
// until its body ends, and the next exchange on that connection must not
// disturb the one finishing (-race watches the Answer, its fields and
// bodies, and the response writer's fields).
func TestForwardLaneConcurrentReuse(t *testing.T) {
	lane, addr := diffServer(t, laneTable(laneBackend(t), nil), Config{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	defer client.CloseIdleConnections()
	want := map[string]string{"/api/cl": "hello", "/api/204": "", "/api/chunked": "abcdefg", "/api/trailer-unannounced": "ok",
		"/api/unbounded": "no length, no close field"}
	paths := []string{"/api/cl", "/api/204", "/api/chunked", "/api/trailer-unannounced", "/api/unbounded"}
	before := lane.laneParsed.Load()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				path := paths[(g+i)%len(paths)]
				req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
				req.Host = "api.example.com"
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || string(b) != want[path] {
					t.Errorf("%s: %q %v, want %q", path, b, err, want[path])
					return
				}
			}
		})
	}
	wg.Wait()
	if n := lane.laneParsed.Load() - before; n != 8*40 {
		t.Errorf("the pool's parser read %d answers, want %d", n, 8*40)
	}
}

// A client that leaves while the lane waits for the backend's answer, or
// while it copies the answer's body, aborts the upstream exchange: the
// backend's connection is closed (Pool.ExchangeFor: the client connection
// watches it), not kept or returned to the pool.
func TestForwardLaneClientLeavesAbortsUpstream(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string // what the backend sends before it waits
		// warm: the connections carry a first request before, so the
		// fast path serves the second from inside raw reads of the
		// client's socket and its watch reads a duplicate (h1's serveRaw).
		warm bool
	}{
		{"before the answer", "", false},
		{"during the body", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nxx", false},
		{"before the answer, second request", "", true},
		{"during the body, second request", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nxx", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed := make(chan struct{})
			addr := rawBackend(t, func(c net.Conn, br *bufio.Reader) {
				if !skipRequestHead(br) {
					return
				}
				if tc.warm {
					_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
					if !skipRequestHead(br) {
						return
					}
				}
				_, _ = c.Write([]byte(tc.answer))
				var b [1]byte
				if _, err := c.Read(b[:]); err == io.EOF {
					close(closed) // the gateway closed it
				}
			})
			h := serve(t, func(p int32) *table.Table {
				return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("api.example.com", rule("api", prefix("/"), mapped("api", 1, addr)))))))
			})
			c, err := net.Dial("tcp", net.JoinHostPort(h.ip, strconv.Itoa(int(h.port))))
			if err != nil {
				t.Fatal(err)
			}
			served := int64(1)
			if tc.warm {
				served = 2
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Write([]byte("GET /first HTTP/1.1\r\nHost: api.example.com\r\n\r\n")); err != nil {
					t.Fatal(err)
				}
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatal(err)
				}
				if body, _ := io.ReadAll(resp.Body); string(body) != "ok" {
					t.Fatalf("first answer %q", body)
				}
			}
			if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			// The lane waits for the answer or for the rest of the body
			// (not flushed: its length is known) and the watch reads the
			// client.
			time.Sleep(2*h1.ClientWatchAfter + 100*time.Millisecond)
			_ = c.Close()
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("the backend's connection stayed open after the client left")
			}
			if h.s.laneServed.Load() != served {
				t.Fatalf("the lane served %d requests, want %d", h.s.laneServed.Load(), served)
			}
		})
	}
}

// setXForwarded sets what httputil's SetXForwarded sets: prior
// X-Forwarded-For values joined, a remote address without a port, TLS.
func TestSetXForwardedMatchesHTTPUtil(t *testing.T) {
	var vals [3]string // one array for every case, as an exchange's for its requests
	for _, tc := range []struct {
		remote string
		prior  []string
		tls    bool
	}{
		{"10.0.0.9:1234", nil, false},
		{"10.0.0.9:1234", []string{"10.0.0.1", "10.0.0.2, 10.0.0.3"}, true},
		{"[::1]:80", []string{""}, false},
		{"no port", []string{"10.0.0.1"}, false},
	} {
		in := &http.Request{RemoteAddr: tc.remote, Host: "api.example.com", Header: http.Header{}}
		if tc.tls {
			in.TLS = &tls.ConnectionState{}
		}
		want, got := http.Header{"X-Forwarded-Host": {"old"}}, http.Header{"X-Forwarded-Host": {"old"}}
		if tc.prior != nil {
			want["X-Forwarded-For"], got["X-Forwarded-For"] = slices.Clone(tc.prior), slices.Clone(tc.prior)
		}
		(&httputil.ProxyRequest{In: in, Out: &http.Request{Header: want}}).SetXForwarded()
		setXForwarded(&httputil.ProxyRequest{In: in, Out: &http.Request{Header: got}}, vals[:])
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: got %v, want %v", tc, got, want)
		}
	}
}

// TestLaneDropsHopByHopAndForwarding holds laneDrops's and isHopByHop's
// switches to the hop-by-hop list removeHopByHop uses and the forwarding
// fields rewriteFor sets afresh, and to nothing else.
func TestLaneDropsHopByHopAndForwarding(t *testing.T) {
	for _, k := range hopByHop {
		if !isHopByHop(k) {
			t.Errorf("isHopByHop(%q) = false", k)
		}
	}
	for _, k := range []string{"Forwarded", "X-Forwarded-For", "Host", "connection", "Te2", "Trailers"} {
		if isHopByHop(k) {
			t.Errorf("isHopByHop(%q) = true", k)
		}
	}
	want := append(hopByHop[:], "Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto")
	for _, k := range want {
		if !laneDrops(k) {
			t.Errorf("laneDrops(%q) = false", k)
		}
	}
	for _, k := range []string{"Host", "User-Agent", "Accept", "X-Forwarded-Port", "connection", "Te2", "Cookie"} {
		if laneDrops(k) {
			t.Errorf("laneDrops(%q) = true", k)
		}
	}
}

// TestLaneHeadSortValidOrder: sortValid lists the fields write writes in
// name order (as http.Header.WriteSubset writes them) whatever the map's
// order and however many there are (by insertion up to laneInsertMax, a
// sort past it), leaves out those written first, and refuses a head with
// an invalid name or value.
func TestLaneHeadSortValidOrder(t *testing.T) {
	for n := 0; n <= 3*laneInsertMax; n++ {
		for round := range 4 {
			h := http.Header{}
			var want []string
			for i := range n {
				// Names share prefixes and arrive in the map's random order.
				name := fmt.Sprintf("X-F%d-%d", (i*7+round)%5, i)
				h[name] = []string{strconv.Itoa(i)}
				want = append(want, name)
			}
			h["Host"], h["User-Agent"] = []string{"h"}, []string{"u"}
			slices.Sort(want)
			head := laneHead{header: h}
			if !head.sortValid() {
				t.Fatalf("%d fields: refused a valid head", n)
			}
			var got []string
			for _, f := range head.keys {
				got = append(got, f.name)
				if len(f.values) != 1 || f.values[0] != h[f.name][0] {
					t.Fatalf("%d fields: %s has values %q, want the map's %q", n, f.name, f.values, h[f.name])
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d fields: order %q, want %q", n, got, want)
			}
		}
	}
	for _, bad := range []http.Header{{"X Bad": {"v"}}, {"X-Ok": {"a\r\nb"}}} {
		if (&laneHead{header: bad}).sortValid() {
			t.Errorf("accepted %q", bad)
		}
	}
}
