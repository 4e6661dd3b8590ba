package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/cputime"
)

// TestAliasBombEveryFile: the same alias bomb (testdata/billion-laughs.yaml,
// nine levels of nine aliases, 387 million leaves once expanded) as a
// manifest and as gwdev.yaml is refused quickly with file:line:column.
func TestAliasBombEveryFile(t *testing.T) {
	bomb, err := os.ReadFile(filepath.Join("testdata", "billion-laughs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bomb.yaml", "gwdev.yaml"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, name), bomb, 0o644); err != nil {
				t.Fatal(err)
			}
			// CPU time, which a loaded machine does not stretch as it
			// does wall time; expanding the bomb would take seconds of it.
			cpu0, _ := cputime.Process()
			out, errOut, code := runGwdev(t, "", "check", dir)
			cpu1, measured := cputime.Process()
			want, wantCode := "bomb.yaml:8:38: ConfigMap/bomb: yaml: excessive aliasing: *c expands to 1729 nodes", exitProblems
			if name == "gwdev.yaml" {
				out = errOut
				want, wantCode = "gwdev.yaml:8:38: yaml: excessive aliasing: *c expands to 1729 nodes", exitUsage
			}
			if code != wantCode || !strings.Contains(out, want) {
				t.Errorf("exit %d, want %d and %q in:\n%s", code, wantCode, want, out)
			}
			if took := cpu1 - cpu0; measured && took > 3*time.Second {
				t.Errorf("took %s of CPU", took)
			}
		})
	}
}
