package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGraphShowsFilters: a rule's URLRewrite and header modifiers are on
// its node in every format (they were left out), said as the dashboard's
// Routes view says them.
func TestGraphShowsFilters(t *testing.T) {
	dir := t.TempDir()
	manifests := `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api}
spec:
  parentRefs: [{name: web}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    filters:
    - type: URLRewrite
      urlRewrite: {hostname: api.internal, path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2}}
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: X-Env, value: dev}], remove: [Cookie]}
    - type: ResponseHeaderModifier
      responseHeaderModifier: {add: [{name: X-Served-By, value: gwdev}]}
    backendRefs: [{name: api, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec: {ports: [{port: 80}]}
`
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"URLRewrite (host api.internal, path prefix → /v2)",
		"RequestHeaderModifier (set X-Env: dev, remove Cookie)",
		"ResponseHeaderModifier (add X-Served-By: gwdev)",
	}
	for _, format := range []string{"mermaid", "dot"} {
		out, errOut, code := runGwdev(t, "", "graph", "--format", format, dir)
		if code != 0 {
			t.Fatalf("graph --format %s: exit %d: %s", format, code, errOut)
		}
		if format == "dot" {
			checkDOT(t, "filters", out)
		}
		for _, w := range want {
			// DOT and Mermaid escape quotes, not these characters.
			if !strings.Contains(out, w) {
				t.Errorf("graph --format %s lacks %s:\n%s", format, strconv.Quote(w), out)
			}
		}
	}
}
