package lsp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"
)

// replyWriteError is what the editor's end of the stream says when a
// reply cannot be written: a type of its own, unlike the io.EOF the
// next read gets.
type replyWriteError struct{}

func (replyWriteError) Error() string { return "broken pipe (test)" }

// brokenEditor delivers its messages, then ends the stream; every write
// fails, and the server is being stopped meanwhile (gone: its context's
// cancel, as an editor closing or ctrl-c does).
type brokenEditor struct {
	in   *bytes.Reader
	gone context.CancelFunc
}

func (b *brokenEditor) Read(p []byte) (int, error) { return b.in.Read(p) }
func (b *brokenEditor) Write(p []byte) (int, error) {
	b.gone()
	return 0, replyWriteError{}
}
func (b *brokenEditor) Close() error { return nil }

// TestReplyThatCannotBeWritten: an editor that went away while a request
// ran (the reply's write fails, then the stream ends) ends the server
// cleanly. go.lsp.dev/jsonrpc2 stores each failure of a connection in one
// atomic.Value: a handler that returned the reply's write error and then
// the read loop's end (the server's context cancelled) — errors of two
// types — made it panic, taking the whole process down.
func TestReplyThatCannotBeWritten(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`
	msg := fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	ed := &brokenEditor{in: bytes.NewReader([]byte(msg)), gone: stop}
	var log bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- serveWith(serveCtx, ed, Options{Log: &log}, methods) }()
	select {
	case err := <-done:
		if err != nil && err != io.EOF {
			t.Logf("Serve ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the server did not end after its editor went away")
	}
	if !bytes.Contains(log.Bytes(), []byte("broken pipe (test)")) {
		t.Errorf("the log does not say the reply could not be written:\n%s", log.String())
	}
}
