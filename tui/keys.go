package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// keyMap is the dashboard's one keymap. Views pick the bindings they use for
// their help; the root handles the global ones.
type keyMap struct {
	// Global.
	Quit, Help, Filter, Views, NextView, PrevView key.Binding
	// Migration reaches the Migration view (a tab only when the folder
	// has Ingresses).
	Migration key.Binding
	// Tests reaches the Tests view (a tab once the folder's routing tests
	// ran).
	Tests key.Binding
	// Moving around.
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	// Acting on the selection.
	Enter, Back, Detail key.Binding
	// Traces.
	Follow, Pause, Copy, Replay key.Binding
	// Detail.
	PrevObject, NextObject, Status key.Binding
	// Filter input.
	Apply, Clear key.Binding
}

func newKeyMap() *keyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return &keyMap{
		Quit:      b([]string{"q", "ctrl+c"}, "q", "quit"),
		Help:      b([]string{"?"}, "?", "all keys"),
		Filter:    b([]string{"/"}, "/", "filter"),
		Views:     b([]string{"1", "2", "3", "4", "5", "6"}, "1-6", "switch view"),
		NextView:  b([]string{"tab"}, "tab", "next view"),
		PrevView:  b([]string{"shift+tab"}, "shift+tab", "previous view"),
		Migration: b([]string{"7", "m"}, "7/m", "Migration view"),
		Tests:     b([]string{"8", "t"}, "8/t", "Tests view"),

		Up:       b([]string{"up", "k"}, "↑/k", "up"),
		Down:     b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:   b([]string{"pgup", "ctrl+b"}, "pgup", "page up"),
		PageDown: b([]string{"pgdown", "ctrl+f"}, "pgdn", "page down"),
		Top:      b([]string{"home", "g"}, "g/home", "top"),
		Bottom:   b([]string{"end", "G"}, "G/end", "bottom"),

		Enter:  b([]string{"enter"}, "enter", "open"),
		Back:   b([]string{"esc"}, "esc", "back"),
		Detail: b([]string{"d"}, "d", "object YAML"),

		Follow: b([]string{"f"}, "f", "follow newest"),
		Pause:  b([]string{"p", " "}, "p/space", "pause"),
		Copy:   b([]string{"c"}, "c", "copy as curl"),
		Replay: b([]string{"r"}, "r", "replay"),

		PrevObject: b([]string{"[", "left", "h"}, "[/←", "previous object"),
		NextObject: b([]string{"]", "right", "l"}, "]/→", "next object"),
		Status:     b([]string{"s"}, "s", "jump to status"),

		Apply: b([]string{"enter"}, "enter", "keep filter"),
		Clear: b([]string{"esc"}, "esc", "clear filter"),
	}
}

// global lists the bindings every view shares, for the help.
func (k *keyMap) global() []key.Binding {
	return []key.Binding{k.Views, k.NextView, k.PrevView, k.Filter, k.Help, k.Quit}
}

// moves lists the movement bindings.
func (k *keyMap) moves() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}

// listMove is how far a list view's cursor moves for msg: one row for
// up/down, page rows for page up/down, n (the whole list) for top and
// bottom; ok is false for any other key.
func (k *keyMap) listMove(msg tea.KeyMsg, page, n int) (delta int, ok bool) {
	switch {
	case key.Matches(msg, k.Up):
		return -1, true
	case key.Matches(msg, k.Down):
		return 1, true
	case key.Matches(msg, k.PageUp):
		return -page, true
	case key.Matches(msg, k.PageDown):
		return page, true
	case key.Matches(msg, k.Top):
		return -n, true
	case key.Matches(msg, k.Bottom):
		return n, true
	}
	return 0, false
}
