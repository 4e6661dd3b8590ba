package h1

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// TestIdleTimeoutCountsFromTheLastRequest: a keep-alive connection stays
// open IdleTimeout after its last request, not after an earlier one, although
// the fast path keeps an earlier idle deadline instead of setting a new one
// per request (awaitIdle); once idle that long it closes.
func TestIdleTimeoutCountsFromTheLastRequest(t *testing.T) {
	const idle = 600 * time.Millisecond
	f := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: idle}
	client, br, get := pipeServe(t, f)
	ask := func(int) { get("GET / HTTP/1.1\r\nHost: x\r\n\r\n") }
	ask(1)
	time.Sleep(idle * 2 / 3)
	ask(2)
	// Past the first request's idle deadline, within the second's.
	time.Sleep(idle * 2 / 3)
	ask(3)
	last := time.Now()
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read %v, want EOF (closed)", err)
	}
	if waited := time.Since(last); waited < idle*3/4 {
		t.Fatalf("connection closed %v after its last request, want about %v", waited, idle)
	}
}
