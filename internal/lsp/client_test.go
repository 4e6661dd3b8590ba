package lsp

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// disableEnv names a method removed from the table for a run of the
// tests (TestEveryHandlerIsTested).
const disableEnv = "GWDEV_LSP_TEST_DISABLE"

// testMethods is the method table, without the method disableEnv names.
func testMethods() map[string]handler {
	m := maps.Clone(methods)
	delete(m, os.Getenv(disableEnv))
	return m
}

// client is an editor in the test: it speaks the protocol to a server
// over a pipe and keeps what the server pushes.
type client struct {
	t    testing.TB
	conn jsonrpc2.Conn
	dir  string

	mu sync.Mutex
	// diags are the last diagnostics pushed, by path.
	diags map[string][]protocol.Diagnostic
	// pushed has a value after each push; refreshed after each
	// workspace/diagnostic/refresh.
	pushed, refreshed chan struct{}
	messages          []string
}

// startClient starts a server with the method table m (nil: methods) on
// a copy of dir, and a client connected to it, and initializes.
func startClient(t testing.TB, dir string, m map[string]handler, caps map[string]any) *client {
	t.Helper()
	if m == nil {
		m = testMethods()
	}
	work := copyTree(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	a, b := connPair(t)
	s := newServer(ctx, a, Options{Debounce: 30 * time.Millisecond}, m)
	c := &client{t: t, dir: work, diags: map[string][]protocol.Diagnostic{}, pushed: make(chan struct{}, 1000), refreshed: make(chan struct{}, 100)}
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(b))
	c.conn.Go(ctx, c.handle)
	t.Cleanup(func() {
		cancel()
		_ = c.conn.Close()
		<-s.conn.Done()
	})
	if caps == nil {
		caps = map[string]any{}
	}
	var res map[string]any
	if err := c.call("initialize", map[string]any{"rootUri": uriOf(work), "capabilities": caps}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	_ = c.conn.Notify(ctx, "initialized", map[string]any{})
	return c
}

// connPair is a connected pair of loopback TCP connections: buffered by
// the kernel, as an editor's stdio pipes are. net.Pipe is not: both read
// loops write too (the server its replies, the client its answer to the
// server's workspace/diagnostic/refresh), and two writes at once on an
// unbuffered pipe wait for each other for ever (TestKustomizeInputBuffer
// hung 30 s in CI that way).
func connPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	b, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a := <-accepted
	if a == nil {
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// handle takes the server's notifications and requests.
func (c *client) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	switch req.Method() {
	case protocol.MethodTextDocumentPublishDiagnostics:
		var p protocol.PublishDiagnosticsParams
		if err := json.Unmarshal(req.Params(), &p); err == nil {
			path, _ := pathOf(p.URI)
			c.mu.Lock()
			c.diags[path] = p.Diagnostics
			c.mu.Unlock()
			c.pushed <- struct{}{}
		}
	case "workspace/diagnostic/refresh":
		c.refreshed <- struct{}{}
	case protocol.MethodWindowShowMessage:
		var p protocol.ShowMessageParams
		_ = json.Unmarshal(req.Params(), &p)
		c.mu.Lock()
		c.messages = append(c.messages, p.Message)
		c.mu.Unlock()
	}
	return reply(ctx, nil, nil)
}

// call makes a request and decodes its result into res.
func (c *client) call(method string, params, res any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.conn.Call(ctx, method, params, res)
	return err
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// path is the absolute path of name in the client's copy of the folder.
func (c *client) path(name string) string { return filepath.Join(c.dir, name) }

// open opens name with its text on disk; it returns the text.
func (c *client) open(name string) string {
	c.t.Helper()
	data, err := os.ReadFile(c.path(name))
	if err != nil {
		c.t.Fatal(err)
	}
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uriOf(c.path(name)), "languageId": "yaml", "version": 1, "text": string(data)}})
	return string(data)
}

// edit replaces the first occurrence of old (after line from, 0-based)
// in text with new, sending one incremental change; it returns the new
// text.
func (c *client) edit(name, text string, version int, old, new string) string {
	c.t.Helper()
	i := strings.Index(text, old)
	if i < 0 {
		c.t.Fatalf("%q not in %s", old, name)
	}
	start, end := positionOf(text, i), positionOf(text, i+len(old))
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uriOf(c.path(name)), "version": version},
		"contentChanges": []any{map[string]any{"range": protocol.Range{Start: start, End: end}, "text": new}},
	})
	return text[:i] + new + text[i+len(old):]
}

// positionOf is the LSP position of byte offset off in text.
func positionOf(text string, off int) protocol.Position {
	line := strings.Count(text[:off], "\n")
	ls := text[strings.LastIndexByte(text[:off], '\n')+1 : off]
	return protocol.Position{Line: uint32(line), Character: utf16Column(ls, len([]rune(ls)))}
}

// at is the position of the first occurrence of s in name's text.
func at(t testing.TB, text, s string) protocol.Position {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("%q not in the text", s)
	}
	return positionOf(text, i)
}

// waitDiags waits until cond holds for the diagnostics pushed.
func (c *client) waitDiags(what string, cond func(map[string][]protocol.Diagnostic) bool) map[string][]protocol.Diagnostic {
	c.t.Helper()
	wait := 20 * time.Second
	if os.Getenv(disableEnv) != "" {
		wait = 3 * time.Second // a handler is disabled: the test is to fail
	}
	deadline := time.After(wait)
	for {
		c.mu.Lock()
		d := maps.Clone(c.diags)
		c.mu.Unlock()
		if cond(d) {
			return d
		}
		select {
		case <-c.pushed:
		case <-deadline:
			c.t.Fatalf("%s: not within %s; diagnostics pushed: %v", what, wait, d)
		}
	}
}

// copyTree copies dir to a temporary folder (the tests' buffers must not
// be the repository's samples, though the server never writes).
func copyTree(t testing.TB, dir string) string {
	t.Helper()
	out := t.TempDir()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(out, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(out)
	if err != nil {
		t.Fatal(err)
	}
	return real
}
