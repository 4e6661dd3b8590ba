package engine_test

import (
	"testing"

	"github.com/gwdev/gwdev/engine"
)

// BenchmarkShadows10000HTTPRoutes measures shadow detection alone on the
// table of 10,000 generated routes (part of every Translate).
func BenchmarkShadows10000HTTPRoutes(b *testing.B) {
	res := engine.Translate(benchSnapshot(b, 10000), engine.Options{Now: goldenNow})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(res.Shadows()) != 0 {
			b.Fatal("the generated routes shadow nothing")
		}
	}
}

// BenchmarkGraph10000HTTPRoutes measures building the graph of 10,000
// generated routes (gwdev graph, the TUI's Graph view).
func BenchmarkGraph10000HTTPRoutes(b *testing.B) {
	res := engine.Translate(benchSnapshot(b, 10000), engine.Options{Now: goldenNow})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if g := res.Graph(); len(g.Nodes) < 30000 {
			b.Fatalf("%d nodes", len(g.Nodes))
		}
	}
}
