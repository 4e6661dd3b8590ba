package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLSPInNeovim runs `gwdev lsp` under a real editor: headless Neovim
// (testdata/lsp/nvim.lua) opens samples/https's gateway.yaml, types a
// wrong sectionName, and reports the diagnostic it shows, the hover text
// on the parentRef and where a definition jump from another parentRef
// lands. The file on disk is never written. It skips when nvim is not
// installed (.ci/run installs Debian's neovim) or with -short.
func TestLSPInNeovim(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not installed (apt-get install neovim)")
	}
	if testing.Short() {
		t.Skip("builds gwdev and drives it from Neovim")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "gwdev")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building gwdev: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "https")
	if err := os.CopyFS(dir, os.DirFS("../../samples/https")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "gateway.yaml")
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/lsp/nvim.lua")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-n", "-i", "NONE", "-u", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GWDEV_BIN="+bin, "GWDEV_ROOT="+dir, "GWDEV_FILE="+file, "GWDEV_OUT="+out,
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"), "XDG_DATA_HOME="+filepath.Join(tmp, "data"), "XDG_STATE_HOME="+filepath.Join(tmp, "state"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("nvim wrote no result: %v", err)
	}
	var res struct {
		Error      string `json:"error"`
		Typed      string `json:"typed"`
		Diagnostic struct {
			Line    int    `json:"line"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"diagnostic"`
		Hover      string `json:"hover"`
		Definition struct {
			Line int    `json:"line"`
			Text string `json:"text"`
		} `json:"definition"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	if res.Error != "" {
		t.Fatalf("in nvim: %s (%s)", res.Error, data)
	}
	lines := strings.Split(string(before), "\n")
	lineOf := func(s string) int { // 0-based
		for i, l := range lines {
			if strings.Contains(l, s) {
				return i
			}
		}
		t.Fatalf("%q not in gateway.yaml", s)
		return -1
	}
	if strings.TrimSpace(res.Typed) != "sectionName: admim" {
		t.Errorf("typed line: %q", res.Typed)
	}
	if want := lineOf("sectionName: admin") - 1; res.Diagnostic.Line != want || !strings.Contains(res.Diagnostic.Message, `sectionName "admim"`) {
		t.Errorf("diagnostic at line %d (want %d, the parentRef): %+v", res.Diagnostic.Line, want, res.Diagnostic)
	}
	if !strings.Contains(res.Hover, "not attached") || !strings.Contains(res.Hover, "NoMatchingParent") {
		t.Errorf("hover text:\n%s", res.Hover)
	}
	if want := lineOf("- name: https") + 1; res.Definition.Line != want {
		t.Errorf("definition jump to line %d %q, want %d (listener https)", res.Definition.Line, res.Definition.Text, want)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Error("gateway.yaml on disk changed: the server or the test wrote it")
	}
}
