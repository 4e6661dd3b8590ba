package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
)

// viewBase is what every view holds the same way: the session, keys and
// styles it shares with the others, its size and its filter (lowercased).
// SetSize and SetFilter store them and call the view's resized and
// filtered, set by its constructor; a view embeds it and writes only what
// differs.
type viewBase struct {
	*common
	w, h   int
	filter string
	// page is the viewport the view is drawn in at its whole size, sized by
	// SetSize before resized runs (nil: the view sizes its own).
	page *viewport.Model
	// resized lays the view out for w×h; filtered picks what passes the
	// filter. Neither may be nil.
	resized, filtered func()
}

// newViewBase is a view's base whose SetSize and SetFilter call resized and
// filtered.
func newViewBase(c *common, resized, filtered func()) viewBase {
	return viewBase{common: c, resized: resized, filtered: filtered}
}

// newPageBase is the base of a view drawn in page at its whole size: a new
// size sizes page, then calls redraw.
func newPageBase(c *common, page *viewport.Model, redraw, filtered func()) viewBase {
	return viewBase{common: c, page: page, resized: redraw, filtered: filtered}
}

// SetSize gives the view w×h cells.
func (b *viewBase) SetSize(w, h int) {
	b.w, b.h = w, h
	if b.page != nil {
		b.page.Width, b.page.Height = w, h
	}
	b.resized()
}

// SetFilter sets the view's filter (matched lowercased).
func (b *viewBase) SetFilter(f string) {
	b.filter = strings.ToLower(f)
	b.filtered()
}

func (b *viewBase) filterText() string { return b.filter }

// Init starts nothing: a view's input arrives as messages from the root.
func (b *viewBase) Init() tea.Cmd { return nil }

// count is 0 (no number next to the tab title) unless the view says one.
func (b *viewBase) count() int { return 0 }
