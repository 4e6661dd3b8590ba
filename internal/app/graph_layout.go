package app

import (
	"bytes"
	"context"
	"fmt"

	graphviz "github.com/goccy/go-graphviz"

	"github.com/gwdev/gwdev/engine"
)

// LayoutGraph lays g out with Graphviz's dot layout and renders it as
// "svg" or "png". Graphviz is github.com/goccy/go-graphviz: the C library
// compiled to WebAssembly and run by wazero inside gwdev, so nothing needs
// to be installed. Each call runs its own Graphviz instance (a few
// milliseconds), so callers on several goroutines share nothing. The input
// is writeDOT's digraph, the same `graph --format dot` prints; in the SVG,
// each node's <title> is its engine.GraphNode ID.
func LayoutGraph(g *engine.Graph, format string) ([]byte, error) {
	var f graphviz.Format
	switch format {
	case "svg":
		f = graphviz.SVG
	case "png":
		f = graphviz.PNG
	default:
		return nil, fmt.Errorf("graph layout: unknown format %q (want svg or png)", format)
	}
	var src bytes.Buffer
	writeDOT(&src, g)
	ctx := context.Background()
	gv, err := graphviz.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting Graphviz: %w", err)
	}
	defer gv.Close()
	graph, err := graphviz.ParseBytes(src.Bytes())
	if err != nil {
		return nil, fmt.Errorf("Graphviz reading gwdev's DOT: %w", err)
	}
	defer graph.Close()
	var out bytes.Buffer
	if err := gv.Render(ctx, graph, f, &out); err != nil {
		return nil, fmt.Errorf("Graphviz rendering %s: %w", format, err)
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("Graphviz rendered an empty %s", format)
	}
	return out.Bytes(), nil
}
