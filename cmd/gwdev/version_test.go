package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
)

func TestVersionFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-11-01T10:00:00Z"}}
	cases := []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		want          string
	}{
		// go install github.com/gwdev/gwdev/cmd/gwdev@v1.2.3: the module version.
		{"go install @version", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3 (go1.26.8)"},
		// go build in a checkout (Go 1.24 on): a pseudo-version from the
		// commit, and the commit.
		{"checkout, pseudo-version", "", &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v0.0.0-20261101100000-0123456789ab"}, Settings: vcs},
			"v0.0.0-20261101100000-0123456789ab (commit 0123456789abcdef, 2026-11-01T10:00:00Z, go1.27.3)"},
		// go build -buildvcs=false, or Go before 1.24: (devel), and the commit
		// when one was recorded.
		{"checkout", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			"devel (commit 0123456789abcdef, 2026-11-01T10:00:00Z, go1.26.8)"},
		{"dirty checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(slices.Clone(vcs), debug.BuildSetting{Key: "vcs.modified", Value: "true"})},
			"devel (commit 0123456789abcdef-dirty, 2026-11-01T10:00:00Z)"},
		// make release: -ldflags -X main.version wins.
		{"release", "v2.0.0", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			"v2.0.0 (commit 0123456789abcdef, 2026-11-01T10:00:00Z, go1.26.8)"},
		{"no build info", "", nil, "devel"},
	}
	for _, c := range cases {
		if got := versionFrom(c.ldflags, c.bi, c.bi != nil).String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	old := version
	defer func() { version = old }()
	version = "v9.9.9" // what -ldflags "-X main.version=v9.9.9" sets
	out, _, code := runGwdev(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "gwdev v9.9.9") || !strings.Contains(out, "Gateway API "+engine.APIVersion) {
		t.Errorf("exit %d: %q", code, out)
	}
	// The test binary is built by go test: its main module is gwdev.
	if bi, ok := debug.ReadBuildInfo(); !ok || bi.Main.Path != "github.com/gwdev/gwdev" {
		t.Errorf("build info: %v %v", ok, bi)
	}
}

// TestCompletionScripts: the shells the README documents get a script.
func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, errOut, code := runGwdev(t, "", "completion", sh)
		if code != 0 || !strings.Contains(out, "gwdev") || len(out) < 1000 {
			t.Errorf("completion %s: exit %d: %s", sh, code, errOut)
		}
	}
}

// TestMakeRelease runs `make release` with a stand-in for go that records
// each build and writes a small file: every platform is built once, with
// its GOOS/GOARCH, CGO off, the version stamped by -ldflags and the right
// file name, and SHA256SUMS holds each file's checksum. (A real cross
// build of every platform takes minutes of CPU; CI runs make release.)
func TestMakeRelease(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	tmp := t.TempDir()
	fakeGo := filepath.Join(tmp, "go")
	log := filepath.Join(tmp, "builds.log")
	script := `#!/bin/sh
out=""
prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
echo "$GOOS/$GOARCH CGO_ENABLED=$CGO_ENABLED $*" >> ` + log + `
printf 'binary for %s/%s\n' "$GOOS" "$GOARCH" > "$out"
`
	if err := os.WriteFile(fakeGo, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(tmp, "dist")
	cmd := exec.Command("make", "-s", "-C", "../..", "release", "GO="+fakeGo, "VERSION=v9.9.9", "DIST="+dist)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	builds := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}
	if len(builds) != len(want) {
		t.Fatalf("%d builds, want %d:\n%s", len(builds), len(want), b)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range want {
		goos, goarch, _ := strings.Cut(p, "/")
		name := "gwdev_v9.9.9_" + goos + "_" + goarch
		if goos == "windows" {
			name += ".exe"
		}
		if !strings.HasPrefix(builds[i], p+" CGO_ENABLED=0 build -trimpath -ldflags -s -w -X main.version=v9.9.9 -o "+filepath.Join(dist, name)+" ./cmd/gwdev") {
			t.Errorf("build %d: %s", i, builds[i])
		}
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if !strings.Contains(string(sums), hex.EncodeToString(sum[:])+"  "+name+"\n") {
			t.Errorf("SHA256SUMS lacks %s:\n%s", name, sums)
		}
	}
}
