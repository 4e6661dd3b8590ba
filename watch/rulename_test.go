package watch

import (
	"strings"
	"testing"
)

// TestRouteRuleNamesUnique: the spec's one requirement on a route rule's
// name ("MUST be unique within a Route") is enforced on load for every
// route kind, as the apiserver would refuse the object (the CRDs' CEL rule).
func TestRouteRuleNamesUnique(t *testing.T) {
	l := newTestLoader(t)
	for _, c := range []struct{ kind, version, extra string }{
		{"HTTPRoute", "v1", ""},
		{"GRPCRoute", "v1", ""},
		{"TLSRoute", "v1", "  hostnames: [a.example.com]\n"},
		{"TCPRoute", "v1alpha2", ""},
		{"UDPRoute", "v1alpha2", ""},
	} {
		for _, dup := range []bool{false, true} {
			if c.kind == "TLSRoute" {
				// A TLSRoute has at most one rule: its name is unique by
				// construction; a route with one named rule loads.
				manifest := "apiVersion: gateway.networking.k8s.io/v1\nkind: TLSRoute\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: gw}]\n" +
					c.extra + "  rules:\n  - name: a\n    backendRefs: [{name: s, port: 80}]\n"
				if res := l.LoadBytes("r.yaml", []byte(manifest)); len(res.Problems) > 0 {
					t.Errorf("TLSRoute with one named rule: %v", res.Problems)
				}
				break
			}
			second := "b"
			if dup {
				second = "a"
			}
			manifest := "apiVersion: gateway.networking.k8s.io/" + c.version + "\nkind: " + c.kind +
				"\nmetadata: {name: r}\nspec:\n  parentRefs: [{name: gw}]\n" + c.extra +
				"  rules:\n  - name: a\n    backendRefs: [{name: s, port: 80}]\n  - name: " + second + "\n    backendRefs: [{name: s, port: 80}]\n"
			res := l.LoadBytes("r.yaml", []byte(manifest))
			var msgs []string
			for _, p := range res.Problems {
				msgs = append(msgs, p.String())
			}
			refused := strings.Contains(strings.Join(msgs, "\n"), "Rule name must be unique within the route")
			if refused != dup {
				t.Errorf("%s with rule names a, %s: refused=%v, want %v; problems: %v", c.kind, second, refused, dup, msgs)
			}
		}
	}
}
