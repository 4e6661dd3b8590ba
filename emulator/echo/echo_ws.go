package echo

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/websocket"
)

// isEchoWebSocket reports whether req asks the echo backend for its
// WebSocket endpoint (/ws, as echo-basic serves it).
func isEchoWebSocket(req *http.Request) bool {
	return req.URL.Path == "/ws" && strings.EqualFold(req.Header.Get("Upgrade"), "websocket")
}

// roundTripWebSocket serves a WebSocket upgrade for /ws. A WebSocket needs
// a connection to switch protocols on, so the request is served by a real
// http.Server over one end of an in-memory net.Pipe; the other end becomes
// the 101 response's body, the io.ReadWriteCloser the reverse proxy copies
// frames through. The server echoes every frame back until the client
// closes.
func (e *Target) roundTripWebSocket(req *http.Request) (*http.Response, error) {
	client, server := net.Pipe()
	srv := &http.Server{Handler: websocket.Handler(echoWebSocket), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(&oneConnListener{conn: server}) }()

	stop := context.AfterFunc(req.Context(), func() { _ = client.Close() })
	defer stop()
	out := req.Clone(context.Background())
	out.Body, out.ContentLength = nil, 0
	if err := out.Write(client); err != nil {
		_ = client.Close()
		return nil, err
	}
	br := bufio.NewReader(client)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = client.Close()
		return echoReply(req, resp.StatusCode, resp.Header, body), nil
	}
	resp.Body = &pipeBody{Reader: br, Conn: client}
	return resp, nil
}

// echoWebSocket echoes WebSocket frames back until the client closes.
func echoWebSocket(ws *websocket.Conn) {
	_, _ = io.Copy(ws, ws)
}

// pipeBody is the upgraded connection: reads drain what the response
// reader buffered first.
type pipeBody struct {
	*bufio.Reader
	net.Conn
}

func (p *pipeBody) Read(b []byte) (int, error) { return p.Reader.Read(b) }

var _ io.ReadWriteCloser = (*pipeBody)(nil)

// oneConnListener hands out one connection, then reports itself closed.
type oneConnListener struct {
	mu   sync.Mutex
	conn net.Conn
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil, net.ErrClosed
	}
	c := l.conn
	l.conn = nil
	return c, nil
}

func (l *oneConnListener) Close() error { return nil }

func (l *oneConnListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "echo" }

// ErrReset is the failure of an attempt the retry simulation fails without
// a response code: the proxy sees it as a connection reset.
var ErrReset = errors.New("echo: connection reset by backend (retry simulation)")
