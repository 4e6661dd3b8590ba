package tui

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
)

// defaultTraceLimit is how many traces the Traces view keeps.
const defaultTraceLimit = 1000

// tracesView is the live request list, newest first. It follows the
// newest request unless the user moves away or pauses; enter opens the
// selected request's detail pane.
type tracesView struct {
	viewBase
	tbl     lineTable
	pane    viewport.Model
	limit   int
	entries []traceEntry // oldest first, at most limit
	pending []traceEntry // arrived while paused
	shown   []int        // entries shown, newest first
	rows    []table.Row  // the table's rows, parallel to shown
	follow  bool
	paused  bool
	open    bool // detail pane open
	openID  int  // entry seq shown in the pane
	// visible is set while the list is on screen; off screen, new traces
	// only mark it dirty and the table is rebuilt when it shows again.
	visible, dirty bool
	// selSeq is the selected trace while the table is dirty.
	selSeq int
	seq    int
	// request helpers (clipboard, replay).
	req *requester
}

// traceEntry is a trace with its rendered row and filter text, both
// computed only when needed: under heavy traffic most traces leave the
// list before anyone sees them.
type traceEntry struct {
	seq  int
	t    emulator.Trace
	row  table.Row
	text string
}

func newTracesView(c *common, limit int, req *requester) *tracesView {
	if limit <= 0 {
		limit = defaultTraceLimit
	}
	v := &tracesView{tbl: newLineTable(c.st), pane: viewport.New(0, 0), limit: limit, follow: true, req: req}
	v.viewBase = newViewBase(c, func() {
		sel := v.selectedSeq()
		v.setColumns()
		v.tbl.SetHeight(v.h)
		v.pane.Width, v.pane.Height = v.w, v.h
		for i := range v.entries {
			v.entries[i].row = nil // the columns changed
		}
		v.refresh(sel)
		v.renderPane()
	}, func() {
		v.dirty = false
		v.rebuild()
		v.ensure(0)
		v.tbl.SetCursor(0)
	})
	v.setColumns() // traces may come before the first size
	return v
}

func (v *tracesView) title() string { return "Traces" }

func (v *tracesView) count() int { return len(v.entries) }

func (v *tracesView) position() string {
	var parts []string
	if p := cursorPosition(v.tbl.Cursor(), len(v.shown)); p != "" {
		parts = append(parts, p)
	}
	switch {
	case v.paused:
		parts = append(parts, fmt.Sprintf("paused (%d new)", len(v.pending)))
	case v.follow:
		parts = append(parts, "following")
	}
	return strings.Join(parts, " · ")
}

func (v *tracesView) wide() bool { return v.w >= 140 }

// setColumns lays the columns out for the width.
func (v *tracesView) setColumns() { v.tbl.setLayout(v.w, v.columns()) }

func (v *tracesView) columns() []table.Column {
	if !v.wide() {
		rest := max(30, v.w-8-6-3-8-7)
		host, path := rest*26/100, rest*34/100
		return []table.Column{{Title: "TIME", Width: 8}, {Title: "METHOD", Width: 6}, {Title: "HOST", Width: host},
			{Title: "PATH", Width: path}, {Title: "ROUTE/RULE", Width: rest - host - path}, {Title: "ST", Width: 3}, {Title: "LATENCY", Width: 8}}
	}
	rest := max(60, v.w-12-15-6-3-8-10)
	listener, host, path, rule := rest*16/100, rest*20/100, rest*22/100, rest*20/100
	return []table.Column{{Title: "TIME", Width: 12}, {Title: "CLIENT", Width: 15}, {Title: "LISTENER", Width: listener},
		{Title: "HOST", Width: host}, {Title: "METHOD", Width: 6}, {Title: "PATH", Width: path},
		{Title: "ROUTE/RULE", Width: rule}, {Title: "BACKEND", Width: rest - listener - host - path - rule},
		{Title: "ST", Width: 3}, {Title: "LATENCY", Width: 8}}
}

// cells renders a trace's cells for the current width.
func (v *tracesView) cells(t emulator.Trace) []string {
	status := statusCell(t)
	lat := roundDuration(time.Duration(t.Duration))
	if !v.wide() {
		return []string{t.Time.Format("15:04:05"), methodCell(t), hostCell(t), t.Path, ruleCell(t), status, lat}
	}
	return []string{t.Time.Format("15:04:05.000"), t.Client, listenerCell(t.Listener), hostCell(t), methodCell(t), t.Path,
		ruleCell(t), backendCell(t), status, lat}
}

