package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A folder that does not exist is a usage error (exit 2), not a problem
// in the manifests (issue 13, item 6).
func TestCheckMissingFolder(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	for _, args := range [][]string{{"check", missing}, {"check", "-f", missing}, {"check", missing, "-o", "yaml"}} {
		out, errOut, code := runGwdev(t, "", args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stdout %q, stderr %q)", args, code, exitUsage, out, errOut)
		}
		if !strings.Contains(errOut, missing) || !strings.Contains(errOut, "no such file or directory") {
			t.Errorf("%v: stderr %q does not name the missing folder", args, errOut)
		}
	}
}

// A folder with no manifests is not "No problems": check says there was
// nothing to check and exits 1, so a CI job pointed at the wrong folder
// fails (issue 13, item 6).
func TestCheckEmptyFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runGwdev(t, "", "check", dir)
	if code != exitProblems {
		t.Errorf("exit %d, want %d", code, exitProblems)
	}
	if strings.Contains(out, "No problems") || !strings.Contains(out, "No manifests found in "+dir) {
		t.Errorf("summary does not say the folder has no manifests:\n%s", out)
	}
	for _, format := range []string{"yaml", "json"} {
		_, errOut, code := runGwdev(t, "", "check", dir, "-o", format)
		if code != exitProblems || !strings.Contains(errOut, "No manifests found in "+dir) {
			t.Errorf("-o %s: exit %d, stderr %q", format, code, errOut)
		}
	}
	// Empty standard input is the same: nothing to check.
	_, errOut, code := runGwdev(t, "", "check", "-f", "-", "-o", "yaml")
	if code != exitProblems || !strings.Contains(errOut, "No manifests found in <stdin>") {
		t.Errorf("empty stdin: exit %d, stderr %q", code, errOut)
	}
}
