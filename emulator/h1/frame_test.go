package h1

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeCountingConn records every write on a connection as one slice.
type writeCountingConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (c *writeCountingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, bytes.Clone(p))
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// serveOnce serves one GET through the fast server with handler and
// returns the writes the server made on the client connection.
func serveOnce(t *testing.T, handler http.HandlerFunc) [][]byte {
	t.Helper()
	client, server := net.Pipe()
	counted := &writeCountingConn{Conn: server}
	f := &Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	f.Start(counted, time.Now())
	go func() {
		_, _ = client.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	}()
	_ = client.SetDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	_ = client.Close()
	if err := f.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	counted.mu.Lock()
	defer counted.mu.Unlock()
	return counted.writes
}

// anyDate blanks an answer's Date field.
func anyDate(b []byte) []byte {
	return dateField.ReplaceAll(b, []byte("Date: -\r\n"))
}

var dateField = regexp.MustCompile(`(?m)^Date: [^\r]*\r\n`)

// TestFrameSendsAFlushsBytesInOneWrite: a body written, framed with Frame
// and ended goes out as the same bytes as one flushed before the end
// (chunked, since a flush commits the header before the length is known),
// in one write instead of two.
func TestFrameSendsAFlushsBytesInOneWrite(t *testing.T) {
	body := strings.Repeat("x", 256)
	flushed := serveOnce(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, body)
		_ = http.NewResponseController(w).Flush()
	})
	framed := serveOnce(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, body)
		if err := w.(*ResponseWriter).Frame(); err != nil {
			t.Error(err)
		}
	})
	// The two answers are a moment apart: their Date can be a second apart.
	want, got := anyDate(bytes.Join(flushed, nil)), anyDate(bytes.Join(framed, nil))
	if !bytes.Equal(got, want) {
		t.Fatalf("framed answer\n%q\nflushed answer\n%q", got, want)
	}
	if !bytes.Contains(got, []byte("Transfer-Encoding: chunked\r\n")) {
		t.Fatalf("framed answer not chunked:\n%q", got)
	}
	if len(flushed) != 2 || len(framed) != 1 {
		t.Fatalf("writes: flushed %d, framed %d; want 2 and 1", len(flushed), len(framed))
	}
}
