package tui

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aymanbagabas/go-osc52/v2"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// requester copies requests as curl commands and replays them. Both are
// commands: the clipboard write and the HTTP request run off the event loop.
type requester struct {
	// clipboard receives the OSC 52 sequence (nil: not copied, only shown).
	clipboard io.Writer
	// system puts text on the system clipboard (nil: there is none); when
	// it fails, the OSC 52 sequence is the only attempt, and the status line
	// says the terminal may or may not have taken it.
	system func(string) error
	client *http.Client
	// trust finds the CA file that verifies a listener's certificate
	// (request_trust.go).
	trust trustChecker
}

// skipHeaders are not repeated in a command line or a replay: they
// describe one connection or body, and curl and net/http set them
// themselves. Every other header, User-Agent included, is sent again.
var skipHeaders = map[string]bool{"Content-Length": true, "Connection": true, "Transfer-Encoding": true,
	"Keep-Alive": true, "Upgrade": true, "Proxy-Connection": true, "Te": true}

// replayHeaders returns the trace's request headers that can be sent
// again, and how many were left out because the emulator redacted them or
// cut them to emulator.TraceValueLimit.
func replayHeaders(t emulator.Trace) (http.Header, int) {
	h := http.Header{}
	redacted := 0
	for name, vals := range t.RequestHeaders {
		if skipHeaders[http.CanonicalHeaderKey(name)] {
			continue
		}
		for _, v := range vals {
			if v == emulator.Redacted || emulator.IsTruncated(v) {
				redacted++
				continue
			}
			h.Add(name, v)
		}
	}
	return h, redacted
}

// copyCurl returns a command that puts the trace's command line (curl,
// grpcurl, openssl or nc: request_cmd.go) on the clipboard and reports it
// in the status line, with how it verifies the server over TLS: the CA
// file that verifies the certificate the current result (nil: none yet)
// serves for the trace's listener, or why it skips verification (-k).
func (r *requester) copyCurl(t emulator.Trace, res *engine.Result) tea.Cmd {
	return func() tea.Msg {
		var st serverTrust
		if overTLS(t) {
			var tab *table.Table
			if res != nil {
				tab = res.Table
			}
			st = r.trust.trustFor(t, tab) // request_trust.go
		}
		cmd, notes, err := commandWithNotes(t, st) // command.go
		if err != nil {
			return statusMsg{text: "copy: " + err.Error(), isErr: true}
		}
		// The command first: a narrow terminal cuts the end of the line,
		// and the command is what the user came for.
		said := func(what string) statusMsg {
			tail := notes
			if what != "" {
				tail = append([]string{what}, notes...)
			}
			if len(tail) == 0 {
				return statusMsg{text: cmd}
			}
			return statusMsg{text: cmd + "   ← " + strings.Join(tail, "; ")}
		}
		if r.system != nil && r.system(cmd) == nil {
			return said("copied")
		}
		if r.clipboard == nil {
			return said("") // shown, not copied
		}
		if _, err := io.WriteString(r.clipboard, osc52.New(cmd).String()); err != nil {
			return statusMsg{text: cmd + "   ← copy: " + err.Error(), isErr: true}
		}
		// OSC 52 has no answer: say what was done, not that it worked.
		return said("sent to the clipboard via OSC 52 (unconfirmed)")
	}
}

// replay returns a command that sends the request or opens the connection
// again, to the listener address it arrived on, in its protocol
// (request_replay.go). Traces record no bodies, so a request that had one
// is replayed without it.
func (r *requester) replay(t emulator.Trace) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		text, err := replayTrace(ctx, r.client, t)
		if err != nil {
			return statusMsg{text: "replay: " + err.Error(), isErr: true}
		}
		return statusMsg{text: text}
	}
}

// newReplayClient is the HTTP client replays of plain HTTP/1.1 requests
// use: no redirects followed (the redirect is the answer), no proxy from
// the environment.
func newReplayClient() *http.Client {
	return &http.Client{
		Timeout:       10 * time.Second,
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
