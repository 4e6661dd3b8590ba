package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/table"
)

// lineTable is a bubbles table whose rows are pre-rendered lines: the
// columns are laid out here, once per row, and the table sees one column.
// bubbles' table renders every cell through lipgloss whenever its rows or
// cursor change; with one cell per row a redraw costs about a tenth, which
// matters at 30 frames/s of heavy traffic and with 1,000 routes.
type lineTable struct {
	table.Model
	cols []table.Column
}

func newLineTable(st *styles) lineTable {
	t := lineTable{Model: table.New(table.WithFocused(true))}
	t.SetStyles(st.Table)
	return t
}

// setLayout sets the width and the logical columns; rows rendered for the
// old layout must be rendered again.
func (t *lineTable) setLayout(width int, cols []table.Column) {
	t.cols = cols
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.Title
	}
	t.SetRows(nil)
	t.SetColumns([]table.Column{{Title: t.line(titles), Width: max(1, width-1)}})
	t.SetWidth(width)
}

// line renders cells in the columns, one space apart.
func (t *lineTable) line(cells []string) string {
	var b strings.Builder
	for i, c := range t.cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i < len(cells) {
			b.WriteString(fit(cells[i], c.Width))
		} else {
			b.WriteString(strings.Repeat(" ", c.Width))
		}
	}
	return b.String()
}

// row renders cells as a table row.
func (t *lineTable) row(cells []string) table.Row { return table.Row{t.line(cells)} }