// ruleCell names the matched rule compactly ("default/app r0.1"), or why
// nothing matched.
func ruleCell(t emulator.Trace) string {
	if t.Rule == "" {
		if idleClose(t) {
			return "· " + t.Reason
		}
		if t.Reason != "" {
			return "✗ " + t.Reason
		}
		return "-"
	}
	if m := t.Matched; m != nil && m.Match >= 0 {
		return m.Route.Namespace + "/" + m.Route.Name + " r" + strconv.Itoa(m.Rule) + "." + strconv.Itoa(m.Match)
	}
	return t.Rule
}

// listenerCell shortens "gateway/ns/gw/listener/http" to "gw/http".
func listenerCell(l string) string {
	parts := strings.Split(l, "/")
	if len(parts) == 5 && parts[3] == "listener" {
		return parts[2] + "/" + parts[4]
	}
	return l
}

func backendCell(t emulator.Trace) string {
	if t.Service == "" {
		return "-"
	}
	if t.Target != "" {
		return t.Service + " (" + t.Target + ")"
	}
	return t.Service
}

// roundDuration prints a latency with three significant digits.
func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(time.Microsecond).String()
	}
	return d.String()
}

func (v *tracesView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case TracesMsg:
		v.add(msg.Traces)
	case tea.KeyMsg:
		return v, v.handleKey(msg)
	}
	return v, nil
}

// add takes a batch of new traces: into the list, or aside while paused.
func (v *tracesView) add(ts []emulator.Trace) {
	if len(ts) > v.limit { // only the newest limit can stay in the list
		v.seq += len(ts) - v.limit
		ts = ts[len(ts)-v.limit:]
	}
	batch := make([]traceEntry, len(ts))
	for i := range ts {
		v.seq++
		batch[i] = traceEntry{seq: v.seq, t: ts[i]}
	}
	if v.paused {
		v.pending = appendLimited(v.pending, batch, v.limit)
		return
	}
	v.insert(batch)
}

// insert adds traces to the list. The table (whose every change renders
// rows) is rebuilt at most once, and only when it is on screen.
func (v *tracesView) insert(batch []traceEntry) {
	if len(batch) == 0 {
		return
	}
	sel := v.selectedSeq()
	v.entries = appendLimited(v.entries, batch, v.limit)
	if !v.visible || v.open {
		v.selSeq, v.dirty = sel, true
		return
	}
	v.refresh(sel)
}

// refresh rebuilds the rows and puts the cursor back on the trace with
// sequence sel (the newest when following).
func (v *tracesView) refresh(sel int) {
	v.dirty = false
	v.rebuild()
	switch {
	case v.follow:
		if v.tbl.Cursor() != 0 {
			v.ensure(0)
			v.tbl.GotoTop()
		}
	case sel != 0:
		v.selectSeq(sel)
	}
}

// setVisible tells the view whether its list is on screen.
func (v *tracesView) setVisible(on bool) {
	v.visible = on
	if on && v.dirty && !v.open {
		v.refresh(v.selSeq)
	}
}

// appendLimited appends b to a and keeps the last limit entries.
func appendLimited(a, b []traceEntry, limit int) []traceEntry {
	a = append(a, b...)
	if len(a) > limit {
		n := copy(a, a[len(a)-limit:])
		a = a[:n]
	}
	return a
}

func traceText(t emulator.Trace) string {
	return strings.ToLower(strings.Join([]string{t.Client, t.Listener, hostCell(t), methodCell(t), t.Path, t.Rule,
		t.Reason, t.Service, t.Target, strconv.Itoa(t.Status)}, " "))
}

// rebuild recomputes the shown rows (newest first) after the entries or
// the filter changed. Only the rows around the cursor get their cells: the
// table renders no others.
func (v *tracesView) rebuild() {
	v.shown = v.shown[:0]
	v.rows = v.rows[:0]
	for i := len(v.entries) - 1; i >= 0; i-- {
		e := &v.entries[i]
		if v.filter != "" {
			if e.text == "" {
				e.text = traceText(e.t)
			}
			if !strings.Contains(e.text, v.filter) {
				continue
			}
		}
		v.shown = append(v.shown, i)
		v.rows = append(v.rows, e.row)
	}
	v.ensure(v.tbl.Cursor())
	v.tbl.SetRows(v.rows)
}

