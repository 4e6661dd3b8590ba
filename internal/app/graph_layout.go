package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	graphviz "github.com/goccy/go-graphviz"

	"github.com/gwdev/gwdev/engine"
)

// LayoutGraph lays g out with Graphviz's dot layout and renders it as
// "svg" or "png". Graphviz is github.com/goccy/go-graphviz: the C library
// compiled to WebAssembly and run by wazero inside gwdev, so nothing needs
// to be installed. The input is writeDOT's digraph, the same `graph
// --format dot` prints; in the SVG, each node's <title> is its
// engine.GraphNode ID.
//
// Graphviz's WebAssembly memory is one per process and keeps about 40 KB
// of every layout (goccy/go-graphviz#111): fine for `gwdev graph`, which
// draws once; a process that draws on every reload uses LayoutGraphApart.
func LayoutGraph(g *engine.Graph, format string) ([]byte, error) {
	var src bytes.Buffer
	writeDOT(&src, g)
	return layoutDOT(src.Bytes(), format)
}

// layoutDOT renders DOT source with Graphviz in this process.
func layoutDOT(src []byte, format string) ([]byte, error) {
	var f graphviz.Format
	switch format {
	case "svg":
		f = graphviz.SVG
	case "png":
		f = graphviz.PNG
	default:
		return nil, fmt.Errorf("graph layout: unknown format %q (want svg or png)", format)
	}
	ctx := context.Background()
	gv, err := graphviz.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting Graphviz: %w", err)
	}
	defer gv.Close()
	graph, err := graphviz.ParseBytes(src)
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

// LayoutEnv, set in a gwdev process's environment to "svg" or "png", makes
// it a layout child (LayoutGraphApart): it reads DOT on stdin, writes the
// drawing on stdout and exits, before any command runs (RunLayoutChild).
const LayoutEnv = "GWDEV_INTERNAL_LAYOUT"

// layoutTimeout bounds one layout child.
const layoutTimeout = 30 * time.Second

// RunLayoutChild does a layout child's work and exits when LayoutEnv is
// set; otherwise it returns at once. main calls it first (and so does a
// test binary that lays out apart).
func RunLayoutChild() {
	format := os.Getenv(LayoutEnv)
	if format == "" {
		return
	}
	src, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
	if err == nil {
		var out []byte
		if out, err = layoutDOT(src, format); err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// LayoutGraphApart is LayoutGraph in a child process (this executable as a
// layout child, RunLayoutChild): what Graphviz keeps of each layout goes
// with the child, so a long-running gwdev up that draws on every reload
// does not grow.
func LayoutGraphApart(ctx context.Context, g *engine.Graph, format string) ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("graph layout: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, layoutTimeout)
	defer cancel()
	var src, out, stderr bytes.Buffer
	writeDOT(&src, g)
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), LayoutEnv+"="+format)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &src, &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("graph layout (%s as a layout child): %w: %s", exe, err, strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}
