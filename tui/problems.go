package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/engine"
)

// problemSource tells load problems, stale objects and findings apart.
type problemSource int

const (
	fromLoad problemSource = iota
	fromStale
	fromFinding
)

// problem is one line of the Problems view: a load problem, a stale
// object or an engine Finding, with its explanation.
type problem struct {
	source    problemSource
	severity  engine.Severity
	where     string // file:line, "" when unknown
	object    engine.ObjectKey
	scope     string
	condition string
	reason    string
	message   string
	explain   string
	// isNew is set when the previous state did not have this problem.
	isNew bool
}

// id identifies a problem across reloads.
func (p problem) id() string {
	return fmt.Sprint(p.source, "|", p.object, "|", p.scope, "|", p.condition, "|", p.reason, "|", p.message)
}

// text is what the filter matches.
func (p problem) text() string {
	return strings.ToLower(strings.Join([]string{string(p.severity), p.where, p.object.String(), p.scope,
		p.condition, p.reason, p.message}, " "))
}

// buildProblems merges load problems, stale objects and findings, most
// severe first: within a severity, load problems, then stale objects, then
// findings in the engine's order (by source).
func (s *session) buildProblems(prev map[string]bool) {
	var ps []problem
	st := s.state
	u := s.update()
	for _, p := range u.Result.Problems {
		ps = append(ps, problem{source: fromLoad, severity: engine.SeverityError, where: engine.Source{File: p.File, Line: p.Line}.String(),
			object: p.Object, message: p.Message, explain: p.Hint()})
	}
	for _, o := range u.Stale {
		ps = append(ps, problem{source: fromStale, severity: engine.SeverityWarning, where: o.Source.String(),
			object: o.Object, message: "still serving the last good version: " + o.Reason,
			explain: "the object's file no longer loads, so gwdev keeps the version that did. Fix the load error above"})
	}
	s.conflictsWith = map[listenerRef]string{}
	if st.Result != nil {
		for _, f := range st.Result.Findings {
			if f.ConflictsWith != "" {
				s.conflictsWith[listenerRef{f.Object, f.Listener}] = f.ConflictsWith
			}
			p := problem{source: fromFinding, severity: f.Severity, where: f.Source.String(), object: f.Object,
				scope: f.Scope, condition: f.Condition(), reason: f.Reason, message: f.Message}
			p.explain = f.Hint()
			ps = append(ps, p)
		}
	}
	// Stable: keeps the source order inside one severity.
	sortStable(ps, func(a, b problem) bool { return a.severity.Rank() < b.severity.Rank() })
	s.errors, s.warnings, s.infos = 0, 0, 0
	for i := range ps {
		switch ps[i].severity {
		case engine.SeverityError:
			s.errors++
		case engine.SeverityWarning:
			s.warnings++
		default:
			s.infos++
		}
		ps[i].isNew = s.prev != nil && !prev[ps[i].id()]
	}
	s.problems = ps
}

// problemsView lists every problem with its file:line and explanation.
// Enter opens the object in Detail.
type problemsView struct {
	viewBase
	vp      viewport.Model
	shown   []int // indexes into session.problems
	cursor  int
	offsets []int      // first line of each shown problem in the content
	cache   []rendered // each shown problem, rendered without the cursor mark
}

// rendered is a problem in two forms: three truncated lines, and every line
// wrapped for the selected problem.
type rendered struct{ short, full []string }

func newProblemsView(c *common) *problemsView {
	v := &problemsView{vp: viewport.New(0, 0)}
	v.viewBase = newPageBase(c, &v.vp, v.rebuild, func() {
		v.cursor = 0
		v.rebuild()
	})
	return v
}

func (v *problemsView) title() string { return "Problems" }

func (v *problemsView) count() int { return v.s.errors + v.s.warnings }

// rebuild picks the problems that pass the filter and renders them.
func (v *problemsView) rebuild() {
	v.shown, v.cache = v.shown[:0], v.cache[:0]
	for i, p := range v.s.problems {
		if v.filter == "" || strings.Contains(p.text(), v.filter) {
			v.shown = append(v.shown, i)
			if v.w > 0 {
				v.cache = append(v.cache, v.entry(p))
			}
		}
	}
	v.cursor = clamp(v.cursor, 0, len(v.shown)-1)
	v.render()
}

func (v *problemsView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case refreshMsg:
		v.rebuild()
	case tea.KeyMsg:
		return v, v.handleKey(msg)
	}
	return v, nil
}

