package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// meshYAML renders, for each name, a Service in namespace shop and a
// producer HTTPRoute bound to it.
func meshYAML(names ...string) []byte {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: shop}\nspec:\n  ports: [{name: http, port: 80}]\n", n)
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: shop}\n"+
			"spec:\n  parentRefs: [{group: \"\", kind: Service, name: %s}]\n  rules: [{backendRefs: [{name: %s, port: 80}]}]\n", n, n, n)
	}
	return []byte(b.String())
}

// TestTranslateNextKeepsMeshAddresses: a Service's mesh frontend keeps its
// address across reloads (as a Service keeps its ClusterIP), even when a
// Service that sorts first gains a route; a Gateway takes 127.0.0.1 on, the
// mesh 127.0.10.1 on.
func TestTranslateNextKeepsMeshAddresses(t *testing.T) {
	var prev *engine.Result
	step := func(want map[string]string, yaml []byte) {
		t.Helper()
		prev = engine.TranslateNext(prev, testkit.Load(t, "mesh.yaml", yaml), engine.Options{Now: goldenNow})
		got := map[string]string{}
		for _, g := range prev.Table.Gateways {
			got[g.Name] = g.Address
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("addresses %v, want %v", got, want)
		}
	}
	step(map[string]string{"mesh/shop/b": "127.0.10.1"}, meshYAML("b"))
	step(map[string]string{"mesh/shop/a": "127.0.10.2", "mesh/shop/b": "127.0.10.1"}, meshYAML("a", "b"))
	step(map[string]string{"gateway/default/gw": "127.0.0.1", "mesh/shop/a": "127.0.10.2", "mesh/shop/b": "127.0.10.1"},
		append(meshYAML("a", "b"), gatewaysYAML("gw")...))
	// Without history, by namespace/name.
	prev = nil
	step(map[string]string{"mesh/shop/a": "127.0.10.1", "mesh/shop/b": "127.0.10.2"}, meshYAML("a", "b"))
}

// TestMeshGraph: a Service with mesh frontends is the graph parent of the
// routes bound to it, with its addresses; a consumer route hangs from the
// same node.
func TestMeshGraph(t *testing.T) {
	g := translateFile(t, "testdata/mesh-consumer-route.in.yaml").Graph()
	checkGraph(t, g)
	n := g.Node("service/shop/cart")
	if n == nil || n.Kind != "Mesh" || n.Detail != "127.0.10.1, 127.0.10.2 (from admin), 127.0.10.3 (from web)" {
		t.Fatalf("mesh node %+v", n)
	}
	var children []string
	for _, e := range g.Children(n.ID) {
		children = append(children, e.To)
	}
	if fmt.Sprint(children) != "[httproute/admin/both httproute/shop/producer httproute/web/consumer]" {
		t.Errorf("mesh routes %v", children)
	}
}
