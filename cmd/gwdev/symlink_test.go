package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckWarnsSymlinkOutside: check follows a symlink out of the folder
// and says so among the warnings, naming the link and its target; --strict
// turns it into exit 1.
func TestCheckWarnsSymlinkOutside(t *testing.T) {
	parent := t.TempDir()
	site, shared := filepath.Join(parent, "site"), filepath.Join(parent, "shared")
	for _, d := range []string{site, shared} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(shared, "route.yaml"), []byte(routeFile("a", "svc-a")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "gateway.yaml"), []byte(fmt.Sprintf(upGateway, 80)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(shared, "route.yaml"), filepath.Join(site, "route.yaml")); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(shared)
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := runGwdev(t, "", "check", site)
	want := "  ! " + filepath.Join(site, "route.yaml") + "\n      symlink to " + filepath.Join(real, "route.yaml") + ", outside the folder: followed\n"
	if !strings.Contains(out, "\nWarnings:\n"+want) || !strings.Contains(out, "HTTPRoute default/a") {
		t.Errorf("output lacks the warning %q or the route:\n%s", want, out)
	}
	if code != 0 {
		t.Errorf("exit %d: a warning is not an error", code)
	}
	if _, _, code := runGwdev(t, "", "check", "--strict", site); code != exitProblems {
		t.Errorf("--strict: exit %d, want %d", code, exitProblems)
	}
}
