package watch

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// A strTable hands out strings equal to what it was given and sharing
// none of its memory, through its recent slots (strings of one length and
// the same end bytes share a slot), its map, and after the map starts
// over.
func TestStrTableCopies(t *testing.T) {
	var want []string
	for i := range 3 * maxTableStrings {
		want = append(want, fmt.Sprintf("a%db", i%(maxTableStrings+300)))
	}
	want = append(want, "", "axb", "ayb", "axb", strings.Repeat("x", maxTableString), strings.Repeat("y", maxTableString+1))
	var tab strTable
	for round := range 2 {
		for _, w := range want {
			buf := []byte(w)
			src := strings.Clone(w)
			if round == 0 && len(buf) > 0 {
				src = unsafe.String(&buf[0], len(buf)) // changed below through buf
			}
			got := tab.str(src)
			val := tab.value(src)
			for i := range buf {
				buf[i] = '#'
			}
			if got != w || val.(string) != w {
				t.Fatalf("str(%q) = %q, value %q", w, got, val)
			}
		}
	}
}
