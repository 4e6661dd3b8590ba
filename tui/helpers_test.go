package tui

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/freeport"
	"github.com/gwdev/gwdev/internal/testkit"
	"github.com/gwdev/gwdev/watch"
)

// fixedNow is the test clock.
var fixedNow = time.Date(2026, 5, 4, 12, 30, 0, 0, time.UTC)

// sampleState loads samples/<name> and translates it with the fixed clock.
func sampleState(t *testing.T, name string) *app.State {
	t.Helper()
	return stateFromLoad(t, loadSample(t, name), 0)
}

// loadSample loads samples/<name> with paths relative to the repository
// root, as `gwdev up samples/<name>` shows them.
func loadSample(t testing.TB, name string) *watch.LoadResult {
	t.Helper()
	lr := testkit.Project(t).LoadDir("../samples/" + name)
	for k, src := range lr.Snapshot.Sources {
		src.File = strings.TrimPrefix(src.File, "../")
		lr.Snapshot.Sources[k] = src
	}
	for i := range lr.Snapshot.SourceList {
		src := &lr.Snapshot.SourceList[i].Source
		src.File = strings.TrimPrefix(src.File, "../")
	}
	for i := range lr.Problems {
		lr.Problems[i].File = strings.TrimPrefix(lr.Problems[i].File, "../")
	}
	return lr
}

// stateFromLoad translates a load result and fakes what the data plane
// reports: every port bound on the Gateway address, privileged ones on
// port+8000.
func stateFromLoad(t testing.TB, lr *watch.LoadResult, reload int) *app.State {
	t.Helper()
	res := engine.Translate(lr.Snapshot, engine.Options{Now: metav1.NewTime(fixedNow)})
	return &app.State{Update: &watch.Update{Result: lr}, Result: res, Ports: &emulator.ApplyReport{Ports: fakePorts(res.Table)},
		Reload: reload, Time: fixedNow, Load: 12 * time.Millisecond, Translate: 800 * time.Microsecond, Apply: 300 * time.Microsecond}
}

func fakePorts(t *engine.Table) []emulator.PortReport {
	var out []emulator.PortReport
	if t == nil {
		return nil
	}
	for _, g := range t.Gateways {
		for _, p := range g.Ports {
			r := emulator.PortReport{Gateway: g.Name, Address: g.Address, Port: p.Port, Transport: p.Transport}
			if len(p.Listeners) > 0 {
				r.Protocol = string(p.Listeners[0].Protocol)
			}
			switch {
			case r.Protocol != "HTTP":
				r.NotServed = r.Protocol + " listeners are not served yet"
			case p.Port < 1024:
				r.Bound, r.Fallback, r.Moved = fmt.Sprintf("%s:%d", g.Address, p.Port+8000), true, "in use by another process"
			default:
				r.Bound = fmt.Sprintf("%s:%d", g.Address, p.Port)
			}
			out = append(out, r)
		}
	}
	return out
}

// sampleTraces are requests to the conflicts sample's "other" listener.
func sampleTraces(n int) []emulator.Trace {
	out := make([]emulator.Trace, 0, n)
	for i := 0; i < n; i++ {
		t := emulator.Trace{
			Time: fixedNow.Add(time.Duration(i-n) * 150 * time.Millisecond), Client: fmt.Sprintf("127.0.0.1:%d", 51000+i),
			Gateway: "gateway/default/shared", Listener: "gateway/default/shared/listener/other",
			Address: "127.0.0.1:8080", Port: 80, Proto: "HTTP/1.1", Host: "blog.example.com", Method: "GET",
			Path: fmt.Sprintf("/posts/%d", i), VirtualHost: "gateway/default/shared/listener/other/vhost/*",
			Rule: "httproute/default/blog/rule/0/match/0", Route: "HTTPRoute/default/blog",
			Matched: &emulator.RuleAt{Route: table.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: "blog"}, Rule: 0, Match: 0},
			Source:  "samples/conflicts/routes.yaml:1", Backend: "httproute/default/blog/rule/0/match/0/backend/0",
			Service: "default/blog:80", Target: "echo", Why: "no EndpointSlice and no mapping: gwdev's echo backend",
			Upstream: "echo", Attempts: 1, Status: 200, BytesOut: 312,
			Duration: emulator.Duration(time.Duration(900+i*37) * time.Microsecond), UpstreamDuration: emulator.Duration(400 * time.Microsecond),
			RequestHeaders:  http.Header{"Accept": {"*/*"}, "User-Agent": {"curl/8.5.0"}, "Authorization": {"[redacted]"}},
			ResponseHeaders: http.Header{"Content-Type": {"application/json"}},
		}
		if i%4 == 3 {
			t.Host, t.Path, t.Listener, t.VirtualHost, t.Rule, t.Route, t.Backend, t.Service, t.Target, t.Why, t.Upstream =
				"docs.example.com", "/", "gateway/default/shared/listener/other", "", "", "", "", "", "", "", ""
			t.Reason, t.Status, t.Attempts, t.UpstreamDuration = "no virtual host of listener gateway/default/shared/listener/other matches host docs.example.com", 404, 0, 0
		}
		out = append(out, t)
	}
	return out
}

// plainRenderer renders without any escape sequence, for readable goldens.
func plainRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.Ascii)
	return r
}

// newTestModel returns a dashboard with the fixed clock, plain output and
// the given size.
func newTestModel(w, h int, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	if opts.Renderer == nil {
		opts.Renderer = plainRenderer()
	}
	if opts.Dir == "" {
		opts.Dir = "samples/conflicts"
	}
	m := New(opts)
	// Timers do not fire (their commands return no message): a test sends
	// their messages by hand.
	m.after = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return func() tea.Msg { return nil } }
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// press sends keys (as typed) to the model and runs the commands they
// return, feeding the resulting messages back, like the program would.
func press(m *Model, keys ...string) {
	for _, k := range keys {
		run(m, keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case " ":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// run updates m with msg and runs the returned commands synchronously
// (timers do not fire in a test model: a test drives them by hand).
func run(m *Model, msg tea.Msg) {
	_, cmd := m.Update(msg)
	drain(m, cmd, 0)
}

func drain(m *Model, cmd tea.Cmd, depth int) {
	if cmd == nil || depth > 5 {
		return
	}
	// Every command is waited for, however long a loaded machine takes
	// (a replay makes a request): taking a slow one for a timer left its
	// message out.
	msg := cmd()
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			drain(m, c, depth+1)
		}
	case tea.QuitMsg:
	default:
		_, next := m.Update(msg)
		drain(m, next, depth+1)
	}
}

// echoGateway serves a Gateway with one route to the echo backend on a
// free port and returns the server and the URL to request.
func echoGateway(t *testing.T) (*emulator.Server, string) {
	t.Helper()
	port := freeport.TCP(t, "127.0.0.1")
	manifest := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: %d}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: web}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
`, port)
	res := testkit.Translate(t, "app.yaml", []byte(manifest), engine.Options{})
	srv := emulator.New(emulator.Config{BindOverride: "127.0.0.1"})
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	if err := srv.Apply(res.Table).Err(); err != nil {
		t.Fatal(err)
	}
	return srv, fmt.Sprintf("http://127.0.0.1:%d", port)
}
