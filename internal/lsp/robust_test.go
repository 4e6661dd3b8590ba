package lsp

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// frame is one message as the protocol frames it.
func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// TestShutdownExit: after shutdown every request but exit is refused,
// and exit ends Serve.
func TestShutdownExit(t *testing.T) {
	a, b := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveWith(context.Background(), a, Options{Dir: t.TempDir()}, testMethods()) }()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(b))
	conn.Go(context.Background(), jsonrpc2.MethodNotFoundHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := conn.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Call(ctx, "textDocument/hover", map[string]any{}, nil); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Fatalf("a request after shutdown: %v", err)
	}
	if err := conn.Notify(ctx, "exit", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after exit")
	}
}

// TestUnknownAndMalformed: an unknown request is answered MethodNotFound,
// an unknown notification ignored, a message that is not JSON or has
// parameters of the wrong shape skipped or refused, and the server
// answers the next request.
func TestUnknownAndMalformed(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "basic"), nil, nil)
	if err := c.call("gwdev/nonsense", map[string]any{}, nil); err == nil || !strings.Contains(err.Error(), "method not found") {
		t.Fatalf("unknown request: %v", err)
	}
	c.notify("gwdev/nonsense", map[string]any{})
	if err := c.call("textDocument/hover", []int{1, 2}, nil); err == nil {
		t.Fatal("hover with an array for parameters: no error")
	}
	// Before initialize, a request is answered at once, with nothing.
	early := rawConn(t, filepath.Join(samples, "basic"))
	early.write(frame(`{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x.yaml"},"position":{"line":0,"character":0}}}`))
	early.expect(`"result":null`)
	// The client's own stream writes valid JSON: write a broken message
	// under it, as the next message on the wire.
	raw := rawConn(t, filepath.Join(samples, "basic"))
	raw.write(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`))
	raw.write(frame(`{"jsonrpc":"2.0","id":2,"method":`)) // cut short
	raw.write(frame("\xff\xfe not json"))
	raw.write("Bogus header without a colon\r\n" + frame(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`))
	raw.expect(`"id":3`)
}

// rawClient writes bytes to a server and reads what it answers.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	out  chan string
}

func rawConn(t *testing.T, dir string) *rawClient {
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{Dir: copyTree(t, dir)}
	s := newServer(ctx, a, opts, testMethods())
	r := &rawClient{t: t, conn: b, out: make(chan string, 100)}
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := b.Read(buf)
			if n > 0 {
				r.out <- string(buf[:n])
			}
			if err != nil {
				close(r.out)
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		b.Close()
		<-s.conn.Done()
	})
	return r
}

func (r *rawClient) write(s string) {
	r.t.Helper()
	_ = r.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.conn.Write([]byte(s)); err != nil {
		r.t.Fatalf("write %.40q: %v", s, err)
	}
}

// expect waits for an answer holding s.
func (r *rawClient) expect(s string) {
	r.t.Helper()
	var got strings.Builder
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-r.out:
			if !ok {
				r.t.Fatalf("the server closed the stream; it said: %s", got.String())
			}
			got.WriteString(m)
			if strings.Contains(got.String(), s) {
				return
			}
		case <-deadline:
			r.t.Fatalf("no %s within 20s; the server said: %s", s, got.String())
		}
	}
}

// TestHostileBuffers opens a buffer over the size limit, one nested
// thousands deep, one whose JSON carries bytes that are not UTF-8, and
// sends a message over the message limit: the server refuses what it
// must with a message, diagnoses the rest, and keeps answering (a
// message over the limit ends the connection, and says so).
func TestHostileBuffers(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "basic"), nil, nil)
	huge := c.path("huge.yaml")
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uriOf(huge), "languageId": "yaml", "version": 1,
		"text": strings.Repeat("# filler\n", MaxDocumentBytes/9+1)}})
	deep := c.path("deep.yaml")
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uriOf(deep), "languageId": "yaml", "version": 1,
		"text": "kind: HTTPRoute\nspec: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"}})
	c.waitDiags("the deep buffer diagnosed", func(d map[string][]protocol.Diagnostic) bool { return hasCode(d[deep], "LoadError", -1) })
	c.mu.Lock()
	msgs := strings.Join(c.messages, "\n")
	c.mu.Unlock()
	if !strings.Contains(msgs, "buffer too large") {
		t.Errorf("no message about the buffer over the limit: %q", msgs)
	}
	text := c.open("app.yaml")
	c.edit("app.yaml", text, 2, "name: app", "name: \xff\xfeapp")
	var h *protocol.Hover
	if err := c.call("textDocument/hover", c.textDoc("gateway.yaml", protocol.Position{Line: 5}), &h); err != nil || h == nil {
		t.Fatalf("hover after hostile buffers: %v %v", h, err)
	}

	raw := rawConn(t, filepath.Join(samples, "basic"))
	raw.write(fmt.Sprintf("Content-Length: %d\r\n\r\n", MaxMessageBytes+1))
	select {
	case _, ok := <-raw.out:
		if ok {
			t.Fatal("the server answered a message over the limit")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a message over the limit did not end the connection")
	}
}

