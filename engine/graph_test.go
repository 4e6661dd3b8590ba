package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
)

// checkGraph checks the graph's invariants: unique node IDs, edges between
// existing nodes, no edge twice, every node reachable from a root.
func checkGraph(t *testing.T, g *engine.Graph) {
	t.Helper()
	ids := map[string]bool{}
	for _, n := range g.Nodes {
		if n.ID == "" || ids[n.ID] {
			t.Fatalf("node ID %q empty or repeated", n.ID)
		}
		ids[n.ID] = true
	}
	edges := map[[2]string]bool{}
	children := map[string][]string{}
	for _, e := range g.Edges {
		if !ids[e.From] || !ids[e.To] {
			t.Fatalf("edge %s → %s between unknown nodes", e.From, e.To)
		}
		if edges[[2]string{e.From, e.To}] {
			t.Fatalf("edge %s → %s twice", e.From, e.To)
		}
		edges[[2]string{e.From, e.To}] = true
		children[e.From] = append(children[e.From], e.To)
	}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		for _, c := range children[id] {
			walk(c)
		}
	}
	for _, r := range g.Roots() {
		walk(r.ID)
	}
	if len(seen) != len(g.Nodes) {
		t.Fatalf("%d of %d nodes reachable from the roots", len(seen), len(g.Nodes))
	}
}

// TestGraphInvariants builds the graph of every golden case.
func TestGraphInvariants(t *testing.T) {
	ins, _ := filepath.Glob("testdata/*.in.yaml")
	nodes := 0
	for _, in := range ins {
		g := translateFile(t, in).Graph()
		t.Run(filepath.Base(in), func(t *testing.T) { checkGraph(t, g) })
		nodes += len(g.Nodes)
	}
	if nodes < 1000 {
		t.Errorf("only %d nodes in %d cases", nodes, len(ins))
	}
}

// TestGraphGolden builds the graph of every testdata/graph/<case>.in.yaml
// and compares it, as YAML, with <case>.graph.yaml (regenerate with
// -update). The cases are policies on their targets (GEP-713).
func TestGraphGolden(t *testing.T) {
	ins, _ := filepath.Glob("testdata/graph/*.in.yaml")
	if len(ins) == 0 {
		t.Fatal("no graph cases in testdata/graph")
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			g := translateFile(t, in).Graph()
			checkGraph(t, g)
			got, err := yaml.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			matchGoldenFile(t, strings.TrimSuffix(in, ".in.yaml")+".graph.yaml", got)
		})
	}
}
