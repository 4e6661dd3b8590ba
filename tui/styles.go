package tui

import (
	"io"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// styles is the dashboard's one set of styles; views never build colours
// inline. Without colour (NO_COLOR) every style keeps only attributes
// (bold, faint, reverse, underline), so selection and emphasis stay visible.
type styles struct {
	// Frame.
	Header, HeaderDim, Tab, TabActive, TabCount    lipgloss.Style
	Status, StatusError, StatusFlash, FilterPrompt lipgloss.Style
	// Text.
	Title, Dim, Bold, Selected, Cursor, Changed lipgloss.Style
	// Policy marks a policy (GEP-713) where it is drawn as a node.
	Policy lipgloss.Style
	// Severity and conditions.
	Error, Warning, Info, OK lipgloss.Style
	// YAML.
	Key, String, Number, Bool, Comment, True, False lipgloss.Style
	// Status diff.
	DiffAdd, DiffDel, DiffHunk lipgloss.Style
	// Components.
	Table table.Styles
	Help  help.Styles
}

// newStyles builds the styles for renderer r; noColor drops every colour.
func newStyles(r *lipgloss.Renderer, noColor bool) *styles {
	c := func(s lipgloss.Style, fg string) lipgloss.Style {
		if noColor {
			return s
		}
		return s.Foreground(lipgloss.Color(fg))
	}
	bg := func(s lipgloss.Style, fg, bgc string) lipgloss.Style {
		if noColor {
			return s.Reverse(true)
		}
		return s.Foreground(lipgloss.Color(fg)).Background(lipgloss.Color(bgc))
	}
	n := r.NewStyle
	st := &styles{
		Header:       bg(n().Bold(true), "15", "4"),
		HeaderDim:    bg(n(), "252", "4"),
		Tab:          c(n(), "245"),
		TabActive:    bg(n().Bold(true), "0", "6"),
		TabCount:     c(n().Bold(true), "3"),
		Status:       c(n(), "245"),
		StatusError:  c(n().Bold(true), "1"),
		StatusFlash:  c(n().Bold(true), "3"),
		FilterPrompt: c(n().Bold(true), "6"),

		Title:    c(n().Bold(true), "6"),
		Dim:      c(n().Faint(true), "245"),
		Bold:     n().Bold(true),
		Selected: bg(n(), "15", "238"),
		Cursor:   c(n().Bold(true), "6"),
		Changed:  bg(n().Bold(true), "0", "3"),
		Policy:   c(n().Italic(true), "5"),

		Error:   c(n().Bold(true), "1"),
		Warning: c(n().Bold(true), "3"),
		Info:    c(n(), "4"),
		OK:      c(n(), "2"),

		Key:     c(n(), "6"),
		String:  c(n(), "2"),
		Number:  c(n(), "5"),
		Bool:    c(n(), "3"),
		Comment: c(n().Faint(true), "245"),
		True:    c(n().Bold(true), "2"),
		False:   c(n().Bold(true), "1"),

		DiffAdd:  c(n(), "2"),
		DiffDel:  c(n(), "1"),
		DiffHunk: c(n().Faint(true), "6"),
	}
	if noColor {
		st.Selected = n().Reverse(true)
		st.Changed = n().Bold(true).Underline(true)
	}
	st.Table = table.Styles{
		Header:   c(n().Bold(true), "6").PaddingRight(1),
		Cell:     n().PaddingRight(1),
		Selected: st.Selected,
	}
	st.Help = help.Styles{
		ShortKey:       c(n().Bold(true), "6"),
		ShortDesc:      c(n(), "245"),
		ShortSeparator: c(n().Faint(true), "240"),
		Ellipsis:       c(n().Faint(true), "240"),
		FullKey:        c(n().Bold(true), "6"),
		FullDesc:       c(n(), "250"),
		FullSeparator:  c(n().Faint(true), "240"),
	}
	return st
}

// NewRenderer returns the renderer for a dashboard on w. With noColor (the
// user set NO_COLOR) it keeps text attributes such as bold and reverse video,
// which NO_COLOR allows, so that the selection stays visible; the styles
// then carry no colour at all.
func NewRenderer(w io.Writer, noColor bool) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(w)
	if noColor {
		r.SetColorProfile(termenv.ANSI)
	}
	return r
}
