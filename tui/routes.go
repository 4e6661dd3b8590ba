package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
)

// routesView lists every route, one row per parent, with Accepted and
// ResolvedRefs; enter expands the selected route into its rules, matches,
// filters and backends.
type routesView struct {
	viewBase
	tbl      lineTable
	pane     viewport.Model
	expanded bool
	all      []routeRow // every row, rendered once per reload or resize
	rows     []routeRow // shown rows (those that pass the filter), parallel to the table's
}

// routeRow is one (route, parent) pair.
type routeRow struct {
	route routeObject
	cells table.Row
	text  string // lower-case, for the filter
}

func newRoutesView(c *common) *routesView {
	v := &routesView{tbl: newLineTable(c.st), pane: viewport.New(0, 0)}
	v.viewBase = newViewBase(c, func() {
		v.tbl.setLayout(v.w, v.columns())
		v.layout()
		v.rebuild() // the rows are rendered for the width
	}, func() {
		v.pick()
		v.tbl.SetCursor(0)
		v.renderPane()
	})
	v.tbl.setLayout(v.w, v.columns()) // rows may come before the first size
	return v
}

func (v *routesView) title() string { return "Routes" }

func (v *routesView) position() string { return cursorPosition(v.tbl.Cursor(), len(v.rows)) }

// layout splits the height between the table and, when a route is
// expanded, its rules.
func (v *routesView) layout() {
	th := v.h
	if v.expanded {
		th = max(5, v.h*2/5)
		v.pane.Width, v.pane.Height = v.w, max(0, v.h-th-1)
	}
	v.tbl.SetHeight(th)
}

// narrow reports whether the view is too narrow for full kind names.
func (v *routesView) narrow() bool { return v.w < 120 }

// columns share the width: fixed kind and mark, the rest in proportion.
func (v *routesView) columns() []table.Column {
	kind, refsTitle := 9, "RESOLVEDREFS"
	if v.narrow() {
		kind, refsTitle = 4, "REFS"
	}
	rest := max(30, v.w-7-1-kind) // one padding cell per column
	part := func(f float64) int { return int(float64(rest) * f) }
	route, hosts, parent, acc := part(0.22), part(0.18), part(0.2), part(0.22)
	refs := rest - route - hosts - parent - acc
	return []table.Column{
		{Title: " ", Width: 1}, {Title: "KIND", Width: kind}, {Title: "ROUTE", Width: route},
		{Title: "HOSTNAMES", Width: hosts}, {Title: "PARENT", Width: parent},
		{Title: "ACCEPTED", Width: acc}, {Title: refsTitle, Width: refs},
	}
}

// kindCell shortens route kinds on narrow screens (HTTPRoute → HTTP).
func (v *routesView) kindCell(kind string) string {
	if v.narrow() {
		if kind == "Ingress" {
			return "Ing"
		}
		return strings.TrimSuffix(kind, "Route")
	}
	return kind
}

func (v *routesView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case refreshMsg:
		v.rebuild()
		v.renderPane()
	case tea.KeyMsg:
		return v, v.handleKey(msg)
	}
	return v, nil
}

func (v *routesView) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := v.keys
	if v.expanded && (key.Matches(msg, k.PageUp) || key.Matches(msg, k.PageDown)) {
		scrollViewport(&v.pane, k, msg) // page through the rules
		return nil
	}
	switch {
	case key.Matches(msg, k.Up):
		v.tbl.MoveUp(1)
	case key.Matches(msg, k.Down):
		v.tbl.MoveDown(1)
	case key.Matches(msg, k.PageUp):
		v.tbl.MoveUp(max(1, v.tbl.Height()))
	case key.Matches(msg, k.PageDown):
		v.tbl.MoveDown(max(1, v.tbl.Height()))
	case key.Matches(msg, k.Top):
		v.tbl.GotoTop()
	case key.Matches(msg, k.Bottom):
		v.tbl.GotoBottom()
	case key.Matches(msg, k.Enter):
		v.expanded = !v.expanded
		v.layout()
	case key.Matches(msg, k.Back):
		v.expanded = false
		v.layout()
	case key.Matches(msg, k.Detail):
		if r, ok := v.selected(); ok {
			return showObject(r.route.key)
		}
		return nil
	default:
		return nil
	}
	v.renderPane()
	return nil
}

func (v *routesView) selected() (routeRow, bool) {
	c := v.tbl.Cursor()
	if c < 0 || c >= len(v.rows) {
		return routeRow{}, false
	}
	return v.rows[c], true
}

