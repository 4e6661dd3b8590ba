package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gwdev/gwdev/internal/kubetest"
)

// externalTool returns the path of a program the tests drive for real
// (helm, kube-apiserver), built once by .ci/tools.sh into a cache outside
// the repository (its first build takes a while: helm about two,
// kube-apiserver about eight). The test skips, saying why, when it cannot be
// built (no Go module proxy).
func externalTool(t *testing.T, name string) string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", ".ci", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return kubetest.Tool(t, script, name)
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
