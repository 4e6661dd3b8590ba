package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/dash"
	"github.com/gwdev/gwdev/internal/report"
)

// migrationView lists the last comparison gwdev up sends (app.MigrationState:
// the folder's Ingresses, served as ingress-nginx would, against their
// Gateway API conversion, what `gwdev migrate --compare` prints): a summary line, every
// difference with both sides' rules, the converted manifests' problems,
// then what was not carried over. It is a tab only when the folder has
// Ingresses (or a comparison arrived). Enter opens a line's Ingress in
// Detail; the filter keeps the matching entries.
type migrationView struct {
	viewBase
	vp     viewport.Model
	last   *app.MigrationState
	ran    bool // a comparison is running
	lines  []migrationLine
	cursor int
}

// migrationLine is one drawn line and the Ingress it is about.
type migrationLine struct {
	text   string
	object engine.ObjectKey
	// head is set on an entry's first line: the cursor stops there.
	head bool
}

var _ view = (*migrationView)(nil)

func newMigrationView(c *common) *migrationView {
	v := &migrationView{vp: viewport.New(0, 0)}
	v.viewBase = newPageBase(c, &v.vp, v.rebuild, func() {
		v.cursor = 0
		v.rebuild()
	})
	return v
}

// available reports whether the view is a tab: the folder has Ingresses,
// or a comparison arrived.
func (v *migrationView) available() bool {
	if v.last != nil || v.ran {
		return true
	}
	st := v.s.state
	return st != nil && st.Result != nil && st.Result.Objects != nil && len(st.Result.Objects.Ingresses) > 0
}

func (v *migrationView) title() string { return "Migration" }

func (v *migrationView) count() int {
	if v.last == nil || v.last.Comparison == nil {
		return 0
	}
	return len(v.last.Comparison.Differences)
}

func (v *migrationView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case app.MigrationState:
		if v.ran = msg.Running; !msg.Running {
			v.last = &msg
		}
		v.rebuild()
	case refreshMsg:
		v.rebuild()
	case tea.KeyMsg:
		return v, v.handleKey(msg)
	}
	return v, nil
}

// rebuild lays the last comparison out in lines, keeping the entries that
// match the filter.
func (v *migrationView) rebuild() {
	v.lines = v.lines[:0]
	if v.last == nil || v.last.Comparison == nil {
		v.render()
		return
	}
	c := v.last.Comparison
	keep := func(parts ...string) bool {
		return v.filter == "" || strings.Contains(strings.ToLower(strings.Join(parts, " ")), v.filter)
	}
	for _, d := range c.Differences {
		var words []string
		for _, f := range d.Fields {
			words = append(words, f, d.Ingress.Field(f), d.Gateway.Field(f))
		}
		request, from, ing := d.RequestLine(), d.Request.From.String(), d.Request.Ingress
		if !keep(append(words, request, from, d.Ingress.Rule, d.Gateway.Rule, d.Ingress.Source, d.Gateway.Source)...) {
			continue
		}
		v.add(true, ing, v.st.Bold.Render(request)+v.st.Dim.Render("  from "+from))
		for _, f := range d.Fields {
			v.add(false, ing, fmt.Sprintf("    %-9s %s %s  %s %s", f, v.st.Dim.Render("ingress-nginx"), dash.Quoted(d.Ingress.Field(f)),
				v.st.Dim.Render("gateway-api"), dash.Quoted(d.Gateway.Field(f))))
		}
		v.add(false, ing, v.st.Dim.Render(fmt.Sprintf("    %-9s ingress-nginx %s (%s)", "rule", dash.Or(d.Ingress.Rule), dash.Or(d.Ingress.Source))))
		v.add(false, ing, v.st.Dim.Render(fmt.Sprintf("    %-9s gateway-api   %s (%s)", "", dash.Or(d.Gateway.Rule), dash.Or(d.Gateway.Source))))
	}
	if c.Converted != nil {
		for _, p := range c.Converted.Problems {
			if text := p.String(); keep(text) {
				v.add(true, engine.ObjectKey{}, v.st.Error.Render("✗ converted manifests: ")+text)
			}
		}
	}
	for _, d := range report.UniqueDropped(c.Dropped) {
		if keep(d.Ingress.String(), d.Source.String(), d.What, d.Why) {
			v.add(true, d.Ingress, v.st.Warning.Render("! not carried over: ")+d.What+v.st.Dim.Render("  "+d.Source.String()+" "+d.Ingress.String()))
			v.add(false, d.Ingress, v.st.Dim.Render("    "+d.Why))
		}
	}
	v.cursor = clamp(v.cursor, 0, max(0, len(v.heads())-1))
	v.render()
}

