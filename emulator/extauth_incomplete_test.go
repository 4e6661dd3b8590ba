package emulator

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// rawAuthAnswer is an auth backend that reads one request and writes
// answer as is, then waits for hold before closing.
func rawAuthAnswer(t *testing.T, answer string, hold time.Duration) string {
	return rawBackend(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		_, _ = io.WriteString(c, answer)
		time.Sleep(hold)
	})
}

// TestExternalAuthIncompleteAllowDenies: only a complete, well-formed 200
// allows. A 200 whose body is cut short, whose chunked encoding is
// malformed, or whose body stalls past the check's timeout denies with 403,
// and the trace says why; a status outside 100..999 from the auth server
// denies with 403 too (it panicked the handler before).
func TestExternalAuthIncompleteAllowDenies(t *testing.T) {
	setExtAuthTimeout(t, 300*time.Millisecond)
	cases := []struct {
		name, answer string
		hold         time.Duration
		want         int
		reason       string
	}{
		{"complete", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0, 200, ""},
		{"complete chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 0, 200, ""},
		{"cut short", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0, 403, "unexpected EOF"},
		{"malformed chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n", 0, 403, "allow"},
		{"chunked cut short", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", 0, 403, "allow"},
		{"stalled", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 2 * time.Second, 403, "allow"},
		{"status 099", "HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n", 0, 403, "status 99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := extAuthHarness(t, rawAuthAnswer(t, c.answer, c.hold))
			res, tr := h.traced(h.request("GET", "app.example.com", "/admin", "Authorization: Bearer good"))
			if res.status != c.want {
				t.Fatalf("status %d, want %d: %s (trace reason %q filters %q)", res.status, c.want, res.body, tr.Reason, tr.Filters)
			}
			if c.want == 200 {
				if e := res.echo(t); e.Service != "admin" {
					t.Errorf("reached %s", e.Service)
				}
				return
			}
			if tr.Backend != "" || !strings.Contains(tr.Reason, "denied") || !strings.Contains(tr.Reason, c.reason) {
				t.Errorf("trace backend %q reason %q, want a denial naming %q", tr.Backend, tr.Reason, c.reason)
			}
		})
	}
}

// setExtAuthTimeout shortens the ExternalAuth timeout for one test.
func setExtAuthTimeout(t *testing.T, d time.Duration) {
	old := extAuthTimeout
	extAuthTimeout = d
	t.Cleanup(func() { extAuthTimeout = old })
}

// TestExternalAuthGRPCWithoutStatusDenies: a Check answer whose CheckResponse
// says OK but whose call carries no grpc-status (neither trailer nor
// trailers-only header) is not a complete gRPC call: denied with 403.
func TestExternalAuthGRPCWithoutStatusDenies(t *testing.T) {
	msg, err := proto.Marshal(&authv3.CheckResponse{Status: &status.Status{Code: int32(codes.OK)}})
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(frame[1:5], uint32(len(msg)))
	copy(frame[5:], msg)
	for _, withStatus := range []bool{true, false} {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/grpc")
			if withStatus {
				w.Header().Set("Trailer", "Grpc-Status")
			}
			_, _ = w.Write(frame)
			if withStatus {
				w.Header().Set("Grpc-Status", "0")
			}
		})}
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetUnencryptedHTTP2(true)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		h := grpcAuthHarness(t, "", map[string]string{"default/auth:9001": ln.Addr().String()})
		res, tr := h.traced(h.request("GET", "app.example.com", "/", "Authorization: Bearer good"))
		want := http.StatusForbidden
		if withStatus {
			want = http.StatusOK
		}
		if res.status != want {
			t.Fatalf("grpc-status sent %v: status %d, want %d (reason %q)", withStatus, res.status, want, tr.Reason)
		}
		if !withStatus && !strings.Contains(tr.Reason, "grpc-status") {
			t.Errorf("reason %q does not name the missing grpc-status", tr.Reason)
		}
	}
}

// TestUpstreamStatusOutOfRange: a backend status outside 100..999 (here
// "099" and "000", which Go's HTTP/1 parser accepts) is the backend's
// fault: 502 to the client, with the reason traced, never a panic. Each
// way to the backend is tried: the fast path's forwarding lane (a GET),
// ReverseProxy over the pool (a POST with a body, which the fast path
// hands to net/http) and ReverseProxy behind the h2c server.
func TestUpstreamStatusOutOfRange(t *testing.T) {
	for _, st := range []string{"099", "000"} {
		addr := rawBackend(t, func(c net.Conn, br *bufio.Reader) {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			_, _ = io.WriteString(c, "HTTP/1.1 "+st+" Odd\r\nContent-Length: 2\r\n\r\nhi")
		})
		h := servePooled(t, addr)
		post := h.request("POST", "x", "/")
		post.Body, post.ContentLength = io.NopCloser(strings.NewReader("body")), 4
		for _, c := range []struct {
			way string
			req *http.Request
			do  func(*http.Request) result
		}{
			{"lane (GET)", h.request("GET", "x", "/"), h.do},
			{"ReverseProxy (POST)", post, h.do},
			{"ReverseProxy (h2c)", h.request("GET", "x", "/"), func(req *http.Request) result {
				resp, err := h2cClient(t).Do(req)
				if err != nil {
					t.Fatalf("h2c: %v", err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return result{resp.StatusCode, resp.Header, b}
			}},
		} {
			id := strconv.FormatInt(testIDs.Add(1), 10)
			c.req.Header.Set("X-Test-Id", id)
			res := c.do(c.req)
			tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.RequestHeaders.Get("X-Test-Id") == id })
			if res.status != http.StatusBadGateway || !strings.Contains(tr.Reason, "status") {
				t.Errorf("status %s over the %s: client got %d %q, trace reason %q; want 502 naming the status", st, c.way, res.status, res.body, tr.Reason)
			}
		}
	}
}
