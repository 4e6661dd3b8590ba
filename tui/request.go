package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/aymanbagabas/go-osc52/v2"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/emulator"
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
}

// skipHeaders are not repeated in a curl command or a replay: curl and
// net/http set them themselves.
var skipHeaders = map[string]bool{"Content-Length": true, "Connection": true, "Accept-Encoding": true,
	"User-Agent": true, "Transfer-Encoding": true}

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

// requestURL is where the request went: the listener address it arrived on.
func requestURL(t emulator.Trace) (string, error) {
	if t.Address == "" {
		return "", errors.New("the trace has no listener address")
	}
	return "http://" + t.Address + t.Path, nil
}

// curlCommand renders the request as a curl command line that sends it to
// the same listener with the same Host and headers. Credentials the
// emulator redacted, and values it cut, are left out; the path is the
// trace's, with sensitive query values redacted.
func curlCommand(t emulator.Trace) (string, int, error) {
	u, err := requestURL(t)
	if err != nil {
		return "", 0, err
	}
	h, redacted := replayHeaders(t)
	var b strings.Builder
	b.WriteString("curl -i")
	if t.Method != "" && t.Method != http.MethodGet {
		b.WriteString(" -X " + shellQuote(t.Method))
	}
	b.WriteString(" " + shellQuote(u))
	if t.Host != "" {
		b.WriteString(" -H " + shellQuote("Host: "+t.Host))
	}
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range h[n] {
			b.WriteString(" -H " + shellQuote(n+": "+v))
		}
	}
	return b.String(), redacted, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// copyCurl returns a command that puts the curl command on the clipboard
// with OSC 52 and reports it in the status line.
func (r *requester) copyCurl(t emulator.Trace) tea.Cmd {
	return func() tea.Msg {
		cmd, redacted, err := curlCommand(t)
		if err != nil {
			return statusMsg{text: "copy: " + err.Error(), isErr: true}
		}
		note := ""
		if redacted > 0 {
			note = fmt.Sprintf(" (%s left out)", plural(redacted, "redacted or cut header"))
		}
		if r.system != nil && r.system(cmd) == nil {
			return statusMsg{text: "copied" + note + ": " + cmd}
		}
		if r.clipboard == nil {
			return statusMsg{text: "curl" + note + ": " + cmd}
		}
		if _, err := io.WriteString(r.clipboard, osc52.New(cmd).String()); err != nil {
			return statusMsg{text: "copy: " + err.Error() + ": " + cmd, isErr: true}
		}
		// OSC 52 has no answer: say what was done, not that it worked.
		return statusMsg{text: "sent to the clipboard via OSC 52 (unconfirmed)" + note + ": " + cmd}
	}
}

// replay returns a command that sends the request again to the listener
// it arrived on, with net/http. The body is not recorded in traces, so a
// request that had one is replayed without it.
func (r *requester) replay(t emulator.Trace) tea.Cmd {
	return func() tea.Msg {
		if t.GRPC {
			return statusMsg{text: "replay: gRPC requests cannot be replayed from a trace", isErr: true}
		}
		u, err := requestURL(t)
		if err != nil {
			return statusMsg{text: "replay: " + err.Error(), isErr: true}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, orDefault(t.Method, http.MethodGet), u, nil)
		if err != nil {
			return statusMsg{text: "replay: " + err.Error(), isErr: true}
		}
		req.Header, _ = replayHeaders(t)
		req.Host = t.Host
		start := time.Now()
		resp, err := r.client.Do(req)
		if err != nil {
			return statusMsg{text: "replay: " + err.Error(), isErr: true}
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		note := ""
		if t.BytesIn > 0 {
			note = " (without its body: traces do not record bodies)"
		}
		return statusMsg{text: fmt.Sprintf("replayed %s %s%s → %d in %s%s", req.Method, t.Host, t.Path,
			resp.StatusCode, roundDuration(time.Since(start)), note)}
	}
}

// newReplayClient is the HTTP client replays use: no redirects followed
// (the redirect is the answer), no proxy from the environment.
func newReplayClient() *http.Client {
	return &http.Client{
		Timeout:       10 * time.Second,
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
