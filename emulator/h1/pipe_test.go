package h1

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// pipeServe serves one connection of a net.Pipe with f (stopped when the
// test ends) and returns the client's end, its reader, and ask, which
// writes a request head on it and reads the answer and its body.
func pipeServe(t *testing.T, f *Server) (client net.Conn, br *bufio.Reader, ask func(head string) (*http.Response, string)) {
	t.Helper()
	client, server := net.Pipe()
	t.Cleanup(func() { _ = client.Close() })
	f.Start(server, time.Now())
	t.Cleanup(func() { _ = f.Stop(t.Context()) })
	br = bufio.NewReader(client)
	return client, br, func(head string) (*http.Response, string) {
		t.Helper()
		_ = client.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(client, head); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
}
