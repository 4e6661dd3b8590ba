package lsp

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/report"
)

// view is what one State of the Session says, indexed for the editor:
// the findings as diagnostics by file, and every object by file and
// line. It is never modified once built.
type view struct {
	state *app.State
	// findings are report.Findings of the State: what check -o json says.
	findings []report.Finding
	// files are the objects of each file (absolute path), by line.
	files map[string][]*placed
	// byKey finds an object's place.
	byKey map[engine.ObjectKey]*placed
	// text is each file's text the State was made of, as lines (the open
	// buffer's, else the disk's), read when first needed.
	text map[string][]string
}

// placed is one object and where it is written.
type placed struct {
	key engine.ObjectKey
	// obj is the object with its computed status (the Result's).
	obj metav1.Object
	src engine.Source
	// path is src.File made absolute.
	path string
	// end is the first line (1-based) after the object: the next object's
	// first line in the same file (0: the end of the file).
	end int
	// json is obj as a JSON tree, made once by tree (fields.go).
	json     tree
	jsonOnce sync.Once
}

// newView indexes st; texts are the open buffers' texts by path.
func newView(st *app.State, texts map[string]string) *view {
	v := &view{state: st, files: map[string][]*placed{}, byKey: map[engine.ObjectKey]*placed{}, text: map[string][]string{}}
	v.findings = report.Findings(st.Update.Result, st.Result)
	for p, t := range texts {
		v.text[p] = lines(t)
	}
	srcs := st.Update.Result.Snapshot
	st.Result.Objects.Each(func(k engine.ObjectKey, obj metav1.Object) {
		src := srcs.SourceOf(k)
		if src.File == "" {
			return
		}
		pl := &placed{key: k, obj: obj, src: src, path: absPath(src.File)}
		v.files[pl.path] = append(v.files[pl.path], pl)
		v.byKey[k] = pl
	})
	for _, objs := range v.files {
		slices.SortStableFunc(objs, func(a, b *placed) int { return a.src.Line - b.src.Line })
		for i := range objs {
			if i+1 < len(objs) {
				objs[i].end = objs[i+1].src.Line
			}
		}
	}
	return v
}

// absPath makes a loader's file name absolute (the project is opened at
// an absolute path, so this only cleans it).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// lines returns the text of path the State was made of (nil: unreadable).
func (v *view) lines(path string) []string {
	if ls, ok := v.text[path]; ok {
		return ls
	}
	data, err := os.ReadFile(path) // read only: the server never writes a file
	var ls []string
	if err == nil && len(data) <= MaxDocumentBytes {
		ls = lines(string(data))
	}
	v.text[path] = ls
	return ls
}

// line returns line n (1-based) of path ("" : none).
func (v *view) line(path string, n int) string {
	ls := v.lines(path)
	if n < 1 || n > len(ls) {
		return ""
	}
	return ls[n-1]
}

// objectAt returns the object written at line (1-based) of path (nil:
// none).
func (v *view) objectAt(path string, line int) *placed {
	var at *placed
	for _, o := range v.files[path] {
		if o.src.Line > line {
			break
		}
		// An object's document starts before its first field: a line
		// between the previous object's end and this one's belongs to it
		// only from its own first line on.
		at = o
	}
	return at
}

// fieldAt returns the field path of the list item (spec.listeners[i],
// spec.parentRefs[i], spec.rules[i], spec.rules[i].backendRefs[j]) the
// line is in, the nearest one written at or above it in o ("" : none).
func (v *view) fieldAt(o *placed, line int) string {
	best, bestLine := "", 0
	for path, pos := range o.src.Fields {
		l := int(pos.Line)
		if l > line || l < bestLine || strings.HasPrefix(path, "metadata.annotations[") {
			continue
		}
		// At the same line, the deeper path (a backendRef inside its rule).
		if l == bestLine && len(path) < len(best) {
			continue
		}
		best, bestLine = path, l
	}
	return best
}

// itemIndex parses the indexes of a field path such as
// "spec.rules[1].backendRefs[0]": [1 0].
func itemIndex(path string) []int {
	var out []int
	for {
		i := strings.IndexByte(path, '[')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(path[i:], ']')
		if j < 0 {
			return out
		}
		n, err := strconv.Atoi(path[i+1 : i+j])
		if err != nil {
			return out
		}
		out = append(out, n)
		path = path[i+j+1:]
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
