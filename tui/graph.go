package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/engine"
)

// graphView draws the result's structure (engine.Result.Graph, the same as
// `gwdev graph`) as a tree: Gateways → listeners → routes → rules →
// backends, then each policy (⚑) with what it targets under dashed
// branches, problems in red with their reason. A node reached from two
// parents appears under each. Enter opens the node's object in Detail;
// the filter keeps matching lines and their ancestors.
type graphView struct {
	viewBase
	vp     viewport.Model
	lines  []graphLine
	shown  []int // indexes into lines
	cursor int
	// visible is set while the view is on screen; stale when a reload came
	// while it was not (the tree is built only when it is shown).
	visible, stale bool
}

// graphLine is one node of the tree at its depth.
type graphLine struct {
	node   *engine.GraphNode
	edge   engine.GraphEdge
	depth  int
	prefix string // the tree drawing before the node
	// seen is set when the node was already drawn above, so its subtree
	// is not repeated.
	seen bool
}

var (
	_ view     = (*graphView)(nil)
	_ onScreen = (*graphView)(nil)
)

func (v *graphView) setVisible(on bool) {
	v.visible = on
	if on && v.stale {
		v.rebuild()
	}
}

func newGraphView(c *common) *graphView {
	v := &graphView{vp: viewport.New(0, 0)}
	v.viewBase = newPageBase(c, &v.vp, v.render, func() {
		v.cursor = 0
		v.pick()
	})
	return v
}

func (v *graphView) title() string { return "Graph" }

func (v *graphView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case refreshMsg:
		if !v.visible {
			v.stale = true
			break
		}
		v.rebuild()
	case tea.KeyMsg:
		return v, v.handleKey(msg)
	}
	return v, nil
}

// rebuild walks the graph of the current result into tree lines.
func (v *graphView) rebuild() {
	v.stale = false
	v.lines = v.lines[:0]
	if st := v.s.state; st != nil && st.Result != nil {
		g := st.Result.Graph()
		nodes := make(map[string]*engine.GraphNode, len(g.Nodes))
		for _, n := range g.Nodes {
			nodes[n.ID] = n
		}
		children := map[string][]engine.GraphEdge{}
		for _, e := range g.Edges {
			children[e.From] = append(children[e.From], e)
		}
		drawn := map[string]bool{}
		var walk func(n *engine.GraphNode, e engine.GraphEdge, depth int, prefix, childPrefix string)
		walk = func(n *engine.GraphNode, e engine.GraphEdge, depth int, prefix, childPrefix string) {
			l := graphLine{node: n, edge: e, depth: depth, prefix: prefix, seen: drawn[n.ID] && n.Kind != "Service"}
			v.lines = append(v.lines, l)
			if l.seen {
				return
			}
			drawn[n.ID] = true
			kids := children[n.ID]
			for i, k := range kids {
				c := nodes[k.To]
				if c == nil {
					continue
				}
				branch, next := "├─ ", "│  "
				if i == len(kids)-1 {
					branch, next = "└─ ", "   "
				}
				if k.Policy { // a policy on its target: dashed
					branch = strings.Replace(branch, "─", "┄", 1)
				}
				walk(c, k, depth+1, childPrefix+branch, childPrefix+next)
			}
		}
		for _, r := range g.Roots() {
			walk(r, engine.GraphEdge{}, 0, "", "")
		}
	}
	v.pick()
}

// pick applies the filter: a line stays when it or a line below it in its
// subtree matches.
func (v *graphView) pick() {
	v.shown = v.shown[:0]
	keep := make([]bool, len(v.lines))
	for i := len(v.lines) - 1; i >= 0; i-- {
		if v.filter != "" && !strings.Contains(strings.ToLower(lineText(v.lines[i])), v.filter) {
			continue
		}
		keep[i] = true
		if v.filter == "" {
			continue
		}
		// Mark the ancestors, up to one already kept (whose own ancestors
		// are kept too).
		need := v.lines[i].depth
		for j := i - 1; j >= 0 && need > 0; j-- {
			if d := v.lines[j].depth; d < need {
				if keep[j] {
					break
				}
				keep[j], need = true, d
			}
		}
	}
	for i, k := range keep {
		if k {
			v.shown = append(v.shown, i)
		}
	}
	v.cursor = clamp(v.cursor, 0, len(v.shown)-1)
	v.render()
}