// rebuild renders every route's rows from the session, then picks those
// that pass the filter.
func (v *routesView) rebuild() {
	v.all = v.all[:0]
	if res := v.s.result(); res != nil {
		eachRoute(res.Objects, func(r routeObject) {
			v.all = append(v.all, v.routeRows(r)...)
		})
		eachIngress(res, func(r routeObject) { // overview_ingress.go
			v.all = append(v.all, v.routeRows(r)...)
		})
	}
	v.pick()
}

// pick shows the rows that pass the filter, keeping the cursor on the same
// route when it can.
func (v *routesView) pick() {
	var keep engine.ObjectKey
	if r, ok := v.selected(); ok {
		keep = r.route.key
	}
	v.rows = v.rows[:0]
	for _, row := range v.all {
		if v.filter == "" || strings.Contains(row.text, v.filter) {
			v.rows = append(v.rows, row)
		}
	}
	trows := make([]table.Row, len(v.rows))
	cursor := -1
	for i, r := range v.rows {
		trows[i] = r.cells
		if cursor < 0 && r.route.key == keep {
			cursor = i
		}
	}
	v.tbl.SetRows(trows)
	if len(trows) > 0 {
		v.tbl.SetCursor(max(cursor, 0))
	}
}

// routeRows renders one row per parent (one row when there is none).
func (v *routesView) routeRows(r routeObject) []routeRow {
	mark := " "
	if v.s.isChanged(r.key) {
		mark = "✱"
	}
	hosts := "*"
	if len(r.hostnames) > 0 {
		hs := make([]string, len(r.hostnames))
		for i, h := range r.hostnames {
			hs[i] = string(h)
		}
		hosts = strings.Join(hs, ",")
	}
	name := r.key.Namespace + "/" + r.key.Name
	var rows []routeRow
	add := func(parent string, conds []metav1.Condition, first bool) {
		v.addRow(&rows, r, []string{mark, v.kindCell(r.key.Kind), name, hosts, parent, report.ConditionCell(conds, "Accepted"), report.ConditionCell(conds, "ResolvedRefs")}, first)
	}
	switch {
	case r.key.Kind == "Ingress" && r.servedBy != nil: // an Ingress has no conditions: where it is served
		v.addRow(&rows, r, []string{mark, v.kindCell(r.key.Kind), name, hosts, "class " + r.servedBy.Gateway.Name, "✓ served", "-"}, true)
	case r.key.Kind == "Ingress":
		v.addRow(&rows, r, []string{mark, v.kindCell(r.key.Kind), name, hosts, "-", "✗ not served: no IngressClass serves it", "-"}, true)
	case len(r.parents) > 0:
		for i, p := range r.parents {
			add(parentCell(r.key.Namespace, p.ParentRef), p.Conditions, i == 0)
		}
	case len(r.parentRefs) > 0:
		for i, p := range r.parentRefs {
			add(parentCell(r.key.Namespace, p)+" (no status)", nil, i == 0)
		}
	default:
		add("(no parentRefs)", nil, true)
	}
	return rows
}

// addRow appends a row of cells for r; a row after the first continues
// the route above and leaves its first four cells empty.
func (v *routesView) addRow(rows *[]routeRow, r routeObject, cells []string, first bool) {
	text := strings.ToLower(strings.Join(cells, " "))
	if !first {
		cells[0], cells[1], cells[2], cells[3] = "", "", "", "" // continuation of the route above
	}
	*rows = append(*rows, routeRow{route: r, cells: v.tbl.row(cells), text: text})
}

// renderPane fills the expanded pane with the selected route's rules.
func (v *routesView) renderPane() {
	if !v.expanded {
		return
	}
	r, ok := v.selected()
	if !ok {
		v.pane.SetContent("")
		return
	}
	var lines []string
	for _, l := range v.routeDetail(r.route) {
		lines = append(lines, wrapHanging(l, v.w, 4)...)
	}
	v.pane.SetContent(strings.Join(lines, "\n"))
	v.pane.GotoTop()
}

