package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// The frame around the active view: header, tabs, status line and help.

// View draws the frame: exactly the terminal's size.
func (m *Model) View() string {
	if m.w <= 0 || m.h <= 0 {
		return ""
	}
	body := ""
	if m.showHelp {
		body = m.fullHelp()
	} else {
		body = m.views[m.active].View()
	}
	parts := []string{
		m.headerView(),
		m.tabsView(),
		block(body, m.w, max(1, m.h-chromeLines)),
		m.statusView(),
		fit(m.help.ShortHelpView(m.shortHelp()), m.w),
	}
	return strings.Join(parts, "\n")
}

// headerView is the top line: folder, counts, request rate, last reload.
// A narrow terminal gets the compact form.
func (m *Model) headerView() string {
	st, s := m.c.st, m.c.s
	brand := st.Header.Render(" gwdev ") + st.HeaderDim.Render(" "+s.dir+" ")
	if s.state == nil {
		return fit(brand+" loading…", m.w)
	}
	sep := st.Dim.Render(" · ")
	full := brand + " " + strings.Join(m.headerParts(false), sep)
	if ansiWidth(full) <= m.w {
		return fit(full, m.w)
	}
	return fit(brand+" "+strings.Join(m.headerParts(true), sep), m.w)
}

func (m *Model) headerParts(compact bool) []string {
	st, s := m.c.st, m.c.s
	objects := plural(len(s.objects), "object")
	if !compact {
		objects += " in " + plural(s.update().Result.Files, "file")
	}
	var problems string
	switch {
	case s.errors == 0 && s.warnings == 0:
		problems = st.OK.Render("✓ no problems")
	case compact:
		var p []string
		if s.errors > 0 {
			p = append(p, st.Error.Render(fmt.Sprintf("✗%d", s.errors)))
		}
		if s.warnings > 0 {
			p = append(p, st.Warning.Render(fmt.Sprintf("!%d", s.warnings)))
		}
		problems = strings.Join(p, " ")
	default:
		var p []string
		if s.errors > 0 {
			p = append(p, st.Error.Render("✗ "+plural(s.errors, "error")))
		}
		if s.warnings > 0 {
			p = append(p, st.Warning.Render("! "+plural(s.warnings, "warning")))
		}
		problems = strings.Join(p, " ")
	}
	rate := fmt.Sprintf("%.1f req/s", s.rate.perSecond(s.now()))
	reload := "loaded"
	if s.state.Reload > 0 {
		reload = fmt.Sprintf("reload #%d", s.state.Reload)
	}
	if !s.state.Time.IsZero() {
		reload += " " + s.state.Time.Format("15:04:05")
	}
	if compact {
		reload += st.Dim.Render(" " + roundDuration(s.state.Translate))
	} else {
		reload += st.Dim.Render(" (load " + roundDuration(s.state.Load) + ", translate " + roundDuration(s.state.Translate) + ")")
	}
	if s.flashing {
		reload = st.Changed.Render("↻") + " " + reload
	}
	return []string{objects, problems, rate, reload}
}

// tabsView is the second line: one tab per view, the active one styled.
func (m *Model) tabsView() string {
	st := m.c.st
	var b strings.Builder
	for i, v := range m.views {
		if !m.shown(i) {
			continue
		}
		label := fmt.Sprintf(" %d %s ", i+1, v.title())
		if n := v.count(); n > 0 {
			label = fmt.Sprintf(" %d %s %s ", i+1, v.title(), st.TabCount.Render(fmt.Sprint(n)))
		}
		if i == m.active {
			b.WriteString(st.TabActive.Render(label))
		} else {
			b.WriteString(st.Tab.Render(label))
		}
		b.WriteString(" ")
	}
	return fit(b.String(), m.w)
}

// statusView is the line above the help: the filter being typed, a
// message, what the last reload changed, or the view's position.
func (m *Model) statusView() string {
	st, s := m.c.st, m.c.s
	v := m.views[m.active]
	var line string
	switch {
	case m.filtering:
		line = m.filter.View()
	case m.status.text != "" && m.status.isErr:
		line = st.StatusError.Render(m.status.text)
	case m.status.text != "":
		line = st.Status.Render(m.status.text)
	case s.flashing:
		line = st.StatusFlash.Render("↻ " + s.changedSummary())
	default:
		var parts []string
		if f := v.filterText(); f != "" {
			parts = append(parts, st.FilterPrompt.Render("/"+f))
		}
		if p := v.position(); p != "" {
			parts = append(parts, p)
		}
		line = st.Status.Render(strings.Join(parts, " · "))
	}
	return fit(line, m.w)
}

func (m *Model) shortHelp() []key.Binding {
	k := m.c.keys
	if m.filtering {
		return []key.Binding{k.Apply, k.Clear}
	}
	if m.showHelp {
		return []key.Binding{withHelp(k.Help, "close help"), k.Quit}
	}
	return append(m.views[m.active].ShortHelp(), k.Filter, k.Help, k.Quit)
}

// fullHelp lists every key: the global ones, then the active view's.
func (m *Model) fullHelp() string {
	st := m.c.st
	global := m.c.keys.global()
	if m.shown(viewMigration) {
		global = append(global[:1:1], append([]key.Binding{m.c.keys.Migration}, global[1:]...)...)
	}
	if m.shown(viewTests) {
		global = append(global[:1:1], append([]key.Binding{m.c.keys.Tests}, global[1:]...)...)
	}
	groups := append([][]key.Binding{global}, m.views[m.active].FullHelp()...)
	title := st.Title.Render("Keys") + st.Dim.Render(" — "+m.views[m.active].title()+" view; ? or esc closes")
	return title + "\n\n" + m.help.FullHelpView(groups)
}
