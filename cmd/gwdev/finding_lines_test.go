package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFindingsPointAtTheirField: a backendRef that does not resolve is
// reported at the backendRef's line, not the parentRef's; a bad gwin
// annotation at the annotation's line; a profile warning about a rule at
// the rule's line.
func TestFindingsPointAtTheirField(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs:
  - name: web
  rules:
  - backendRefs:
    - name: svc
      port: 80
    - name: missing
      port: 80
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {ports: [{port: 80}]}
`)
	out, _, _ := runGwdev(t, "", "check", dir)
	if want := "a.yaml:18  HTTPRoute/default/app  parentRefs[0]: Gateway default/web\n      ResolvedRefs=False BackendNotFound"; !strings.Contains(out, want) {
		t.Errorf("check output lacks %q:\n%s", want, out)
	}

	gwin, err := os.ReadFile("../../samples/gwin/routes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(string(gwin), "\n") {
		if strings.Contains(l, `gwin.yandex.cloud/rules.timeout: "30 seconds"`) {
			line = i + 1
		}
	}
	out, _, _ = runGwdev(t, "", "check", "../../samples/gwin")
	want := "samples/gwin/routes.yaml:" + itoaTest(line) + "  HTTPRoute/default/legacy"
	if line == 0 || !strings.Contains(out, want) || !strings.Contains(out, "rules.timeout") {
		t.Errorf("check output lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "routes.yaml:1  ") {
		t.Errorf("a finding points at the document's first line:\n%s", out)
	}
}

func itoaTest(i int) string { return strconv.Itoa(i) }
