package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReportsXBackendFields: an XBackend field gwdev does not enforce
// is a warning naming it; plain check exits 0, --strict exits 1. The kinds
// are loaded, not skipped.
func TestCheckReportsXBackendFields(t *testing.T) {
	dir := t.TempDir()
	m := `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: mcp}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: mcp}
spec:
  type: ExternalHostname
  externalHostname: {hostname: mcp.example.com}
  port: {number: 8080}
  protocol: MCP
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: p}
spec:
  targetRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: mcp}]
  sessionPersistence: {type: Header, header: {name: X-Session}}
`
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runGwdev(t, "", "check", dir)
	want := "spec.protocol MCP is not enforced by gwdev"
	if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "Skipped") {
		t.Errorf("check: exit %d, want 0 with a warning %q and nothing skipped:\n%s", code, want, out)
	}
	if _, _, code := runGwdev(t, "", "check", "--strict", dir); code != 1 {
		t.Errorf("check --strict: exit %d, want 1 for the warning", code)
	}
}
