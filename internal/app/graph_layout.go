package app

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"

	"github.com/gwdev/gwdev/engine"
)

// GraphvizDot finds Graphviz's dot on PATH for `graph --format` svg or
// png, or says exactly why it cannot draw and what to do instead. gwdev
// carries no Graphviz of its own: the web view lays the graph out in the
// browser (Graphviz compiled to WebAssembly, internal/web's assets).
func GraphvizDot(format string) (string, error) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		return "", fmt.Errorf("--format %s needs Graphviz's dot, which is not on PATH (%v): install Graphviz "+
			"(apt-get install graphviz, dnf install graphviz, brew install graphviz, choco install graphviz), "+
			"or use --format dot (the DOT source) or --format mermaid (GitHub and mermaid.live draw it), "+
			"or open the web view (gwdev up prints its URL), which draws the graph in the browser", format, err)
	}
	return dot, nil
}

// LayoutGraph lays g out with Graphviz's dot (on PATH, GraphvizDot) and
// renders it as "svg" or "png". The input is writeDOT's digraph, the same
// `graph --format dot` prints; in the SVG, each node's <title> is its
// engine.GraphNode ID. dot's failure is an error naming it, never an empty
// drawing.
func LayoutGraph(g *engine.Graph, format string) ([]byte, error) {
	if format != "svg" && format != "png" {
		return nil, fmt.Errorf("graph layout: unknown format %q (want svg or png)", format)
	}
	dot, err := GraphvizDot(format)
	if err != nil {
		return nil, err
	}
	var src, out, stderr bytes.Buffer
	writeDOT(&src, g)
	cmd := exec.Command(dot, "-T"+format)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &src, &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -T%s: %w: %s", dot, format, err, strings.TrimSpace(stderr.String()))
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("%s -T%s wrote nothing: %s", dot, format, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}
