package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/gwdev/gwdev/engine"
)

// showObjectMsg asks the root to open an object in the Detail view.
type showObjectMsg struct{ key engine.ObjectKey }

// showObject returns a command that opens k in Detail.
func showObject(k engine.ObjectKey) tea.Cmd {
	return func() tea.Msg { return showObjectMsg{key: k} }
}

// statusMsg puts a message in the status line; isErr styles it as an error.
type statusMsg struct {
	text  string
	isErr bool
}

// withHelp returns b with another description.
func withHelp(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

func clamp(v, lo, hi int) int {
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}

func sortStable[T any](s []T, less func(a, b T) bool) {
	sort.SliceStable(s, func(i, j int) bool { return less(s[i], s[j]) })
}

// truncate cuts s (which may hold ANSI styles) to w cells, ending with "…"
// when something was cut.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansiWidth(s) <= w {
		return s
	}
	if plainASCII(s) {
		return s[:w-1] + "…"
	}
	return ansi.Truncate(s, w, "…")
}

// ansiWidth is the width of s in cells, ANSI sequences aside. Plain ASCII,
// most of what the dashboard draws, takes the fast path.
func ansiWidth(s string) int {
	if plainASCII(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// plainASCII reports whether s is printable ASCII only: one cell per byte.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// fit truncates or pads s to exactly w cells.
func fit(s string, w int) string {
	s = truncate(s, w)
	if n := ansiWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// wrap breaks s into lines of at most w cells, at spaces when it can.
func wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(s, w, ""), "\n")
}

// wrapHanging wraps s to w cells; continuation lines are indented by
// hang cells, or by s's own indent when it is deeper.
func wrapHanging(s string, w, hang int) []string {
	if ansiWidth(s) <= w {
		return []string{s}
	}
	indent := len(s) - len(strings.TrimLeft(s, " "))
	if indent == 0 {
		hang = 2
	}
	hang = min(max(hang, indent), w/2)
	first := wrap(s, w)
	rest := strings.Join(first[1:], " ")
	out := []string{first[0]}
	for _, l := range wrap(strings.TrimLeft(rest, " "), w-hang) {
		out = append(out, strings.Repeat(" ", hang)+l)
	}
	return out
}

// block makes s exactly h lines of exactly w cells.
func block(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		lines[i] = fit(l, w)
	}
	return strings.Join(lines, "\n")
}

// plural renders "1 route", "2 routes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "s") {
		return strconv.Itoa(n) + " " + word + "es" // Ingresses
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// cursorPosition is a list view's "row/rows" for the status line ("" when
// the list is empty).
func cursorPosition(cursor, rows int) string {
	if rows == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", cursor+1, rows)
}
