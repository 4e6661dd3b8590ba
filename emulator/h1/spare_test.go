package h1

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// TestReleasedResponseWriterServesTheNextRequest: a response writer its
// handler released is the next request's on the connection, reset (no
// status, header or length of the last answer); one not released is not
// taken again.
func TestReleasedResponseWriterServesTheNextRequest(t *testing.T) {
	var seen []*ResponseWriter
	f := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fw := w.(*ResponseWriter)
		seen = append(seen, fw)
		switch r.URL.Path {
		case "/first":
			w.Header().Set("X-First", "1")
			w.Header().Set("Content-Length", "5")
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, "first")
			fw.Release()
		default:
			_, _ = io.WriteString(w, "next")
		}
	}), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	_, _, get := pipeServe(t, f)
	ask := func(path string) *http.Response {
		t.Helper()
		resp, body := get("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		resp.Header.Set("Body", body)
		return resp
	}
	if resp := ask("/first"); resp.StatusCode != http.StatusAccepted || resp.Header.Get("Body") != "first" {
		t.Fatalf("first answer %d %q", resp.StatusCode, resp.Header.Get("Body"))
	}
	for i, path := range []string{"/next", "/last"} {
		resp := ask(path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-First") != "" || resp.Header.Get("Body") != "next" ||
			resp.ContentLength != int64(len("next")) {
			t.Errorf("answer %d: %d, X-First %q, body %q, length %d", i+2, resp.StatusCode, resp.Header.Get("X-First"),
				resp.Header.Get("Body"), resp.ContentLength)
		}
	}
	if len(seen) != 3 || seen[1] != seen[0] || seen[2] == seen[1] {
		t.Errorf("writers %p: want the first released one taken again by the second request only", seen)
	}
}
