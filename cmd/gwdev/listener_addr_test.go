package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestExplainHintNamesTheAddress: explaining a host another Gateway serves
// names that Gateway's address:port in the hint.
func TestExplainHintNamesTheAddress(t *testing.T) {
	dir := t.TempDir()
	gw := func(name string, port int) string {
		return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %s}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: %d}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s}
spec:
  parentRefs: [{name: %s}]
  hostnames: [%s.example.com]
  rules: [{backendRefs: [{name: %s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: %s}
spec: {ports: [{port: 80}]}
`, name, port, name, name, name, name, name)
	}
	writeFile(t, filepath.Join(dir, "a.yaml"), gw("a", 8080))
	writeFile(t, filepath.Join(dir, "b.yaml"), gw("b", 8081))
	out, errOut, code := runGwdev(t, "", "explain", "--dir", dir, "http://b.example.com:8080/")
	want := "HTTPRoute/default/b serves host b.example.com on gateway/default/b/listener/http at 127.0.0.2:8081"
	if code != exitProblems || !strings.Contains(out, want) { // a 404: exit 1
		t.Errorf("exit %d %s\n%s\nwant a hint %q", code, errOut, out, want)
	}
}
