package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// toolPaths caches .ci/tools.sh's answers for the test binary's life.
var toolPaths sync.Map

// externalTool returns the path of a program the tests drive for real
// (helm, kube-apiserver), built once by .ci/tools.sh into a cache outside
// the repository (its first build takes a while: helm about a minute,
// kube-apiserver about five). The test skips, saying why, when it cannot be
// built (no Go module proxy).
func externalTool(t *testing.T, name string) string {
	t.Helper()
	if p, ok := toolPaths.Load(name); ok {
		return p.(string)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", ".ci", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", script, name)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("%s cannot be built here (%v): %s", name, err, strings.TrimSpace(stderr.String()))
	}
	path := strings.TrimSpace(string(out))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf(".ci/tools.sh %s printed %q: %v", name, path, err)
	}
	toolPaths.Store(name, path)
	return path
}

// onPath puts program (an absolute path) on PATH under name for the test.
func onPath(t *testing.T, name, program string) {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(program, filepath.Join(bin, name)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}
