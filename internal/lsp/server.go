package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
)

// Options say how the server reads the project.
type Options struct {
	// Flags are the project flags (`gwdev lsp --crds …`), as check takes
	// them.
	Flags project.Flags
	// Dir is the project folder ("" : the editor's workspace root, else
	// the current directory).
	Dir string
	// Debounce coalesces bursts of keystrokes (0: 50ms, the watcher's
	// default): a change after a quiet while is diagnosed at once, a burst
	// once it ends.
	Debounce time.Duration
	// Log receives the server's own messages (nil: none).
	Log io.Writer
}

// handler answers one method; params are the request's raw parameters.
// A notification's result is dropped.
type handler func(s *server, ctx context.Context, params json.RawMessage) (any, error)

// methods are the methods served: the one table a capability is added to.
// Each entry's tests fail when the entry is removed
// (TestEveryHandlerIsTested). Other notifications (initialized, didSave,
// $/cancelRequest…) are ignored, other requests answered MethodNotFound.
var methods = map[string]handler{
	"initialize":                  (*server).initialize,
	"shutdown":                    (*server).shutdown,
	"exit":                        (*server).exit,
	"textDocument/didOpen":        (*server).didOpen,
	"textDocument/didChange":      (*server).didChange,
	"textDocument/didClose":       (*server).didClose,
	"textDocument/diagnostic":     (*server).pullDiagnostics,
	"textDocument/hover":          (*server).hover,
	"textDocument/definition":     (*server).definition,
	"textDocument/references":     (*server).references,
	"textDocument/documentSymbol": (*server).documentSymbols,
	"workspace/symbol":            (*server).workspaceSymbols,
	"textDocument/completion":     (*server).completion,
	"textDocument/codeAction":     (*server).codeActions,
}

// server is one connection's state.
type server struct {
	conn    jsonrpc2.Conn
	opts    Options
	methods map[string]handler
	// ctx ends the Session (when the connection ends or on exit).
	ctx    context.Context
	cancel context.CancelFunc
	// overlay holds the open buffers' text for the Session's watcher.
	overlay *watch.Overlay
	// exited is closed by exit.
	exited   chan struct{}
	exitOnce sync.Once

	mu sync.Mutex
	// docs are the open buffers by path; openBytes their total size.
	docs      map[string]*document
	openBytes int
	// session is the project's Session (nil: not initialized).
	session *app.Session
	// view is what the last State says (nil: none yet); ready is closed
	// when the first one arrives.
	view  *view
	ready chan struct{}
	// published are the diagnostics last pushed, by path.
	published map[string][]protocol.Diagnostic
	// pull is set when the client pulls diagnostics (3.17): nothing is
	// pushed then; refresh when it asks to be told to pull again.
	pull, refresh bool
	shutdownSeen  bool
}

// Serve serves one client on rwc until the client exits or the stream
// ends. The project is loaded at initialize.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, o Options) error {
	return serveWith(ctx, rwc, o, methods)
}

// serveWith is Serve with the method table m.
func serveWith(ctx context.Context, rwc io.ReadWriteCloser, o Options, m map[string]handler) error {
	s := newServer(ctx, rwc, o, m)
	select {
	case <-s.conn.Done():
	case <-s.exited:
	case <-ctx.Done():
	}
	s.cancel()
	_ = s.conn.Close()
	if err := s.conn.Err(); err != nil && !closedStream(err) {
		return err
	}
	return nil
}

// newServer starts serving rwc with the method table m.
func newServer(ctx context.Context, rwc io.ReadWriteCloser, o Options, m map[string]handler) *server {
	if o.Log == nil {
		o.Log = io.Discard
	}
	s := &server{opts: o, methods: m, overlay: watch.NewOverlay(), exited: make(chan struct{}),
		docs: map[string]*document{}, ready: make(chan struct{}), published: map[string][]protocol.Diagnostic{}}
	s.ctx, s.cancel = context.WithCancel(ctx)
	in := &boundedInput{r: rwc}
	s.conn = jsonrpc2.NewConn(tolerantStream{jsonrpc2.NewStream(boundedStream{in, rwc}), in, o.Log})
	s.conn.Go(s.ctx, s.handle)
	return s
}

