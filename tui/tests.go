package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/internal/app"
)

// testsView lists the last run of the folder's routing tests gwdev up
// sends (app.TestsState, after each reload): a summary line, the failed
// cases with their failures (app.CaseFailures) first, then the cases that
// passed. It is a tab only once a run arrived (the folder has test files).
type testsView struct {
	viewBase
	vp     viewport.Model
	last   *app.TestsState
	cases  []testsCase
	lines  []string
	heads  []int // the lines where a case starts: the cursor stops there
	cursor int
}

var (
	_ view     = (*testsView)(nil)
	_ optional = (*testsView)(nil)
)

func newTestsView(c *common) *testsView {
	v := &testsView{vp: viewport.New(0, 0)}
	v.viewBase = newPageBase(c, &v.vp, v.rebuild, func() {
		v.cursor = 0
		v.rebuild()
	})
	return v
}

func (v *testsView) available() bool { return v.last != nil }

func (v *testsView) title() string { return "Tests" }

// count is the number of failed cases.
func (v *testsView) count() int {
	n := 0
	for _, c := range v.cases {
		if len(c.failures) > 0 {
			n++
		}
	}
	return n
}

// testsCase is one case of the last run, with its failures (none:
// passed).
type testsCase struct {
	file, name string
	line       int
	failures   []string
}

func (v *testsView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case app.TestsState:
		v.last, v.cases = &msg, nil
		if msg.Run != nil {
			for _, f := range msg.Run.Files {
				for i := range f.Cases {
					c := &f.Cases[i]
					v.cases = append(v.cases, testsCase{file: f.Path, name: c.Name, line: c.Line, failures: app.CaseFailures(f.Path, c)})
				}
			}
		}
		v.rebuild()
	case refreshMsg:
		v.rebuild()
	case tea.KeyMsg:
		if d, ok := v.keys.listMove(msg, max(1, v.h/4), len(v.heads)); ok {
			v.cursor = clamp(v.cursor+d, 0, max(0, len(v.heads)-1))
			v.render()
		}
	}
	return v, nil
}

// rebuild lays the cases out, failed ones first, keeping those that match
// the filter.
func (v *testsView) rebuild() {
	v.lines, v.heads = v.lines[:0], v.heads[:0]
	if v.last == nil {
		v.render()
		return
	}
	keep := func(c testsCase) bool {
		return v.filter == "" || strings.Contains(strings.ToLower(c.file+" "+c.name+" "+strings.Join(c.failures, " ")), v.filter)
	}
	for _, failed := range []bool{true, false} {
		for _, c := range v.cases {
			if (len(c.failures) > 0) != failed || !keep(c) {
				continue
			}
			v.heads = append(v.heads, len(v.lines))
			where := v.st.Dim.Render(fmt.Sprintf("  %s:%d", c.file, c.line))
			if failed {
				v.lines = append(v.lines, v.st.Error.Render("✗ ")+v.st.Bold.Render(c.name)+where)
				for _, f := range c.failures {
					v.lines = append(v.lines, "    "+f)
				}
				continue
			}
			v.lines = append(v.lines, v.st.OK.Render("✓ ")+c.name+where)
		}
	}
	v.cursor = clamp(v.cursor, 0, max(0, len(v.heads)-1))
	v.render()
}

// summary is the view's first line.
func (v *testsView) summary() string {
	m := v.last
	at := v.st.Dim.Render(fmt.Sprintf(" (reload #%d)", m.Reload))
	if m.Reload == 0 {
		at = v.st.Dim.Render(" (first load)")
	}
	if m.Err != nil {
		return v.st.Error.Render("✗ the tests did not run") + at
	}
	failed := v.count()
	if failed == 0 {
		return v.st.OK.Render(fmt.Sprintf("all %s pass", plural(len(v.cases), "case"))) + at
	}
	return v.st.Error.Render(fmt.Sprintf("%d of %s fail", failed, plural(len(v.cases), "case"))) + at
}

// render draws the summary, the errors or the cases, the selected case
// marked and scrolled into view.
func (v *testsView) render() {
	if v.w <= 0 {
		return
	}
	if v.last == nil {
		v.vp.SetContent(v.st.Dim.Render("The folder's routing tests (*.gwtest.yaml) run after each reload."))
		return
	}
	out := append(wrap(v.summary(), v.w), "")
	if v.last.Err != nil {
		for _, l := range strings.Split(v.last.Err.Error(), "\n") {
			out = append(out, "  "+truncate(l, v.w-2))
		}
	}
	if len(v.lines) == 0 && v.filter != "" {
		out = append(out, v.st.Dim.Render("Nothing matches the filter."))
	}
	sel, selLine := -1, 0
	if v.cursor < len(v.heads) {
		sel = v.heads[v.cursor]
	}
	for i, l := range v.lines {
		mark := "  "
		if i == sel {
			mark, selLine = v.st.Cursor.Render("▌ "), len(out)
		}
		out = append(out, mark+truncate(l, v.w-2))
	}
	showLines(&v.vp, out, selLine)
}

func (v *testsView) View() string { return v.vp.View() }

func (v *testsView) ShortHelp() []key.Binding { return []key.Binding{v.keys.Up, v.keys.Down} }

func (v *testsView) FullHelp() [][]key.Binding { return [][]key.Binding{v.keys.moves()} }

func (v *testsView) position() string { return cursorPosition(v.cursor, len(v.heads)) }