func (v *problemsView) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := v.keys
	if d, ok := k.listMove(msg, max(1, v.h/3), len(v.shown)); ok {
		v.move(d)
		return nil
	}
	if key.Matches(msg, k.Enter) || key.Matches(msg, k.Detail) {
		if p, ok := v.selected(); ok && p.object.Name != "" {
			return showObject(p.object)
		}
	}
	return nil
}

func (v *problemsView) move(n int) {
	v.cursor = clamp(v.cursor+n, 0, len(v.shown)-1)
	v.render()
}

func (v *problemsView) selected() (problem, bool) {
	if v.cursor < 0 || v.cursor >= len(v.shown) {
		return problem{}, false
	}
	return v.s.problems[v.shown[v.cursor]], true
}

// render joins the rendered problems, marks the cursor and scrolls it
// into view.
func (v *problemsView) render() {
	if v.w <= 0 || len(v.cache) != len(v.shown) {
		return
	}
	var b strings.Builder
	v.offsets = v.offsets[:0]
	line := 0
	if len(v.shown) == 0 {
		msg := "✓ No problems: every object loaded, is accepted and resolved."
		if v.filter != "" {
			msg = "No problem matches the filter."
		} else if v.s.state == nil {
			msg = "Loading…"
		}
		v.vp.SetContent(v.st.OK.Render(msg))
		return
	}
	mark := v.st.Cursor.Render("▌ ")
	for i, r := range v.cache {
		v.offsets = append(v.offsets, line)
		lines := r.short
		if i == v.cursor {
			lines = r.full
		}
		for _, l := range lines {
			if i == v.cursor {
				b.WriteString(mark)
			} else {
				b.WriteString("  ")
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
		line += len(lines)
	}
	v.vp.SetContent(strings.TrimSuffix(b.String(), "\n"))
	v.scrollToCursor(line)
}

func (v *problemsView) scrollToCursor(total int) {
	if len(v.offsets) == 0 {
		return
	}
	top := v.offsets[v.cursor]
	bottom := total
	if v.cursor+1 < len(v.offsets) {
		bottom = v.offsets[v.cursor+1]
	}
	switch {
	case top < v.vp.YOffset:
		v.vp.SetYOffset(top)
	case bottom > v.vp.YOffset+v.vp.Height:
		v.vp.SetYOffset(min(top, bottom-v.vp.Height))
	}
}

// entry renders one problem: a head line (mark, severity, file:line,
// object, scope), the condition and message, and the explanation.
func (v *problemsView) entry(p problem) rendered {
	st := v.st
	mark, sevStyle := "✗", st.Error
	switch p.severity {
	case engine.SeverityWarning:
		mark, sevStyle = "!", st.Warning
	case engine.SeverityInfo:
		mark, sevStyle = "i", st.Info
	}
	where := p.where
	if where == "" {
		where = "-"
	}
	head := sevStyle.Render(mark+" "+string(p.severity)) + "  " + st.Bold.Render(where)
	if p.object.Kind != "" {
		head += "  " + p.object.String()
	}
	if p.scope != "" {
		head += "  " + st.Dim.Render(p.scope)
	}
	if p.isNew && v.s.flashing {
		head += " " + st.Changed.Render("new")
	}
	what := p.message
	if p.condition != "" {
		what = sevStyle.Render(p.condition+" "+p.reason) + ": " + p.message
	}
	explain := ""
	if p.explain != "" {
		explain = st.Dim.Render("→ " + p.explain)
	}
	width := v.w - 4 // cursor mark and indent
	r := rendered{short: []string{truncate(head, v.w-2), "  " + truncate(what, width)}}
	if explain != "" {
		r.short = append(r.short, "  "+truncate(explain, width))
	}
	for i, l := range wrap(head, v.w-2) {
		if i > 0 {
			l = "  " + l
		}
		r.full = append(r.full, l)
	}
	for _, l := range wrap(what, width) {
		r.full = append(r.full, "  "+l)
	}
	if explain != "" {
		for _, l := range wrap(explain, width) {
			r.full = append(r.full, "  "+l)
		}
	}
	return r
}

func (v *problemsView) View() string { return v.vp.View() }

func (v *problemsView) ShortHelp() []key.Binding {
	return []key.Binding{v.keys.Up, v.keys.Down, withHelp(v.keys.Enter, "object YAML")}
}

func (v *problemsView) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.keys.moves(), {withHelp(v.keys.Enter, "open the object in Detail")}}
}

func (v *problemsView) position() string { return cursorPosition(v.cursor, len(v.shown)) }