// handle dispatches one request or notification. It never returns an
// error: a failed request is answered with its error, a failed
// notification logged. A reply that cannot be written (the editor is
// gone) is logged and the stream closed, so that the read loop ends the
// connection: go.lsp.dev/jsonrpc2 records each failure in one
// atomic.Value, and a handler's error followed by the read loop's own, of
// another type, panics (TestReplyThatCannotBeWritten).
func (s *server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	if err := s.dispatch(ctx, reply, req); err != nil {
		fmt.Fprintf(s.opts.Log, "gwdev lsp: %s: the reply could not be written: %v\n", req.Method(), err)
		_ = s.conn.Close()
	}
	return nil
}

// dispatch is handle, returning the error of writing the reply.
func (s *server) dispatch(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(s.opts.Log, "gwdev lsp: %s: internal error: %v\n", req.Method(), r)
			err = reply(ctx, nil, fmt.Errorf("%s: internal error: %v", req.Method(), r))
		}
	}()
	h := s.methods[req.Method()]
	if h == nil {
		if _, call := req.(*jsonrpc2.Call); !call {
			return nil // an unknown notification is ignored, as the spec says
		}
		return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, "method not found: "+req.Method()))
	}
	s.mu.Lock()
	down := s.shutdownSeen && req.Method() != "exit"
	s.mu.Unlock()
	if down {
		return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shut down"))
	}
	res, herr := h(s, ctx, req.Params())
	if herr != nil {
		fmt.Fprintf(s.opts.Log, "gwdev lsp: %s: %v\n", req.Method(), herr)
	}
	return reply(ctx, res, herr)
}

// params decodes a request's parameters, as an InvalidParams error.
func params(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, err.Error())
	}
	return nil
}

// initializeParams are the parts of initialize's parameters the server
// reads, 3.17's included (go.lsp.dev/protocol predates them).
type initializeParams struct {
	RootURI          protocol.DocumentURI       `json:"rootUri"`
	RootPath         string                     `json:"rootPath"`
	WorkspaceFolders []protocol.WorkspaceFolder `json:"workspaceFolders"`
	Capabilities     struct {
		TextDocument struct {
			Diagnostic *struct{} `json:"diagnostic"`
		} `json:"textDocument"`
		Workspace struct {
			Diagnostics struct {
				RefreshSupport bool `json:"refreshSupport"`
			} `json:"diagnostics"`
		} `json:"workspace"`
	} `json:"capabilities"`
}

// serverCapabilities are go.lsp.dev/protocol's plus 3.17's pull
// diagnostics.
type serverCapabilities struct {
	protocol.ServerCapabilities
	DiagnosticProvider *diagnosticOptions `json:"diagnosticProvider,omitempty"`
}

type diagnosticOptions struct {
	Identifier            string `json:"identifier,omitempty"`
	InterFileDependencies bool   `json:"interFileDependencies"`
	WorkspaceDiagnostics  bool   `json:"workspaceDiagnostics"`
}

type initializeResult struct {
	Capabilities serverCapabilities   `json:"capabilities"`
	ServerInfo   *protocol.ServerInfo `json:"serverInfo,omitempty"`
}

