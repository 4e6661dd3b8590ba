package guard

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCmdLines bounds cmd/gwdev's non-test Go lines: commands only there
// (flags, help, exit codes, one call into internal/app or internal/report).
// The application grew in package main until 8,745 lines (issue 36).
const maxCmdLines = 2500

// TestCmdHoldsCommandsOnly fails when cmd/gwdev's non-test code grows past
// maxCmdLines: a pipeline, reload, comparison or encoder written there
// belongs in internal/app or internal/report, where the next front end
// can use it.
func TestCmdHoldsCommandsOnly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root(t), "cmd", "gwdev", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(data, []byte("\n"))
	}
	if total == 0 || total > maxCmdLines {
		t.Errorf("cmd/gwdev has %d non-test lines, want 1..%d: move what is not a command into internal/app or internal/report", total, maxCmdLines)
	}
}
