package tui

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/watch"
)

func TestSwitchViews(t *testing.T) {
	m := newTestModel(80, 24, Options{})
	run(m, sampleState(t, "conflicts"))
	for _, c := range []struct {
		key  string
		want int
	}{{"2", viewRoutes}, {"3", viewProblems}, {"4", viewTraces}, {"5", viewDetail}, {"6", viewGraph}, {"1", viewOverview},
		{"tab", viewRoutes}, {"tab", viewProblems}, {"shift+tab", viewRoutes}, {"shift+tab", viewOverview},
		{"shift+tab", viewGraph}, {"tab", viewOverview}} {
		press(m, c.key)
		if m.active != c.want {
			t.Fatalf("after %q: active view %d, want %d", c.key, m.active, c.want)
		}
	}
	press(m, "?")
	if !m.showHelp || !strings.Contains(m.View(), "Keys") {
		t.Fatalf("? does not show the help:\n%s", m.View())
	}
	press(m, "?")
	if m.showHelp {
		t.Fatal("? does not close the help")
	}
	press(m, "?", "esc")
	if m.showHelp {
		t.Fatal("esc does not close the help")
	}
}

func TestQuit(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		m := newTestModel(80, 24, Options{})
		_, cmd := m.Update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s does not quit", k)
		}
	}
}

func TestFilter(t *testing.T) {
	m := newTestModel(80, 24, Options{})
	run(m, sampleState(t, "conflicts"))
	press(m, "2")
	rv := m.views[viewRoutes].(*routesView)
	if len(rv.rows) != 2 {
		t.Fatalf("routes: %d rows, want 2", len(rv.rows))
	}
	press(m, "/", "d", "o", "c", "s")
	if !m.filtering || len(rv.rows) != 1 || rv.rows[0].route.key.Name != "docs" {
		t.Fatalf("typing a filter: filtering=%v rows=%d", m.filtering, len(rv.rows))
	}
	press(m, "3") // typed into the filter, not a view switch
	if m.active != viewRoutes || m.filter.Value() != "docs3" {
		t.Fatalf("a digit while filtering: active=%d filter=%q", m.active, m.filter.Value())
	}
	press(m, "esc")
	if m.filtering || rv.filterText() != "" || len(rv.rows) != 2 {
		t.Fatalf("esc does not clear the filter: %q, %d rows", rv.filterText(), len(rv.rows))
	}
	press(m, "/", "b", "l", "o", "g", "enter")
	if m.filtering || rv.filterText() != "blog" || len(rv.rows) != 1 {
		t.Fatalf("enter does not keep the filter: %q, %d rows", rv.filterText(), len(rv.rows))
	}
	if !strings.Contains(m.View(), "/blog") {
		t.Errorf("the kept filter is not shown in the status line:\n%s", m.View())
	}
	// Each view has its own filter.
	press(m, "3")
	if pv := m.views[viewProblems].(*problemsView); pv.filterText() != "" || len(pv.shown) != 9 {
		t.Errorf("problems filtered by the routes filter: %q, %d shown", pv.filterText(), len(pv.shown))
	}
	press(m, "/", "p", "l", "a", "i", "n", "enter")
	if pv := m.views[viewProblems].(*problemsView); len(pv.shown) != 3 {
		t.Errorf("problems matching plain: %d, want 3 (both sides of its conflict and the Gateway's ListenersNotValid)", len(pv.shown))
	}
}

func TestProblemsOrderAndOpen(t *testing.T) {
	m := newTestModel(80, 24, Options{})
	st := sampleState(t, "conflicts")
	st.Update.Result.Problems = []watch.Problem{{File: "samples/conflicts/extra.yaml", Line: 3, Message: "yaml: line 3: did not find expected key",
		Kind: watch.ProblemYAML}}
	st.Update.Stale = []watch.StaleObject{{Object: engine.ObjectKey{Kind: "Service", Namespace: "default", Name: "old"},
		Source: engine.Source{File: "samples/conflicts/extra.yaml", Line: 1}, Reason: "yaml: line 3"}}
	run(m, st)
	ps := m.c.s.problems
	if ps[0].source != fromLoad {
		t.Fatalf("first problem is not the load problem: %+v", ps[0])
	}
	last := -1
	for i, p := range ps {
		r := p.severity.Rank()
		if r < last {
			t.Fatalf("problem %d (%s) after a less severe one", i, p.severity)
		}
		last = r
		if p.explain == "" {
			t.Errorf("problem %d has no explanation: %+v", i, p)
		}
	}
	if m.c.s.errors != 8 || m.c.s.warnings != 2 {
		t.Errorf("errors=%d warnings=%d, want 8 and 2", m.c.s.errors, m.c.s.warnings)
	}
	press(m, "3", "down")
	pv := m.views[viewProblems].(*problemsView)
	if pv.cursor != 1 {
		t.Fatalf("cursor %d after down", pv.cursor)
	}
	if v := m.View(); !strings.Contains(v, "samples/conflicts/extra.yaml:3") || !strings.Contains(v, "not valid YAML") {
		t.Fatalf("the load problem is not shown with file:line and explanation:\n%s", v)
	}
	press(m, "enter")
	if m.active != viewDetail {
		t.Fatalf("enter on a problem: active %d, want Detail", m.active)
	}
	if dv := m.views[viewDetail].(*detailView); dv.current.Name != "shared" {
		t.Fatalf("Detail shows %v, want the Gateway of the problem", dv.current)
	}
}

