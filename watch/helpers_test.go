package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (path relative to dir → content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newTestLoader returns a Loader or fails the test.
func newTestLoader(t testing.TB) *Loader {
	t.Helper()
	l, err := NewLoader()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// problemStrings renders problems with paths relative to dir.
func problemStrings(dir string, ps []Problem) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, strings.TrimPrefix(p.String(), dir+string(filepath.Separator)))
	}
	return out
}

// loadTree writes files into a temporary directory and loads it.
func loadTree(t testing.TB, files map[string]string) (string, *LoadResult) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	return dir, newTestLoader(t).LoadDir(dir)
}

// eachCELNode calls fn for n and every node below it.
func eachCELNode(n *celNode, fn func(*celNode)) {
	if n == nil {
		return
	}
	fn(n)
	eachCELNode(n.items, fn)
	eachCELNode(n.additional, fn)
	for _, c := range n.properties {
		eachCELNode(c, fn)
	}
	for _, c := range n.allOf {
		eachCELNode(c, fn)
	}
}
