package ingressnginx_test

import (
	"fmt"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestUnemulatedSecurityAnnotationDenies is the data-plane side of
// Annotation.Deny: an Ingress carrying, alone, a reported annotation marked
// Deny answers 403 on its locations; one carrying a Security annotation not
// marked Deny (it only tunes another annotation's check, or needs controller
// settings) is served as ingress-nginx serves it. Every Deny annotation is a
// Security one.
func TestUnemulatedSecurityAnnotationDenies(t *testing.T) {
	var cases int
	for _, a := range ingressnginx.AnnotationsReported() {
		if a.Deny && !a.Security {
			t.Errorf("%s denies but is not marked Security", a.Name)
		}
		if !a.Security {
			continue
		}
		cases++
		t.Run(a.Name, func(t *testing.T) {
			status := servedStatus(t, a.Name)
			switch {
			case a.Deny && status != 403:
				t.Errorf("an Ingress with only %s answers %d, want 403 (a security filter gwdev does not emulate denies)", a.Name, status)
			case !a.Deny && status != 0:
				t.Errorf("an Ingress with only %s answers %d directly, want it routed to its backend as ingress-nginx does", a.Name, status)
			}
		})
	}
	if cases < 8 {
		t.Fatalf("only %d reported Security annotations: the table lost its flags", cases)
	}
	for _, a := range ingressnginx.AnnotationsEmulated() {
		if a.Deny && !a.Security {
			t.Errorf("%s denies but is not marked Security", a.Name)
		}
	}
}

// servedStatus translates one Ingress carrying the annotation and returns
// the direct status of its rule (0: routed to the backend).
func servedStatus(t *testing.T, annotation string) int {
	t.Helper()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  ports: [{port: 80}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: one
  annotations:
    %s%s: "on"
spec:
  ingressClassName: nginx
  rules:
  - host: a.example
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service: {name: app, port: {number: 80}}
`, ingressnginx.AnnotationPrefix, annotation)
	lr := testkit.Project(t).LoadBytes("one.yaml", []byte(manifest))
	for _, p := range lr.Problems {
		t.Fatalf("load problem: %s", p)
	}
	res := engine.Translate(lr.Snapshot, engine.Options{})
	var found []int
	for _, g := range res.Table.Gateways {
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				for _, vh := range l.VirtualHosts {
					if vh.Hostname != "a.example" {
						continue
					}
					for _, r := range vh.Rules {
						found = append(found, r.DirectStatus)
					}
				}
			}
		}
	}
	if len(found) == 0 {
		t.Fatalf("the Ingress with %s is not served at all", annotation)
	}
	for _, s := range found[1:] {
		if s != found[0] {
			t.Fatalf("the Ingress's rules answer differently: %v", found)
		}
	}
	return found[0]
}