// ensure gives cells to the rows the table renders when its cursor moves
// from where it is to target: a table height either side of both.
func (v *tracesView) ensure(target int) {
	h := max(v.tbl.Height(), v.h, 1)
	lo := max(0, min(v.tbl.Cursor(), target)-h-1)
	hi := min(len(v.rows), max(v.tbl.Cursor(), target)+h+2)
	for j := lo; j < hi; j++ {
		if v.rows[j] == nil {
			e := &v.entries[v.shown[j]]
			e.row = v.tbl.row(v.cells(e.t))
			v.rows[j] = e.row
		}
	}
}

func (v *tracesView) selected() (*traceEntry, bool) {
	switch {
	case v.open:
		return v.entryBySeq(v.openID)
	case v.dirty:
		return v.entryBySeq(v.selSeq)
	}
	c := v.tbl.Cursor()
	if c < 0 || c >= len(v.shown) {
		return nil, false
	}
	return &v.entries[v.shown[c]], true
}

func (v *tracesView) entryBySeq(seq int) (*traceEntry, bool) {
	for i := len(v.entries) - 1; i >= 0; i-- {
		if v.entries[i].seq == seq {
			return &v.entries[i], true
		}
	}
	return nil, false
}

func (v *tracesView) selectedSeq() int {
	if e, ok := v.selected(); ok {
		return e.seq
	}
	return 0
}

func (v *tracesView) selectSeq(seq int) {
	for i, idx := range v.shown {
		if v.entries[idx].seq == seq {
			v.ensure(i)
			v.tbl.SetCursor(i)
			return
		}
	}
}

func (v *tracesView) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := v.keys
	if v.open && scrollViewport(&v.pane, k, msg) {
		return nil
	}
	c, page := v.tbl.Cursor(), max(1, v.h-1)
	switch {
	case key.Matches(msg, k.Up):
		v.ensure(c - 1)
		v.tbl.MoveUp(1)
		v.follow = v.follow && v.tbl.Cursor() == 0
	case key.Matches(msg, k.Down):
		v.ensure(c + 1)
		v.tbl.MoveDown(1)
		v.follow = false
	case key.Matches(msg, k.PageUp):
		v.ensure(c - page)
		v.tbl.MoveUp(page)
	case key.Matches(msg, k.PageDown):
		v.ensure(c + page)
		v.tbl.MoveDown(page)
		v.follow = false
	case key.Matches(msg, k.Top):
		v.ensure(0)
		v.tbl.GotoTop()
		v.follow = true
	case key.Matches(msg, k.Bottom):
		v.ensure(len(v.rows) - 1)
		v.tbl.GotoBottom()
		v.follow = false
	case key.Matches(msg, k.Follow):
		v.follow = !v.follow
		if v.follow {
			v.ensure(0)
			v.tbl.GotoTop()
		}
	case key.Matches(msg, k.Pause):
		v.paused = !v.paused
		if !v.paused {
			p := v.pending
			v.pending = nil
			v.insert(p)
		}
	case key.Matches(msg, k.Enter):
		if e, ok := v.selected(); ok {
			v.open, v.openID = true, e.seq
			v.renderPane()
		}
	case key.Matches(msg, k.Back):
		if v.open {
			v.open = false
			if v.dirty {
				v.refresh(v.openID)
			}
		}
	case key.Matches(msg, k.Copy):
		if e, ok := v.selected(); ok {
			return v.req.copyCurl(e.t, v.s.result())
		}
	case key.Matches(msg, k.Replay):
		if e, ok := v.selected(); ok {
			return v.req.replay(e.t)
		}
	case key.Matches(msg, k.Detail):
		if e, ok := v.selected(); ok && e.t.Route != "" {
			if rk, ok := routeKey(e.t.Route); ok {
				return showObject(rk)
			}
		}
	}
	return nil
}

// routeKey parses a trace's Route ("HTTPRoute/ns/name").
func routeKey(s string) (engine.ObjectKey, bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return engine.ObjectKey{}, false
	}
	return engine.ObjectKey{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, true
}