// FuzzStream writes any bytes to a server after an initialize-less
// handshake, then a shutdown request: the server never panics, never
// holds more than the limits allow, and either answers the shutdown or
// ended the connection because the bytes broke the framing.
func FuzzStream(f *testing.F) {
	open := `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/x.yaml","version":1,"text":"a: b\n"}}}`
	change := `{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///tmp/x.yaml","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":3},"end":{"line":9,"character":99}},"text":"[[[[\u00ff"}]}}`
	for _, seed := range []string{
		frame(open) + frame(change),
		frame(open) + frame(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///tmp/x.yaml"},"contentChanges":[{"range":{"start":{"line":4294967295,"character":4294967295},"end":{"line":0,"character":0}},"text":"x"}]}}`),
		frame(`{"jsonrpc":"2.0","id":1,"method":"textDocument/didOpen","params":"\xff"}`),
		"Content-Length: 99999999999\r\n\r\n",
		"Content-Length: -1\r\n\r\n{}",
		frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"http://x/y","text":"a"}}}`),
		frame(`{"jsonrpc":"2.0","id":7,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/x.yaml"},"position":{"line":0,"character":2}}}`),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, toServer := io.Pipe()
		fromServer, out := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := newServer(ctx, pipeRWC{in, out}, Options{Dir: t.TempDir()}, methods)
		answers := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(fromServer)
			answers <- b
		}()
		go func() {
			_, _ = toServer.Write(data)
			_, _ = toServer.Write([]byte(frame(`{"jsonrpc":"2.0","id":"fuzz-end","method":"shutdown"}`)))
			toServer.Close() // the end of the stream ends the server
		}()
		select {
		case <-s.conn.Done():
		case <-time.After(20 * time.Second):
			t.Fatal("the server did not end with its stream")
		}
		out.Close()
		<-answers
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.openBytes > MaxOpenBytes || len(s.docs) > MaxOpenDocuments {
			t.Fatalf("holding %d bytes in %d buffers", s.openBytes, len(s.docs))
		}
	})
}

// pipeRWC is a server's end of two pipes.
type pipeRWC struct {
	*io.PipeReader
	*io.PipeWriter
}

func (p pipeRWC) Close() error {
	p.PipeReader.Close()
	return p.PipeWriter.Close()
}

// TestEveryHandlerIsTested removes each method from the table in turn
// and runs the tests of its capability, which must fail.
func TestEveryHandlerIsTested(t *testing.T) {
	if os.Getenv(disableEnv) != "" {
		t.Skip("inside a run with a handler disabled")
	}
	if testing.Short() {
		t.Skip("-short: runs the package's tests once per handler")
	}
	tests := map[string]string{
		"initialize":                  "TestPushDiagnosticsAsYouType",
		"shutdown":                    "TestShutdownExit",
		"exit":                        "TestShutdownExit",
		"textDocument/didOpen":        "TestPushDiagnosticsAsYouType",
		"textDocument/didChange":      "TestPushDiagnosticsAsYouType",
		"textDocument/didClose":       "TestDidClose",
		"textDocument/diagnostic":     "TestPullDiagnostics",
		"textDocument/hover":          "TestHover",
		"textDocument/definition":     "TestDefinition",
		"textDocument/references":     "TestReferences",
		"textDocument/documentSymbol": "TestSymbols",
		"workspace/symbol":            "TestSymbols",
		"textDocument/completion":     "TestCompletion",
		"textDocument/codeAction":     "TestCodeActions",
	}
	for m := range methods {
		test, ok := tests[m]
		if !ok {
			t.Errorf("method %s has no test", m)
			continue
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^"+test+"$", "-test.count=1")
		cmd.Env = append(os.Environ(), disableEnv+"="+m)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s passes with %s disabled:\n%s", test, m, out)
		}
	}
}