// initialize opens the project (the editor's root unless Options.Dir
// says otherwise) and starts its Session.
func (s *server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	var p initializeParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	again := s.session != nil
	s.mu.Unlock()
	if again {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize: already initialized")
	}
	dir, err := s.root(p)
	if err != nil {
		return nil, err
	}
	proj, err := project.Open([]string{dir}, s.opts.Flags)
	if err != nil {
		return nil, err
	}
	sess, err := app.NewSession(s.ctx, proj, app.SessionOptions{Dir: dir, CRDsFlag: s.opts.Flags.CRDs != "",
		Watch: watch.WatchOptions{Debounce: s.opts.Debounce, Overlay: s.overlay}})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.session = sess
	s.pull = p.Capabilities.TextDocument.Diagnostic != nil
	s.refresh = p.Capabilities.Workspace.Diagnostics.RefreshSupport
	s.mu.Unlock()
	sess.Subscribe(s.onState)
	go func() {
		defer sess.Close()
		sess.Start()
		sess.Run(s.ctx, func(err error) { fmt.Fprintf(s.opts.Log, "gwdev lsp: watching %s: %v\n", dir, err) })
	}()
	caps := protocol.ServerCapabilities{
		TextDocumentSync:        &protocol.TextDocumentSyncOptions{OpenClose: true, Change: protocol.TextDocumentSyncKindIncremental},
		HoverProvider:           true,
		DefinitionProvider:      true,
		ReferencesProvider:      true,
		DocumentSymbolProvider:  true,
		WorkspaceSymbolProvider: true,
		CompletionProvider:      &protocol.CompletionOptions{TriggerCharacters: []string{":", " "}},
		CodeActionProvider:      &protocol.CodeActionOptions{CodeActionKinds: []protocol.CodeActionKind{protocol.QuickFix}},
	}
	res := initializeResult{Capabilities: serverCapabilities{ServerCapabilities: caps},
		ServerInfo: &protocol.ServerInfo{Name: "gwdev"}}
	if s.pull {
		res.Capabilities.DiagnosticProvider = &diagnosticOptions{Identifier: "gwdev", InterFileDependencies: true}
	}
	return res, nil
}

// root is the project folder: Options.Dir, else the editor's root URI,
// first workspace folder or root path, else the current directory; made
// absolute, as the buffers' paths are.
func (s *server) root(p initializeParams) (string, error) {
	dir := s.opts.Dir
	switch {
	case dir != "":
	case p.RootURI != "":
		d, err := pathOf(p.RootURI)
		if err != nil {
			return "", err
		}
		dir = d
	case len(p.WorkspaceFolders) > 0:
		d, err := pathOf(protocol.DocumentURI(p.WorkspaceFolders[0].URI))
		if err != nil {
			return "", err
		}
		dir = d
	case p.RootPath != "":
		dir = p.RootPath
	default:
		dir = "."
	}
	return filepath.Abs(dir)
}

func (s *server) shutdown(context.Context, json.RawMessage) (any, error) {
	s.mu.Lock()
	s.shutdownSeen = true
	s.mu.Unlock()
	return nil, nil
}

func (s *server) exit(context.Context, json.RawMessage) (any, error) {
	s.exitOnce.Do(func() { close(s.exited) })
	return nil, nil
}

// notify sends a notification to the client; a failure is logged.
func (s *server) notify(method string, params any) {
	if err := s.conn.Notify(s.ctx, method, params); err != nil && s.ctx.Err() == nil {
		fmt.Fprintf(s.opts.Log, "gwdev lsp: %s: %v\n", method, err)
	}
}

// tolerantStream is a jsonrpc2.Stream that skips a message it cannot
// decode instead of ending the connection (go.lsp.dev/jsonrpc2 ends it on
// any read error): the library has read the whole message by then, so
// the next read starts at the next one. A failure of the stream itself
// (closed, cut short) still ends it.
type tolerantStream struct {
	jsonrpc2.Stream
	in  *boundedInput
	log io.Writer
}

func (t tolerantStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	var total int64
	for {
		msg, n, err := t.Stream.Read(ctx)
		total += n
		if err == nil || t.in.failed() || ctx.Err() != nil || n == 0 {
			return msg, total, err
		}
		fmt.Fprintf(t.log, "gwdev lsp: a malformed message was skipped: %v\n", err)
	}
}

// closedStream reports whether err is the end of the stream rather than
// a bad message.
func closedStream(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed)
}
