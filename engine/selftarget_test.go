package engine_test

import (
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestSelfTargetFindings: a --backend mapping (localhost, the fallback
// port) and an Ingress mirror-target mapped to gwdev's own Ingress address
// are each warned about, naming the mapping, the route and the listener;
// with PortOffset negative (no fallback) the fallback port is not gwdev's.
func TestSelfTargetFindings(t *testing.T) {
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
metadata: {name: r}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: self, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: self}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: mirror}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: mirrored
  annotations:
    nginx.ingress.kubernetes.io/mirror-target: http://mirror.default.svc.cluster.local$request_uri
spec:
  ingressClassName: nginx
  rules:
  - host: m.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`
	lr := testkit.Project(t).LoadBytes("loops.yaml", []byte(manifests))
	for _, p := range lr.Problems {
		t.Fatalf("load problem: %s", p)
	}
	first := engine.Translate(lr.Snapshot, engine.Options{})
	var ingressAddr string
	for _, g := range first.Table.Gateways {
		if len(g.Ports) > 0 && strings.Contains(g.Name, "ingress") {
			ingressAddr = g.Address
		}
	}
	if ingressAddr == "" {
		t.Fatalf("no ingress-nginx entry in the table: %v", first.Table.Gateways)
	}
	loops := func(opts engine.Options) []engine.Finding {
		var out []engine.Finding
		for _, f := range engine.Translate(lr.Snapshot, opts).Findings {
			if f.Reason == engine.ReasonLoopsIntoGwdev {
				out = append(out, f)
			}
		}
		return out
	}
	mappings := map[string]string{"default/self:80": "localhost:8080", "default/mirror:80": ingressAddr + ":80"}
	got := loops(engine.Options{BackendMappings: mappings})
	if len(got) != 2 {
		t.Fatalf("%d loop findings, want 2: %v", len(got), got)
	}
	byKind := map[string]engine.Finding{}
	for _, f := range got {
		byKind[f.Object.Kind] = f
		if f.Severity != engine.SeverityWarning {
			t.Errorf("%s: severity %s, want warning", f.Object, f.Severity)
		}
	}
	hr, ing := byKind["HTTPRoute"], byKind["Ingress"]
	for _, want := range []string{"backend default/self:80 resolves to localhost:8080", "default/self:80=localhost:8080",
		`Gateway default/gw listener "http"`, "when gwdev cannot bind port 80"} {
		if !strings.Contains(hr.Message, want) {
			t.Errorf("HTTPRoute finding %q lacks %q", hr.Message, want)
		}
	}
	if hr.Object.Name != "r" || hr.Scope != "rules[0]" || hr.Source.Line == 0 {
		t.Errorf("HTTPRoute finding at %s %q line %d", hr.Object, hr.Scope, hr.Source.Line)
	}
	for _, want := range []string{"mirror default/mirror:80 resolves to " + ingressAddr + ":80", "default/mirror:80=" + ingressAddr + ":80"} {
		if !strings.Contains(ing.Message, want) {
			t.Errorf("Ingress finding %q lacks %q", ing.Message, want)
		}
	}
	if ing.Object.Name != "mirrored" {
		t.Errorf("Ingress finding about %s", ing.Object)
	}
	noFallback := loops(engine.Options{BackendMappings: mappings, PortOffset: -1})
	if len(noFallback) != 1 || noFallback[0].Object.Kind != "Ingress" {
		t.Errorf("without a fallback offset: %v, want only the Ingress mirror", noFallback)
	}
	if got := loops(engine.Options{BackendMappings: map[string]string{"default/self:80": "127.0.0.1:3000"}}); len(got) != 0 {
		t.Errorf("a mapping to a port no listener has is warned about: %v", got)
	}
}