// lineText is a line's words, for the filter.
func lineText(l graphLine) string {
	return strings.Join([]string{l.node.Label, l.node.Detail, l.node.Problem, l.edge.Label, l.edge.Problem}, " ")
}

func (v *graphView) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := v.keys
	if d, ok := k.listMove(msg, max(1, v.h-1), len(v.shown)); ok {
		v.move(d)
		return nil
	}
	if key.Matches(msg, k.Enter) || key.Matches(msg, k.Detail) {
		if l, ok := v.selected(); ok && l.node.Object.Name != "" {
			return showObject(l.node.Object)
		}
	}
	return nil
}

func (v *graphView) move(n int) {
	v.cursor = clamp(v.cursor+n, 0, len(v.shown)-1)
	v.render()
}

func (v *graphView) selected() (graphLine, bool) {
	if v.cursor < 0 || v.cursor >= len(v.shown) {
		return graphLine{}, false
	}
	return v.lines[v.shown[v.cursor]], true
}

// render draws the shown lines, one per node, and scrolls the cursor into
// view.
func (v *graphView) render() {
	if v.w <= 0 {
		return
	}
	if len(v.shown) == 0 {
		msg := "Nothing to draw: no Gateway."
		switch {
		case v.s.state == nil:
			msg = "Loading…"
		case v.filter != "":
			msg = "No node matches the filter."
		}
		v.vp.SetContent(v.st.Dim.Render(msg))
		return
	}
	var b strings.Builder
	for i, idx := range v.shown {
		mark := "  "
		if i == v.cursor {
			mark = v.st.Cursor.Render("▌ ")
		}
		b.WriteString(mark + truncate(v.line(v.lines[idx]), v.w-2))
		if i < len(v.shown)-1 {
			b.WriteByte('\n')
		}
	}
	v.vp.SetContent(b.String())
	switch {
	case v.cursor < v.vp.YOffset:
		v.vp.SetYOffset(v.cursor)
	case v.cursor >= v.vp.YOffset+v.vp.Height:
		v.vp.SetYOffset(v.cursor - v.vp.Height + 1)
	}
}

// line renders one node: tree prefix, label, detail, then what is wrong
// with it or with the edge that leads to it.
func (v *graphView) line(l graphLine) string {
	st := v.st
	n := l.node
	label := st.Bold.Render(n.Label)
	if n.Kind == "Rule" || n.Kind == "Service" || n.Kind == "Listener" {
		label = n.Label
	}
	switch {
	case n.Problem != "" || l.edge.Problem != "":
		label = st.Error.Render(n.Label)
	case n.Policy:
		label = st.Policy.Render(n.Label)
	}
	if n.Policy {
		label = st.Policy.Render("⚑ ") + label
	}
	s := st.Dim.Render(l.prefix) + label
	if n.Detail != "" {
		s += "  " + st.Dim.Render(n.Detail)
	}
	for _, f := range n.Filters { // the rule's filters, as engine.DescribeFilter says them
		s += "  " + st.Dim.Render("· "+f)
	}
	if l.edge.Label != "" {
		s += "  " + st.Dim.Render("("+l.edge.Label+")")
	}
	switch {
	case l.edge.Problem != "":
		s += "  " + st.Error.Render("✗ "+l.edge.Problem)
	case n.Problem != "":
		s += "  " + st.Error.Render("✗ "+n.Problem)
	}
	if l.seen {
		s += st.Dim.Render("  (drawn above)")
	}
	return s
}

func (v *graphView) View() string { return v.vp.View() }

func (v *graphView) ShortHelp() []key.Binding {
	return []key.Binding{v.keys.Up, v.keys.Down, withHelp(v.keys.Enter, "object YAML")}
}

func (v *graphView) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.keys.moves(), {withHelp(v.keys.Enter, "open the node's object in Detail")}}
}

func (v *graphView) position() string { return cursorPosition(v.cursor, len(v.shown)) }
