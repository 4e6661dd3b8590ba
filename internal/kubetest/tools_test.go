package kubetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stubGo stands in for the go command in .ci/tools.sh: it answers the
// commands the script runs and "builds" each tool as an empty executable,
// so that the script's own logic runs whole in a second.
const stubGo = `#!/bin/sh
case "$1" in
env) echo "$STUB_DIR/gocache" ;;
mod)
  case "$2" in
  download) printf '{\n\t"GoMod": "%s",\n}\n' "$STUB_DIR/kubernetes.mod" ;;
  esac ;;
build)
  while [ $# -gt 0 ]; do
    if [ "$1" = -o ]; then : > "$2"; chmod +x "$2"; fi
    shift
  done ;;
install) : > "$GOBIN/helm"; chmod +x "$GOBIN/helm" ;;
esac
`

// TestToolsScriptFirstBuild runs .ci/tools.sh as a fresh machine does, the
// cache empty, with a stub go command: it must build both tools, print
// their paths and exit 0 without an error on the way. A fresh clone's
// make test printed "work: unbound variable" after building
// kube-apiserver (a RETURN trap outliving its function) and stopped the
// background build there, and each build's progress ticker held its end
// for up to a minute.
func TestToolsScriptFirstBuild(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", ".ci", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	stub := t.TempDir()
	if err := os.WriteFile(filepath.Join(stub, "go"), []byte(stubGo), 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "module k8s.io/kubernetes\n\ngo 1.26.0\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n)\n"
	if err := os.WriteFile(filepath.Join(stub, "kubernetes.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	tools := t.TempDir()
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "PATH="+stub+string(os.PathListSeparator)+os.Getenv("PATH"),
		"STUB_DIR="+stub, "GWDEV_TOOLS="+tools)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	// A bound against a hang, not a speed test: the stub builds take
	// milliseconds, and a progress ticker that outlived its build held
	// the script's end (and its stderr) for up to a minute per tool.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("tools.sh took %v with builds that take milliseconds: something it started outlived its build", d.Round(time.Second))
	}
	if err != nil {
		t.Fatalf("tools.sh: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	if strings.Contains(stderr.String(), "unbound") || strings.Contains(stderr.String(), "line ") {
		t.Errorf("tools.sh reported an error on the way:\n%s", stderr.String())
	}
	paths := strings.Fields(string(out))
	if len(paths) != 2 || !strings.HasPrefix(paths[0], filepath.Join(tools, "kube-apiserver-")) ||
		!strings.HasPrefix(paths[1], filepath.Join(tools, "helm-")) {
		t.Fatalf("tools.sh printed %q, want the paths of kube-apiserver and helm in %s", out, tools)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o100 == 0 {
			t.Errorf("%s is not an executable: %v", p, err)
		}
	}
	for _, line := range []string{"tools: built kube-apiserver", "tools: built helm"} {
		if !strings.Contains(stderr.String(), line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr.String())
		}
	}
}
