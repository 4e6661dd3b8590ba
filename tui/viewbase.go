package tui

import (
	"strings"

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
	// resized lays the view out for w×h; filtered picks what passes the
	// filter. Neither may be nil.
	resized, filtered func()
}

// newViewBase is a view's base whose SetSize and SetFilter call resized and
// filtered.
func newViewBase(c *common, resized, filtered func()) viewBase {
	return viewBase{common: c, resized: resized, filtered: filtered}
}

// SetSize gives the view w×h cells.
func (b *viewBase) SetSize(w, h int) {
	b.w, b.h = w, h
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
