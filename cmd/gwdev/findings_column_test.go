package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/internal/report"
)

// columnsFolder holds a Gateway and, in one file, a route whose backendRef
// names a Service that does not exist (a finding at the backendRef, an
// indented list item) and a route whose parentRef names a Gateway that
// does not exist (a finding at the parentRef), after a comment line, and a
// route without parentRefs (a note about the whole object).
func columnsFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gw.yaml"), `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - name: http
    protocol: HTTP
    port: 80
`)
	writeFile(t, filepath.Join(dir, "routes.yaml"), `# routes of the shop
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
spec:
  parentRefs:
    - name: gw
  rules:
    - matches:
        - path: {type: PathPrefix, value: /}
      backendRefs:
        - name: missing
          port: 80
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: orphan
spec:
  parentRefs:
  -   name: nogw
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: lonely
spec:
  hostnames: [lonely.example]
`)
	return dir
}

// TestCheckFindingColumns: the engine's findings carry the column of the
// field they are about (the backendRef, the parentRef), or of the object's
// first field when they have no field path, in -o json, in the GitHub
// annotations and as the SARIF region's startColumn.
func TestCheckFindingColumns(t *testing.T) {
	dir := columnsFolder(t)
	routes := filepath.Join(dir, "routes.yaml")
	type at struct {
		line, col int
		text      string // in the GitHub annotation
		route     string
	}
	want := map[string]at{
		"BackendNotFound":  {13, 11, "BackendNotFound", "shop"},      // `- name: missing`, at `name`
		"NoMatchingParent": {22, 7, "NoMatchingParent", "orphan"},    // `-   name: nogw`, at `name`
		report.CodeNote:    {24, 1, "attaches to nothing", "lonely"}, // the lonely route's `apiVersion:`
	}

	j, errOut, code := runGwdev(t, "", "check", "-o", "json", dir)
	if code != exitProblems {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var list struct {
		Findings []report.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(j), &list); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range list.Findings {
		w, ok := want[f.Code]
		if !ok || f.Object == nil || f.Object.Name != w.route {
			continue
		}
		seen[f.Code] = true
		if f.File != routes || f.Line != w.line || f.Column != w.col {
			t.Errorf("%s at %s:%d:%d (field %s), want %s:%d:%d", f.Code, f.File, f.Line, f.Column, f.Field, routes, w.line, w.col)
		}
	}
	for code := range want {
		if !seen[code] {
			t.Errorf("no %s finding in -o json: %s", code, j)
		}
	}

	gh, _, _ := runGwdev(t, "", "check", "--format", "github", dir)
	for code, w := range want {
		prefix := " file=" + filepath.ToSlash(routes) + ",line=" + itoaTest(w.line) + ",col=" + itoaTest(w.col) + ","
		found := false
		for _, l := range strings.Split(gh, "\n") {
			if strings.Contains(l, prefix) && strings.Contains(l, w.text) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s annotation starting %q:\n%s", code, prefix, gh)
		}
	}

	out, _, _ := runGwdev(t, "", "check", "--format", "sarif", dir)
	log := checkSARIF(t, sarifSchema(t), "columns", out)
	seen = map[string]bool{}
	for _, r := range log.Runs[0].Results {
		w, ok := want[r.RuleID]
		if !ok || !strings.Contains(r.Message.Text, "HTTPRoute/default/"+w.route) {
			continue
		}
		seen[r.RuleID] = true
		reg := r.Locations[0].PhysicalLocation.Region
		if reg.StartLine != w.line || reg.StartColumn != w.col {
			t.Errorf("SARIF %s region %+v, want line %d column %d", r.RuleID, *reg, w.line, w.col)
		}
	}
	for code := range want {
		if !seen[code] {
			t.Errorf("no SARIF result for %s", code)
		}
	}
}