// changedState is the conflicts sample after an edit: the docs route asks
// for blog.example.com, so it is accepted now.
func changedState(t *testing.T, st *app.State) *app.State {
	t.Helper()
	snap := loadSample(t, "conflicts").Snapshot
	for _, r := range snap.HTTPRoutes {
		if r.Name == "docs" {
			r.Spec.Hostnames = []gwv1.Hostname{"blog.example.com"}
		}
	}
	next, u := *st, *st.Update
	next.Update = &u
	next.Result = engine.Translate(snap, engine.Options{Now: metav1.NewTime(fixedNow.Add(time.Minute))})
	next.Reload, u.Changed, next.Time = st.Reload+1, []string{"samples/conflicts/routes.yaml"}, fixedNow.Add(time.Minute)
	return &next
}

func TestReloadHighlightsWhatChanged(t *testing.T) {
	m := newTestModel(120, 30, Options{})
	st := sampleState(t, "conflicts")
	run(m, st)
	if m.c.s.flashing {
		t.Fatal("the first load is highlighted")
	}
	// The same state again (new lastTransitionTime only): nothing changed.
	same := st
	same.Result = engine.Translate(loadSample(t, "conflicts").Snapshot,
		engine.Options{Now: metav1.NewTime(fixedNow.Add(time.Hour))})
	same.Reload = 1
	run(m, same)
	if len(m.c.s.changed) != 0 {
		t.Fatalf("changed after a reload that changed nothing: %v", m.c.s.changed)
	}
	next := changedState(t, same)
	_, cmd := m.Update(next)
	s := m.c.s
	docs := engine.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: "docs"}
	if !s.flashing || !s.changed[docs] || len(s.changed) != 2 {
		t.Fatalf("flashing=%v changed=%v, want the docs route and its Gateway (attached routes)", s.flashing, s.changed)
	}
	if cmd == nil {
		t.Fatal("no command to end the highlight")
	}
	press(m, "2")
	v := m.View()
	if !strings.Contains(v, "✱") || !strings.Contains(v, "reloaded samples/conflicts/routes.yaml: 2 objects changed") {
		t.Fatalf("the change is not highlighted:\n%s", v)
	}
	run(m, flashDoneMsg{gen: s.flashGen - 1}) // a stale timer
	if !s.flashing {
		t.Fatal("a stale timer ended the highlight")
	}
	run(m, flashDoneMsg{gen: s.flashGen})
	if s.flashing || strings.Contains(m.View(), "✱") {
		t.Fatal("the highlight does not end")
	}
	// Detail diffs the route's status with the previous reload.
	run(m, showObjectMsg{key: docs})
	v = m.View()
	for _, want := range []string{"Status since the previous reload:", "-       reason: NoMatchingListenerHostname", "+       reason: Accepted",
		`-       status: "False"`, `+       status: "True"`} {
		if !strings.Contains(v, want) {
			t.Errorf("Detail lacks %q:\n%s", want, v)
		}
	}
}

func TestRoutesExpand(t *testing.T) {
	m := newTestModel(100, 30, Options{})
	run(m, sampleState(t, "conflicts"))
	press(m, "2", "enter")
	v := m.View()
	for _, want := range []string{"rule 0 · match 0", "PathPrefix /", "Service default/blog:80 weight 1 → echo"} {
		if !strings.Contains(v, want) {
			t.Errorf("expanded route lacks %q:\n%s", want, v)
		}
	}
	press(m, "down")
	if v := m.View(); !strings.Contains(v, "NoMatchingListenerHostname: no route hostname") || !strings.Contains(v, "not in the routing table") {
		t.Errorf("the rejected route's detail does not say why:\n%s", v)
	}
	press(m, "esc")
	if m.views[viewRoutes].(*routesView).expanded {
		t.Error("esc does not collapse")
	}
	press(m, "d")
	if m.active != viewDetail || m.views[viewDetail].(*detailView).current.Name != "docs" {
		t.Error("d does not open the route in Detail")
	}
}