// routeDetail describes a route: its parents with every condition message,
// then each served rule with matches, filters and resolved backends.
func (v *routesView) routeDetail(r routeObject) []string {
	st := v.st
	head := st.Title.Render(r.key.String())
	if e, ok := v.s.object(r.key); ok && e.src.String() != "" {
		head += "  " + st.Dim.Render(e.src.String())
	}
	lines := []string{head}
	if g := r.servedBy; g != nil {
		lines = append(lines, "served by "+st.Bold.Render("IngressClass "+g.Gateway.Name)+" (ingress-nginx) on "+v.servedOn(g))
	}
	for _, p := range r.parents {
		lines = append(lines, "parent "+st.Bold.Render(parentName(r.key.Namespace, p.ParentRef))+"  "+v.badges(p.Conditions, v.w))
		for _, c := range p.Conditions {
			if isProblem(c) {
				lines = append(lines, "  "+st.Error.Render(c.Type+" "+c.Reason)+": "+c.Message)
			}
		}
	}
	rs := v.s.serving(r.key)
	if rs == nil || len(rs.Entries) == 0 {
		lines = append(lines, st.Warning.Render("not in the routing table: no parent accepted the route"))
		return append(lines, v.specRules(r)...)
	}
	for _, e := range rs.Entries {
		served := st.Dim.Render(strings.Join(e.ServedOn, ", "))
		switch {
		case e.HTTP != nil:
			rule := e.HTTP
			lines = append(lines, st.Bold.Render(entryLabel(e))+"  "+describeMatch(rule)+"  "+served)
			for _, f := range rule.Filters {
				lines = append(lines, "    filter   "+engine.DescribeFilter(f, rule.Mirrors))
			}
			if rule.DirectStatus != 0 {
				lines = append(lines, "    "+st.Error.Render(fmt.Sprintf("answers %d: %s", rule.DirectStatus, rule.DirectReason)))
			}
			lines = append(lines, v.backendLines(rule.Backends)...)
		case e.SNI != nil:
			lines = append(lines, st.Bold.Render(entryLabel(e))+"  SNI "+strings.Join(e.SNI.Hostnames, ",")+"  "+served)
			lines = append(lines, v.backendLines(e.SNI.Backends)...)
		case e.Stream != nil:
			lines = append(lines, st.Bold.Render(entryLabel(e))+"  "+served)
			lines = append(lines, v.backendLines(e.Stream.Backends)...)
		}
	}
	return lines
}

// servedOn lists where a table entry's ports are bound ("127.0.20.1:8080
// (HTTP 80)"), its address when nothing is bound yet.
func (v *routesView) servedOn(g *engine.GatewayTable) string {
	var out []string
	for _, p := range g.Ports {
		if r, ok := v.s.portReport(g.Name, p.Port); ok && r.Bound != "" {
			out = append(out, fmt.Sprintf("%s (%s %d)", r.Bound, r.Protocol, p.Port))
		}
	}
	if len(out) == 0 {
		return g.Address
	}
	return strings.Join(out, ", ")
}

func (v *routesView) backendLines(bs []*engine.Backend) []string {
	var out []string
	for _, b := range bs {
		d, ok := describeBackend(b)
		if !ok {
			d = v.st.Error.Render(d)
		}
		out = append(out, "    backend  "+d)
	}
	return out
}

// specRules lists an unserved HTTPRoute's rules from its spec.
func (v *routesView) specRules(r routeObject) []string {
	if r.http == nil {
		return nil
	}
	var out []string
	for i, rule := range r.http.Spec.Rules {
		var refs []string
		for _, b := range rule.BackendRefs {
			refs = append(refs, string(b.Name))
		}
		out = append(out, fmt.Sprintf("rule %d  %d match(es), backendRefs %s", i, max(1, len(rule.Matches)), strings.Join(refs, ", ")))
	}
	return out
}

func (v *routesView) View() string {
	if len(v.rows) == 0 {
		msg := "No route."
		if v.filter != "" {
			msg = "No route matches the filter."
		}
		return v.tbl.View() + "\n" + v.st.Dim.Render(msg)
	}
	if !v.expanded {
		return v.tbl.View()
	}
	return v.tbl.View() + "\n" + v.st.Dim.Render(strings.Repeat("─", v.w)) + "\n" + v.pane.View()
}

func (v *routesView) ShortHelp() []key.Binding {
	return []key.Binding{v.keys.Up, v.keys.Down, withHelp(v.keys.Enter, "expand"), v.keys.Detail}
}

func (v *routesView) FullHelp() [][]key.Binding {
	k := v.keys
	moves := []key.Binding{k.Up, k.Down, withHelp(k.PageUp, "page up (scroll rules when expanded)"),
		withHelp(k.PageDown, "page down (scroll rules when expanded)"), k.Top, k.Bottom}
	return [][]key.Binding{moves, {withHelp(k.Enter, "expand/collapse rules"), withHelp(k.Back, "collapse"), k.Detail}}
}
