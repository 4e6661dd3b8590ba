// Command genroutes writes a folder of realistic Gateway API manifests for
// benchmarks: N HTTPRoutes (two rules each, path/header matches, a filter,
// weighted backendRefs) spread over 10 namespaces, their Services, and one
// shared Gateway.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	n := flag.Int("n", 1000, "number of HTTPRoutes")
	out := flag.String("o", "", "output directory (created)")
	perFile := flag.Int("per-file", 50, "routes per file")
	port := flag.Int("port", 80, "the Gateway listener's port")
	flag.Parse()
	if *out == "" {
		log.Fatal("-o is required")
	}
	if err := write(*out, *n, *perFile, *port); err != nil {
		log.Fatal(err)
	}
}

func write(dir string, n, perFile, port int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gw := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: shared, namespace: infra}
spec:
  gatewayClassName: gwdev
  listeners:
  - name: http
    protocol: HTTP
    port: %d
    allowedRoutes: {namespaces: {from: All}}
`, port)
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(gw), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	file := 0
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("routes-%04d.yaml", file)), []byte(b.String()), 0o644)
		b.Reset()
		file++
		return err
	}
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("team-%d", i%10)
		fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app-%[1]d, namespace: %[2]s}
spec:
  parentRefs: [{name: shared, namespace: infra}]
  hostnames: [app-%[1]d.example.com]
  rules:
  - matches:
    - path: {type: PathPrefix, value: /api/v1}
      headers: [{name: x-canary, value: "true"}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: x-route, value: app-%[1]d}]}
    backendRefs:
    - {name: app-%[1]d, port: 8080, weight: 90}
    - {name: app-%[1]d-canary, port: 8080, weight: 10}
  - matches:
    - path: {type: PathPrefix, value: /}
    backendRefs:
    - {name: app-%[1]d, port: 8080}
---
apiVersion: v1
kind: Service
metadata: {name: app-%[1]d, namespace: %[2]s}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: app-%[1]d-canary, namespace: %[2]s}
spec: {ports: [{name: http, port: 8080}]}
`, i, ns)
		if (i+1)%perFile == 0 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
