// Package dash writes an empty value as "-" in text for people (the
// migration comparison of gwdev migrate --compare and the TUI's Migration
// view print the same fields this way). It imports the standard library
// only, so any floor may use it.
package dash

import "strconv"

// Or returns s, or "-" when s is empty.
func Or(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Quoted returns s as a Go string literal, or "-" (unquoted) when s is
// empty.
func Quoted(s string) string {
	if s == "" {
		return "-"
	}
	return strconv.Quote(s)
}
