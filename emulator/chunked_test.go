package emulator

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine"
)

// A request whose chunked body is malformed is the client's fault: 400,
// not 502, when forwarding it fails on the body. (The echo backend does not
// read request bodies: it answers without noticing.)
func TestMalformedChunkedBodyIs400(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fmt.Fprintln(w, "read the body")
	}))
	defer backend.Close()
	h := serve(t, func(p int32) *engine.Table {
		return table(gateway("gw", "127.0.0.1", port(p, listener("http", "",
			vhost("*", rule("real", prefix("/real"), mapped("real", 1, backend.Listener.Addr().String())))))))
	})
	for _, path := range []string{"/real"} {
		c, err := net.Dial("tcp", net.JoinHostPort(h.ip, fmt.Sprint(h.port)))
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		// "zz" is not a hexadecimal chunk size.
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nmore\r\n0\r\n\r\n", path)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "request body") {
			t.Errorf("%s: %d %q, want 400 naming the request body", path, resp.StatusCode, body)
		}
		tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == path })
		if tr.Status != http.StatusBadRequest || !strings.Contains(tr.Reason, "chunk") {
			t.Errorf("%s: trace status %d reason %q", path, tr.Status, tr.Reason)
		}
	}
}
