package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpOpensWebView: up prints the web view's URL at start, and --open
// hands that URL to the system's opener (xdg-open here: a fake one on PATH
// that writes down what it was given).
func TestUpOpensWebView(t *testing.T) {
	bin := t.TempDir()
	got := filepath.Join(bin, "opened")
	writeFile(t, filepath.Join(bin, "xdg-open"), "#!/bin/sh\necho \"$@\" > "+got+"\n")
	if err := os.Chmod(filepath.Join(bin, "xdg-open"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "routes.yaml"), fmt.Sprintf(upGateway, freePort(t)))
	out := runUp(t, &upOptions{noTUI: true, open: true, admin: fmt.Sprintf("127.0.0.1:%d", freePort(t))}, dir)
	url := webViewURL(t, out)
	waitForUp(t, out, "xdg-open to run", func() bool {
		b, _ := os.ReadFile(got)
		return strings.TrimSpace(string(b)) == url
	})
}

// TestUpOpenWithoutAdmin: --open with the admin API off says there is no
// web view to open.
func TestUpOpenWithoutAdmin(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "routes.yaml"), fmt.Sprintf(upGateway, freePort(t)))
	out := runUp(t, &upOptions{noTUI: true, open: true, admin: "off"}, dir)
	waitForOutput(t, out, "gwdev: --open: the web view is not served (the admin API is off)")
}