func TestTracesFollowPauseAndSelection(t *testing.T) {
	m := newTestModel(80, 24, Options{})
	run(m, sampleState(t, "conflicts"))
	press(m, "4")
	tv := m.views[viewTraces].(*tracesView)
	ts := sampleTraces(10)
	run(m, TracesMsg{Traces: ts[:5]})
	if len(tv.shown) != 5 || tv.tbl.Cursor() != 0 || !tv.follow {
		t.Fatalf("after 5 traces: shown=%d cursor=%d follow=%v", len(tv.shown), tv.tbl.Cursor(), tv.follow)
	}
	if e, _ := tv.selected(); e.t.Path != ts[4].Path {
		t.Fatalf("newest first: selected %s, want %s", e.t.Path, ts[4].Path)
	}
	press(m, "down", "down") // stop following; keep the selection as traces arrive
	sel, _ := tv.selected()
	want := sel.t.Path
	run(m, TracesMsg{Traces: ts[5:7]})
	if tv.follow {
		t.Fatal("still following after moving down")
	}
	if e, _ := tv.selected(); e.t.Path != want {
		t.Fatalf("selection moved to %s, want %s", e.t.Path, want)
	}
	press(m, "f")
	if e, _ := tv.selected(); !tv.follow || e.t.Path != ts[6].Path {
		t.Fatal("f does not follow the newest again")
	}
	press(m, "p")
	run(m, TracesMsg{Traces: ts[7:]})
	if len(tv.shown) != 7 || len(tv.pending) != 3 || !strings.Contains(m.View(), "paused (3 new)") {
		t.Fatalf("paused: shown=%d pending=%d", len(tv.shown), len(tv.pending))
	}
	press(m, "p")
	if len(tv.shown) != 10 || len(tv.pending) != 0 {
		t.Fatalf("resumed: shown=%d pending=%d", len(tv.shown), len(tv.pending))
	}
	if got := m.c.s.traces; got != 10 {
		t.Errorf("session counted %d traces, want 10", got)
	}
	if r := m.c.s.rate.perSecond(fixedNow); r <= 0 {
		t.Errorf("rate %v, want > 0", r)
	}
}

func TestTraceLimit(t *testing.T) {
	m := newTestModel(80, 24, Options{TraceLimit: 4})
	run(m, TracesMsg{Traces: sampleTraces(10), Trimmed: 90})
	if m.c.s.traces != 100 || m.c.s.rate.perSecond(fixedNow) != 100.0/rateWindow {
		t.Errorf("trimmed traces are not counted: %d traces, %.1f req/s", m.c.s.traces, m.c.s.rate.perSecond(fixedNow))
	}
	tv := m.views[viewTraces].(*tracesView)
	if len(tv.entries) != 4 || tv.entries[3].t.Path != "/posts/9" && tv.entries[3].t.Host != "docs.example.com" {
		t.Fatalf("kept %d traces, want the newest 4", len(tv.entries))
	}
}

func TestTraceDetailAndCopy(t *testing.T) {
	var clip bytes.Buffer
	m := newTestModel(80, 40, Options{Clipboard: &clip})
	run(m, TracesMsg{Traces: sampleTraces(3)})
	press(m, "4", "down", "enter")
	v := m.View()
	for _, want := range []string{"GET blog.example.com/posts/1", "Decision", "rule      httproute/default/blog/rule/0/match/0",
		"backend", "Timings", "Request headers", "Authorization: [redacted]"} {
		if !strings.Contains(v, want) {
			t.Errorf("trace detail lacks %q", want)
		}
	}
	// New traces do not change the request the pane shows.
	run(m, TracesMsg{Traces: sampleTraces(2)})
	press(m, "c")
	got := clip.String()
	if !strings.HasPrefix(got, "\x1b]52;c;") {
		t.Fatalf("clipboard got %q, want an OSC 52 sequence", got)
	}
	payload := strings.TrimSuffix(strings.TrimPrefix(got, "\x1b]52;c;"), "\a")
	cmd, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	want := "curl -i http://127.0.0.1:8080/posts/1 -H 'Host: blog.example.com' -H 'Accept: */*' -H 'User-Agent: curl/8.5.0'"
	if string(cmd) != want {
		t.Fatalf("copied %q, want %q", cmd, want)
	}
	// OSC 52 gets no answer: the status line does not claim it worked.
	if s := m.status.text; !strings.HasPrefix(s, want+"   ← sent to the clipboard via OSC 52 (unconfirmed)") || strings.Contains(s, "copied") {
		t.Errorf("the status line should show the command, then say it was sent, not copied:\n%s", s)
	}
	press(m, "esc")
	if m.views[viewTraces].(*tracesView).open {
		t.Error("esc does not close the pane")
	}
}

