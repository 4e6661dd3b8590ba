package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGraphShowsPolicies: graph draws each policy as a node of its own (a
// note in DOT, a hexagon in Mermaid) with a dashed edge to the target it
// names, and a policy whose target is missing red with the reason, with no
// edge, in both formats; Graphviz's dot parses the DOT.
func TestGraphShowsPolicies(t *testing.T) {
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
  rules: [{backendRefs: [{name: api, port: 443}]}]
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: api-tls}
spec:
  targetRefs: [{group: "", kind: Service, name: api, sectionName: https}]
  validation: {hostname: api.internal, wellKnownCACertificates: System}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: gone-tls}
spec:
  targetRefs: [{group: "", kind: Service, name: gone}]
  validation: {hostname: gone.internal, wellKnownCACertificates: System}
`
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	dot, errOut, code := runGwdev(t, "", "graph", "--format", "dot", dir)
	if code != 0 {
		t.Fatalf("graph --format dot: exit %d: %s", code, errOut)
	}
	_, red := checkDOT(t, "policies", dot)
	for _, want := range []string{
		`"backendtlspolicy/default/api-tls" [label="BackendTLSPolicy default/api-tls\nTLS to the backends, SNI api.internal, system CAs", fillcolor="#ede9fe", shape=note, style=filled, color="#6d28d9"];`,
		`"backendtlspolicy/default/api-tls" -> "service/default/api:443" [color="#6d28d9", style=dashed];`,
		`"backendtlspolicy/default/gone-tls" [label="BackendTLSPolicy default/gone-tls\n✗ TargetNotFound: Service default/gone", fillcolor="#fecaca", shape=note, style=filled, color="#b91c1c", penwidth=2];`,
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("graph --format dot lacks\n%s\n%s", want, dot)
		}
	}
	if strings.Contains(dot, `"backendtlspolicy/default/gone-tls" ->`) {
		t.Errorf("an edge from the policy whose target is missing:\n%s", dot)
	}
	if strings.Join(red, " ") != `"backendtlspolicy/default/gone-tls"` {
		t.Errorf("red nodes %v, want the policy whose target is missing", red)
	}
	if dotBin, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command(dotBin, "-Tsvg")
		cmd.Stdin = strings.NewReader(dot)
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "<svg") {
			t.Errorf("dot: %v: %.300s", err, out)
		}
	}

	mm, errOut, code := runGwdev(t, "", "graph", dir)
	if code != 0 {
		t.Fatalf("graph: exit %d: %s", code, errOut)
	}
	_, bad := checkMermaid(t, "policies", mm)
	ids := map[string]string{} // label's first line → Mermaid ID
	for _, m := range regexp.MustCompile(`(?m)^  (n[0-9]+)(?:\["|\{\{")([^<"]*)`).FindAllStringSubmatch(mm, -1) {
		ids[m[2]] = m[1]
	}
	tls, gone, svc := ids["BackendTLSPolicy default/api-tls"], ids["BackendTLSPolicy default/gone-tls"], ids["Service default/api:443"]
	for _, want := range []string{
		"  " + tls + `{{"BackendTLSPolicy default/api-tls<br/>TLS to the backends, SNI api.internal, system CAs"}}`,
		"  " + tls + " -.-> " + svc + "\n",
		"  class " + tls + " policy\n",
		"  " + gone + `{{"BackendTLSPolicy default/gone-tls<br/>✗ TargetNotFound: Service default/gone"}}`,
	} {
		if tls == "" || gone == "" || svc == "" || !strings.Contains(mm, want) {
			t.Errorf("graph (mermaid) lacks %q:\n%s", want, mm)
		}
	}
	if strings.Join(bad, " ") != gone {
		t.Errorf("bad nodes %v, want %s", bad, gone)
	}
}
