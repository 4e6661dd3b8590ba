package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCheckBadInput tries what a new user would throw at gwdev: a broken
// YAML file among good ones, an unknown kind, an HTTPS listener without
// certificateRefs, a 5 MB file, a symlink loop and a binary file. Each gets a
// clear message with file (and line where there is one), and the good
// objects are still translated.
func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gateway.yaml", `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: 80}]
`)
	write("route.yaml", `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: web}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {ports: [{port: 80}]}
`)
	write("broken.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: broken\n spec: {\n")
	write("widget.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
	write("https.yaml", `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: secure}
spec:
  gatewayClassName: gwdev
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    tls:
      mode: Terminate
`)
	var big strings.Builder
	payload := strings.Repeat("x", 50_000)
	for i := 0; big.Len() < 5<<20; i++ {
		big.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-" + strconv.Itoa(i) + "\ndata:\n  blob: " + payload + "\n---\n")
	}
	write("big.yaml", big.String())
	write("blob.yaml", string([]byte{0x7f, 'E', 'L', 'F', 0, 0, 1, 2, 0xff, 0xfe}))
	if err := os.Mkdir(filepath.Join(dir, "loop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "loop", "up")); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runGwdev(t, "", "check", dir)
	if code != exitProblems {
		t.Errorf("exit %d, want %d", code, exitProblems)
	}
	for _, want := range []string{
		"broken.yaml:5:",                         // YAML syntax error with its line
		"binary file",                            // the binary file
		"symlink loop",                           // the loop, reported once and not followed
		"widget.yaml:1: example.com/v1 Widget w", // unknown kind listed, skipped
		"https.yaml:1",                           // the HTTPS listener problem, located
		"certificateRefs",                        // ... and explained
		"HTTPRoute default/app",                  // good objects still translated
		"→ Gateway default/web  ✓ Accepted  ✓ ResolvedRefs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
}
