package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/engine"
)

// detailView shows one object's YAML with its computed status, syntax
// highlighted, below a diff of its status since the previous reload.
// [ and ] step through the objects (those matching the filter).
type detailView struct {
	viewBase
	vp      viewport.Model
	current engine.ObjectKey
	cycle   []engine.ObjectKey // objects that pass the filter
	pos     int                // index of current in cycle (-1: not in it)
	// statusAt is the content line where the YAML's status starts (-1: none).
	statusAt int
}

func newDetailView(c *common) *detailView {
	v := &detailView{vp: viewport.New(0, 0), pos: -1, statusAt: -1}
	v.viewBase = newViewBase(c, func() {
		v.vp.Width, v.vp.Height = v.w, max(0, v.h-2)
		v.render(false)
	}, func() {
		v.collect()
		if v.pos < 0 && len(v.cycle) > 0 {
			v.current, v.pos = v.cycle[0], 0
		}
		v.render(true)
	})
	return v
}

func (v *detailView) title() string { return "Detail" }

func (v *detailView) position() string {
	if v.pos < 0 {
		return ""
	}
	return fmt.Sprintf("object %d/%d", v.pos+1, len(v.cycle))
}

// collect lists the objects that pass the filter and finds the current one.
func (v *detailView) collect() {
	v.cycle = v.cycle[:0]
	v.pos = -1
	for _, o := range v.s.objects {
		if v.filter != "" && !strings.Contains(strings.ToLower(o.key.String()+" "+o.src.String()), v.filter) {
			continue
		}
		if o.key == v.current {
			v.pos = len(v.cycle)
		}
		v.cycle = append(v.cycle, o.key)
	}
}

func (v *detailView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case refreshMsg:
		v.collect()
		if _, ok := v.s.object(v.current); !ok && len(v.cycle) > 0 {
			v.current, v.pos = v.cycle[0], 0
		}
		v.render(false)
	case showObjectMsg:
		v.current = msg.key
		v.collect()
		v.render(true)
	case tea.KeyMsg:
		k := v.keys
		switch {
		case key.Matches(msg, k.PrevObject):
			v.step(-1)
		case key.Matches(msg, k.NextObject):
			v.step(1)
		case key.Matches(msg, k.Status):
			if v.statusAt >= 0 {
				v.vp.SetYOffset(v.statusAt)
			}
		default:
			scrollViewport(&v.vp, k, msg)
		}
	}
	return v, nil
}

func (v *detailView) step(n int) {
	if len(v.cycle) == 0 {
		return
	}
	v.pos = (max(v.pos, 0) + n + len(v.cycle)) % len(v.cycle)
	v.current = v.cycle[v.pos]
	v.render(true)
}

// render lays out the current object; top scrolls back to its start.
func (v *detailView) render(top bool) {
	if v.w <= 0 {
		return
	}
	o, ok := v.s.object(v.current)
	if !ok {
		msg := "No object selected: press ] for the first one, or enter on a route or problem."
		if v.s.state == nil {
			msg = "Loading…"
		}
		v.vp.SetContent(v.st.Dim.Render(msg))
		return
	}
	cur := objectYAML(o)
	var lines []string
	for _, l := range append(v.statusDiff(o, cur), v.policyLines(o.key)...) {
		lines = append(lines, wrapHanging(l, v.w, 4)...)
	}
	lines = append(lines, "")
	v.statusAt = -1
	raw := strings.Split(cur, "\n")
	for i, l := range v.st.highlightYAML(cur) {
		if raw[i] == "status:" {
			v.statusAt = len(lines)
		}
		indent := len(raw[i]) - len(strings.TrimLeft(raw[i], " "))
		lines = append(lines, wrapHanging(l, v.w, indent+4)...)
	}
	y := v.vp.YOffset
	v.vp.SetContent(strings.Join(lines, "\n"))
	if top {
		v.vp.GotoTop()
	} else {
		v.vp.SetYOffset(y)
	}
}

// statusDiff renders what changed in the object's status since the
// previous reload (lastTransitionTime aside).
func (v *detailView) statusDiff(o objectEntry, cur string) []string {
	st := v.st
	title := st.Bold.Render("Status since the previous reload: ")
	if v.s.prev == nil {
		return []string{title + st.Dim.Render("first load, nothing to compare")}
	}
	old, ok := v.s.prevObjects[o.key]
	if !ok {
		return []string{title + st.DiffAdd.Render("new object")}
	}
	d := hunks(diffLines(statusLines(objectYAML(old)), statusLines(cur)), 1)
	if len(d) == 0 {
		return []string{title + st.Dim.Render("no change")}
	}
	out := []string{title}
	for _, l := range d {
		switch {
		case strings.HasPrefix(l, "+ "):
			out = append(out, st.DiffAdd.Render(l))
		case strings.HasPrefix(l, "- "):
			out = append(out, st.DiffDel.Render(l))
		case l == "…":
			out = append(out, st.DiffHunk.Render(l))
		default:
			out = append(out, st.Dim.Render(l))
		}
	}
	return out
}

func (v *detailView) View() string {
	st := v.st
	head := st.Dim.Render("no object")
	if o, ok := v.s.object(v.current); ok {
		head = st.Title.Render(o.key.String())
		if src := o.src.String(); src != "" {
			head += "  " + st.Dim.Render(src)
		}
		if v.s.isChanged(o.key) {
			head += "  " + st.Changed.Render("changed")
		}
	}
	return fit(head, v.w) + "\n" + st.Dim.Render(strings.Repeat("─", v.w)) + "\n" + v.vp.View()
}

func (v *detailView) ShortHelp() []key.Binding {
	k := v.keys
	return []key.Binding{k.PrevObject, k.NextObject, k.Status, k.Up, k.Down}
}

func (v *detailView) FullHelp() [][]key.Binding {
	k := v.keys
	return [][]key.Binding{k.moves(), {k.PrevObject, k.NextObject, k.Status}}
}
