package engine_test

import (
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestRouteBackendsShareTargets: route backends of the same Service port
// share one Target (sharedTarget), while a Service naming an echo TLS
// Secret, whose resolution notes the Secret, is resolved for each.
func TestRouteBackendsShareTargets(t *testing.T) {
	const manifests = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a}
spec:
  parentRefs: [{name: gw}]
  hostnames: [a.example]
  rules:
  - backendRefs: [{name: web, port: 80}, {name: tls, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: b}
spec:
  parentRefs: [{name: gw}]
  hostnames: [b.example]
  rules:
  - backendRefs: [{name: web, port: 80}, {name: tls, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Service
metadata:
  name: tls
  annotations: {gwdev.dev/echo-tls-secret: missing}
spec:
  ports: [{name: http, port: 80}]
`
	lr := testkit.Project(t).LoadBytes("shared.yaml", []byte(manifests))
	for _, p := range lr.Problems {
		t.Fatalf("load problem: %s", p)
	}
	res := engine.Translate(lr.Snapshot, engine.Options{})
	targets := map[string][]*engine.Target{}
	for _, g := range res.Table.Gateways {
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				for _, vh := range l.VirtualHosts {
					for _, r := range vh.Rules {
						for _, b := range r.Backends {
							targets[b.Service.Name] = append(targets[b.Service.Name], b.Target)
						}
					}
				}
			}
		}
	}
	if web := targets["web"]; len(web) != 2 || web[0] != web[1] || web[0] == nil {
		t.Errorf("Service web's backends: %d Targets %p, want 2 sharing one", len(web), web)
	}
	if tls := targets["tls"]; len(tls) != 2 || tls[0] == tls[1] {
		t.Errorf("Service tls's backends: %d Targets %p, want 2 of their own", len(tls), tls)
	}
}