func (v *migrationView) add(head bool, k engine.ObjectKey, text string) {
	v.lines = append(v.lines, migrationLine{text: text, object: k, head: head})
}

// heads are the indexes of the entries' first lines.
func (v *migrationView) heads() []int {
	var out []int
	for i, l := range v.lines {
		if l.head {
			out = append(out, i)
		}
	}
	return out
}

// summary is the view's first line.
func (v *migrationView) summary() string {
	m := v.last
	if m.Err != nil || m.Comparison == nil {
		err := "no comparison"
		if m.Err != nil {
			err = m.Err.Error()
		}
		return v.st.Error.Render("✗ comparison failed: " + err)
	}
	c := m.Comparison
	s := fmt.Sprintf("%d requests to ingress-nginx (emulated) and the converted Gateway API routes · ", c.Requests)
	switch len(c.Differences) {
	case 0:
		s += v.st.OK.Render("none differ")
	default:
		s += v.st.Error.Render(plural(len(c.Differences), "difference"))
	}
	if n := len(report.UniqueDropped(c.Dropped)); n > 0 {
		s += " · " + v.st.Warning.Render(fmt.Sprintf("%d not carried over", n))
	}
	if n := len(c.Kept); n > 0 {
		s += " · the folder's own version of " + plural(n, "converted object")
	}
	if c.LeftOut > 0 {
		s += " · " + v.st.Warning.Render(fmt.Sprintf("%d requests not sent", c.LeftOut))
	}
	if m.Reload == 0 {
		s += v.st.Dim.Render(" (first load)")
	} else {
		s += v.st.Dim.Render(fmt.Sprintf(" (reload #%d)", m.Reload))
	}
	if v.ran {
		s += v.st.Dim.Render(" · comparing again…")
	}
	return s
}

func (v *migrationView) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := v.keys
	heads := v.heads()
	if d, ok := k.listMove(msg, max(1, v.h/4), len(heads)); ok {
		v.move(d)
		return nil
	}
	if key.Matches(msg, k.Enter) || key.Matches(msg, k.Detail) {
		if v.cursor < len(heads) {
			if o := v.lines[heads[v.cursor]].object; o.Name != "" {
				return showObject(o)
			}
		}
	}
	return nil
}

func (v *migrationView) move(n int) {
	v.cursor = clamp(v.cursor+n, 0, max(0, len(v.heads())-1))
	v.render()
}

// render draws the summary and the lines, the selected entry marked, and
// scrolls it into view.
func (v *migrationView) render() {
	if v.w <= 0 {
		return
	}
	if v.last == nil {
		msg := "No Ingress in the folder: nothing to migrate."
		switch {
		case v.ran:
			msg = "Comparing the Ingresses with their Gateway API conversion (gwdev migrate --compare)…"
		case v.available():
			msg = "The comparison with the Gateway API conversion runs after each reload."
		}
		v.vp.SetContent(v.st.Dim.Render(msg))
		return
	}
	out := append(wrap(v.summary(), v.w), "")
	if len(v.lines) == 0 && v.filter != "" {
		out = append(out, v.st.Dim.Render("Nothing matches the filter."))
	}
	heads := v.heads()
	sel, selLine := -1, 0
	if v.cursor < len(heads) {
		sel = heads[v.cursor]
	}
	for i, l := range v.lines {
		mark := "  "
		if i == sel {
			mark, selLine = v.st.Cursor.Render("▌ "), len(out)
		}
		out = append(out, mark+truncate(l.text, v.w-2))
	}
	showLines(&v.vp, out, selLine)
}

func (v *migrationView) View() string { return v.vp.View() }

func (v *migrationView) ShortHelp() []key.Binding {
	return []key.Binding{v.keys.Up, v.keys.Down, withHelp(v.keys.Enter, "Ingress YAML")}
}

func (v *migrationView) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.keys.moves(), {withHelp(v.keys.Enter, "open the entry's Ingress in Detail")}}
}

func (v *migrationView) position() string { return cursorPosition(v.cursor, len(v.heads())) }

// showLines puts lines in vp and scrolls it so that line sel is in view:
// the list views' (Migration, Tests) one scrolling rule.
func showLines(vp *viewport.Model, lines []string, sel int) {
	vp.SetContent(strings.Join(lines, "\n"))
	switch {
	case sel < vp.YOffset:
		vp.SetYOffset(sel)
	case sel >= vp.YOffset+vp.Height:
		vp.SetYOffset(sel - vp.Height + 1)
	}
}