// renderPane fills the detail pane with the open request.
func (v *tracesView) renderPane() {
	if !v.open {
		return
	}
	e, ok := v.entryBySeq(v.openID)
	if !ok {
		v.open = false // it left the list
		return
	}
	var lines []string
	for _, l := range traceDetail(v.st, e.t, v.w) {
		lines = append(lines, wrapHanging(l, v.w, detailHang)...)
	}
	v.pane.SetContent(strings.Join(lines, "\n"))
	v.pane.GotoTop()
}

func (v *tracesView) View() string {
	if v.open {
		return v.pane.View()
	}
	if len(v.shown) == 0 {
		msg := "No request yet. Send one to a listener, for example:  curl -H 'Host: <hostname>' http://<address>:<port>/"
		if v.filter != "" {
			msg = "No request matches the filter."
		}
		return v.tbl.View() + "\n" + v.st.Dim.Render(msg)
	}
	return v.tbl.View()
}

func (v *tracesView) ShortHelp() []key.Binding {
	if v.open {
		return []key.Binding{v.keys.Back, v.keys.Copy, v.keys.Replay, v.keys.Up, v.keys.Down}
	}
	return []key.Binding{withHelp(v.keys.Enter, "details"), v.keys.Follow, v.keys.Pause, v.keys.Copy, v.keys.Replay}
}

func (v *tracesView) FullHelp() [][]key.Binding {
	k := v.keys
	return [][]key.Binding{k.moves(), {withHelp(k.Enter, "open request details"), withHelp(k.Back, "close details"),
		k.Follow, withHelp(k.Pause, "pause/resume"), k.Copy, withHelp(k.Replay, "replay the request"), withHelp(k.Detail, "route YAML")}}
}

// headerLines renders an http.Header sorted by name.
func headerLines(h http.Header) []string {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sortStable(names, func(a, b string) bool { return a < b })
	var out []string
	for _, n := range names {
		for _, val := range h[n] {
			out = append(out, n+": "+val)
		}
	}
	return out
}

// statusCell is the ST column: the HTTP status, a gRPC failure's code as
// "g" and its number (the HTTP status of a gRPC answer is 200 whatever
// happened), "-" for a connection that carried no request.
func statusCell(t emulator.Trace) string {
	if t.GRPCStatus != "" && t.GRPCStatus != "OK" {
		for c := range grpcCodes {
			if grpcCodes[c] == t.GRPCStatus {
				return "g" + strconv.Itoa(c)
			}
		}
		return "g?"
	}
	if t.Status == 0 {
		return "-"
	}
	return strconv.Itoa(t.Status)
}

// grpcCodes are the gRPC status names by code, as traces spell them.
var grpcCodes = [...]string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
	"Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}

// idleClose reports whether a trace is a connection that closed without
// sending anything (an idle keep-alive or preconnected socket the client
// gave up): worth listing, not a failure.
// rawStream reports whether the trace is a TLS, TCP or UDP stream that
// carried no HTTP request gwdev read (TLS passthrough or Terminate to a
// TLSRoute, TCPRoute, UDPRoute, or a refused handshake).
func rawStream(t emulator.Trace) bool {
	if t.Method != "" {
		return false
	}
	switch {
	case t.Proto == "TCP", t.Proto == "UDP", strings.HasPrefix(t.Proto, "TLS"): // TLS, TLS Terminate, TLS Passthrough
		return true
	case t.Proto == "HTTPS": // a handshake on an HTTPS listener that brought no request
		return t.SNI != "" || t.End != ""
	}
	return false
}

// hostCell is the name a trace was for: the Host header, or for a stream
// the SNI its ClientHello sent.
func hostCell(t emulator.Trace) string {
	if t.Host == "" && rawStream(t) {
		return t.SNI
	}
	return t.Host
}

// methodCell is the request's method, or for a stream its protocol (TLS,
// TCP, UDP).
func methodCell(t emulator.Trace) string {
	if rawStream(t) {
		if t.Proto == "TCP" || t.Proto == "UDP" {
			return t.Proto
		}
		return "TLS"
	}
	return t.Method
}

func idleClose(t emulator.Trace) bool {
	return t.Method == "" && t.Status == 0 && t.BytesIn == 0 && t.End == "" && t.Listener == "" && t.Hint == ""
}