func TestReplay(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	tr := sampleTraces(1)[0]
	tr.Address = strings.TrimPrefix(srv.URL, "http://")
	tr.Method = http.MethodDelete
	m := newTestModel(80, 24, Options{})
	run(m, TracesMsg{Traces: []emulator.Trace{tr}})
	press(m, "4", "r")
	select {
	case r := <-got:
		if r.Host != "blog.example.com" || r.Method != http.MethodDelete || r.URL.Path != "/posts/0" ||
			r.Header.Get("Accept") != "*/*" || r.Header.Get("Authorization") != "" {
			t.Errorf("replayed %s %s %s headers %v", r.Method, r.Host, r.URL, r.Header)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request was not replayed")
	}
	if v := m.View(); !strings.Contains(v, "replayed DELETE blog.example.com/posts/0 → 418") {
		t.Errorf("status line after replay:\n%s", v)
	}
}

func TestCurlQuoting(t *testing.T) {
	tr := emulator.Trace{Address: "127.0.0.2:80", Host: "a.example.com", Method: "POST", Path: "/q?x=1&y='2'",
		RequestHeaders: http.Header{"X-Note": {"it's"}, "Content-Length": {"3"}}}
	got, _, err := commandLine(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := `curl -i -X POST 'http://127.0.0.2:80/q?x=1&y='\''2'\''' -H 'Host: a.example.com' -H 'X-Note: it'\''s'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, _, err := commandLine(emulator.Trace{}); err == nil {
		t.Error("a trace without address gives a command")
	}
}

func TestDetailCyclesObjects(t *testing.T) {
	m := newTestModel(80, 24, Options{})
	run(m, sampleState(t, "conflicts"))
	press(m, "5")
	dv := m.views[viewDetail].(*detailView)
	first := dv.current
	press(m, "]")
	if dv.current == first || dv.pos != 1 {
		t.Fatalf("] stays on %v", dv.current)
	}
	press(m, "[", "[")
	if dv.pos != len(dv.cycle)-1 {
		t.Fatalf("[ from the first object goes to %d, want the last", dv.pos)
	}
	press(m, "/", "d", "o", "c", "s", "enter")
	if dv.current.Name != "docs" || len(dv.cycle) != 1 {
		t.Fatalf("filter: current %v, %d objects", dv.current, len(dv.cycle))
	}
}

func TestSecretsRedacted(t *testing.T) {
	st := sampleState(t, "https")
	m := newTestModel(120, 60, Options{})
	run(m, st)
	run(m, showObjectMsg{key: engine.ObjectKey{Kind: "Secret", Namespace: "default", Name: "app-cert"}})
	v := m.View()
	if !strings.Contains(v, "tls.key: <redacted> (") || strings.Contains(v, "PRIVATE KEY") || strings.Contains(v, "LS0t") {
		t.Fatalf("the Secret is not redacted:\n%s", v)
	}
}

func TestStateBeforeSize(t *testing.T) {
	m := New(Options{Renderer: plainRenderer()})
	run(m, sampleState(t, "conflicts"))
	run(m, TracesMsg{Traces: sampleTraces(3)})
	run(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	if !strings.Contains(m.View(), "Gateway default/shared") {
		t.Fatal("a state that came before the size is not shown")
	}
}

// TestFrameFits checks that every view fills exactly the terminal, from
// 80×24 up, so that the renderer never scrolls or wraps.
func TestFrameFits(t *testing.T) {
	st := sampleState(t, "conflicts")
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 40}, {160, 48}, {60, 15}} {
		m := newTestModel(size[0], size[1], Options{})
		run(m, st)
		run(m, TracesMsg{Traces: sampleTraces(40)})
		for _, keys := range [][]string{{"1"}, {"2"}, {"2", "enter"}, {"3"}, {"4"}, {"4", "enter"}, {"5"}, {"?"}, {"1", "/", "x"}} {
			press(m, "esc", "esc")
			press(m, keys...)
			lines := strings.Split(m.View(), "\n")
			if len(lines) != size[1] {
				t.Errorf("%dx%d %v: %d lines", size[0], size[1], keys, len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w != size[0] {
					t.Errorf("%dx%d %v: line %d is %d wide: %q", size[0], size[1], keys, i, w, l)
					break
				}
			}
		}
	}
}

func TestNoColor(t *testing.T) {
	m := New(Options{Renderer: NewRenderer(&bytes.Buffer{}, true), NoColor: true, Now: func() time.Time { return fixedNow }})
	run(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	run(m, sampleState(t, "conflicts"))
	run(m, TracesMsg{Traces: sampleTraces(5)})
	for _, k := range []string{"1", "2", "3", "4", "5"} {
		press(m, k)
		v := m.View()
		for _, sgr := range []string{"[3", "[4", "[9", ";3", ";4", "38;", "48;"} {
			if i := strings.Index(v, "\x1b"+sgr); i >= 0 || strings.Contains(v, "\x1b[0;"+sgr[1:]) {
				t.Fatalf("view %s has a colour sequence %q with NO_COLOR", k, sgr)
			}
		}
		if k != "1" && !strings.Contains(v, "\x1b[7m") {
			t.Errorf("view %s: no reverse video for the selection", k)
		}
	}
	// Without NO_COLOR the same renderer profile colours things.
	r := NewRenderer(&bytes.Buffer{}, true)
	if got := newStyles(r, false).Error.Render("x"); !strings.Contains(got, "\x1b[") {
		t.Errorf("colour styles render %q", got)
	}
}

func TestWatchErrorAndNotice(t *testing.T) {
	m := newTestModel(80, 24, Options{})
	run(m, NoticeMsg{Text: "backends from gwdev.yaml"})
	if !strings.Contains(m.View(), "backends from gwdev.yaml") {
		t.Error("notice not shown")
	}
	run(m, WatchErrorMsg{Err: errTest("too many open files")})
	if !strings.Contains(m.View(), "watch: too many open files") {
		t.Error("watch error not shown")
	}
	run(m, statusExpiredMsg{gen: m.statusGen})
	if strings.Contains(m.View(), "too many open files") {
		t.Error("status does not expire")
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestResizeKeepsTraceSelection(t *testing.T) {
	m := newTestModel(80, 24, Options{})
	run(m, TracesMsg{Traces: sampleTraces(20)})
	press(m, "4", "down", "down", "down")
	tv := m.views[viewTraces].(*tracesView)
	want, _ := tv.selected()
	run(m, tea.WindowSizeMsg{Width: 160, Height: 48})
	got, ok := tv.selected()
	if !ok || got.seq != want.seq {
		t.Fatalf("after a resize the selection moved from %d to %v", want.seq, got)
	}
	if v := m.View(); !strings.Contains(v, got.t.Client) {
		t.Errorf("the wide layout does not show the client column:\n%s", v)
	}
}

// TestObjectsListImplementationPolicies checks that the Objects view lists
// what `gwdev check -o yaml` lists, implementation policies included, and
// that a reload changing only lastTransitionTime does not mark them changed.
func TestObjectsListImplementationPolicies(t *testing.T) {
	m := newTestModel(120, 30, Options{})
	st := sampleState(t, "gwin")
	run(m, st)
	var want []engine.ObjectKey
	st.Result.Objects.Each(func(k engine.ObjectKey, _ metav1.Object) { want = append(want, k) })
	var got []engine.ObjectKey
	policies := 0
	for _, o := range m.c.s.objects {
		got = append(got, o.key)
		if strings.HasSuffix(o.key.Kind, "Policy") && o.key.Kind != "BackendTLSPolicy" {
			policies++
			if o.apiVersion != "gwin.yandex.cloud/v1" {
				t.Errorf("%s: apiVersion %q", o.key, o.apiVersion)
			}
		}
	}
	if !slices.Equal(got, want) || policies == 0 {
		t.Fatalf("objects %v (%d policies), want %v", got, policies, want)
	}
	same := st
	same.Result = engine.Translate(loadSample(t, "gwin").Snapshot, engine.Options{Now: metav1.NewTime(fixedNow.Add(time.Hour))})
	same.Reload = 1
	run(m, same)
	if len(m.c.s.changed) != 0 {
		t.Fatalf("changed after a reload that changed nothing: %v", m.c.s.changed)
	}
}
