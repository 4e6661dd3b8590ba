package app

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
)

// GraphFormats are the formats WriteGraph draws in, the first the default.
var GraphFormats = []string{"mermaid", "dot", "svg", "png"}

// WriteGraph draws g (engine.Result.Graph) in format: a Mermaid flowchart
// ("mermaid"), a Graphviz DOT digraph ("dot"), or the DOT laid out by
// Graphviz as SVG ("svg") or PNG ("png"): Graphviz's dot must be on PATH
// (LayoutGraph; without it the error says what to do instead).
func WriteGraph(out io.Writer, g *engine.Graph, format string) error {
	switch format {
	case "dot":
		writeDOT(out, g)
	case "svg", "png":
		b, err := LayoutGraph(g, format)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	case "mermaid":
		writeMermaid(out, g)
	default:
		return fmt.Errorf("unknown graph format %q", format)
	}
	return nil
}

// Colours of the drawings: healthy nodes by kind, problems red.
var graphFill = map[string]string{
	"Gateway": "#dbeafe", "ListenerSet": "#dbeafe", "IngressClass": "#dbeafe", "Listener": "#e0f2fe", "Rule": "#f1f5f9", "Service": "#dcfce7",
}

const (
	// A policy is a note (DOT) or a hexagon (Mermaid) in violet, its
	// edges to its targets dashed.
	graphPolicyFill   = "#ede9fe"
	graphPolicyStroke = "#6d28d9"

	graphRouteFill  = "#fef9c3"
	graphBadFill    = "#fecaca"
	graphBadStroke  = "#b91c1c"
	graphEdgeColour = "#475569"
)

func nodeFill(n *engine.GraphNode) string {
	if n.Problem != "" {
		return graphBadFill
	}
	if n.Policy {
		return graphPolicyFill
	}
	if c, ok := graphFill[n.Kind]; ok {
		return c
	}
	return graphRouteFill // every route kind
}

// nodeLines is what a node shows: label, detail, filters, problem.
func nodeLines(n *engine.GraphNode) []string {
	lines := []string{n.Label}
	if n.Detail != "" {
		lines = append(lines, n.Detail)
	}
	lines = append(lines, n.Filters...)
	if n.Problem != "" {
		lines = append(lines, "✗ "+n.Problem)
	}
	return lines
}

// writeDOT prints a Graphviz digraph, left to right.
func writeDOT(w io.Writer, g *engine.Graph) {
	fmt.Fprintln(w, "digraph gwdev {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, `  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];`)
	fmt.Fprintf(w, "  edge [color=%s, fontname=\"Helvetica\", fontsize=9];\n", dotString(graphEdgeColour))
	for _, n := range g.Nodes {
		attrs := fmt.Sprintf("label=%s, fillcolor=%s", dotString(strings.Join(nodeLines(n), "\n")), dotString(nodeFill(n)))
		if n.Policy {
			attrs += ", shape=note, style=filled"
		}
		switch {
		case n.Problem != "":
			attrs += fmt.Sprintf(", color=%s, penwidth=2", dotString(graphBadStroke))
		case n.Policy:
			attrs += fmt.Sprintf(", color=%s", dotString(graphPolicyStroke))
		}
		fmt.Fprintf(w, "  %s [%s];\n", dotString(n.ID), attrs)
	}
	for _, e := range g.Edges {
		var attrs []string
		label := e.Label
		switch {
		case e.Refused: // the parent refused the route: dashed red
			label = strings.TrimSpace(label + " ✗ " + e.Problem)
			attrs = append(attrs, "color="+dotString(graphBadStroke), "fontcolor="+dotString(graphBadStroke), "style=dashed")
		case e.Problem != "": // accepted, and serving, with a problem: a solid edge, the problem in red
			label = strings.TrimSpace(label + " ✗ " + e.Problem)
			attrs = append(attrs, "fontcolor="+dotString(graphBadStroke))
		case e.Policy: // a policy on its target: dashed violet
			attrs = append(attrs, "color="+dotString(graphPolicyStroke), "style=dashed")
		}
		if label != "" {
			attrs = append([]string{"label=" + dotString(label)}, attrs...)
		}
		a := ""
		if len(attrs) > 0 {
			a = " [" + strings.Join(attrs, ", ") + "]"
		}
		fmt.Fprintf(w, "  %s -> %s%s;\n", dotString(e.From), dotString(e.To), a)
	}
	fmt.Fprintln(w, "}")
}

// dotString quotes s as a DOT string: backslashes and quotes escaped,
// newlines as \n (centred lines).
func dotString(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", `\n`).Replace(s)
	return `"` + s + `"`
}

// writeMermaid prints a Mermaid flowchart, left to right. Node IDs are n0,
// n1, … in node order (Mermaid IDs must be plain words); labels are quoted.
func writeMermaid(w io.Writer, g *engine.Graph) {
	fmt.Fprintln(w, "flowchart LR")
	ids := map[string]string{}
	for i, n := range g.Nodes {
		ids[n.ID] = "n" + strconv.Itoa(i)
		open, end := "[", "]"
		if n.Policy {
			open, end = "{{", "}}" // a hexagon
		}
		fmt.Fprintf(w, "  %s%s\"%s\"%s\n", ids[n.ID], open, mermaidText(strings.Join(nodeLines(n), "\n")), end)
	}
	bad, warn, policy := []string{}, []string{}, []string{}
	i := -1 // linkStyle counts the links printed
	for _, e := range g.Edges {
		from, to := ids[e.From], ids[e.To]
		if from == "" || to == "" {
			continue
		}
		i++
		label := e.Label
		arrow := "-->"
		switch {
		case e.Refused: // the parent refused the route: dashed red
			label = strings.TrimSpace(label + " ✗ " + e.Problem)
			arrow = "-.->"
			bad = append(bad, strconv.Itoa(i))
		case e.Problem != "": // accepted with a problem: solid, the label red
			label = strings.TrimSpace(label + " ✗ " + e.Problem)
			warn = append(warn, strconv.Itoa(i))
		case e.Policy: // a policy on its target: dashed violet
			arrow = "-.->"
			policy = append(policy, strconv.Itoa(i))
		}
		if label != "" {
			fmt.Fprintf(w, "  %s %s|\"%s\"| %s\n", from, arrow, mermaidText(label), to)
		} else {
			fmt.Fprintf(w, "  %s %s %s\n", from, arrow, to)
		}
	}
	classes := map[string][]string{}
	order := []string{}
	for _, n := range g.Nodes {
		c := strings.ToLower(n.Kind)
		if n.Problem != "" {
			c = "bad"
		} else if n.Policy {
			c = "policy"
		} else if _, ok := graphFill[n.Kind]; !ok {
			c = "route"
		}
		if classes[c] == nil {
			order = append(order, c)
		}
		classes[c] = append(classes[c], ids[n.ID])
	}
	for _, c := range order {
		fill, stroke := graphRouteFill, graphEdgeColour
		switch c {
		case "bad":
			fill, stroke = graphBadFill, graphBadStroke
		case "policy":
			fill, stroke = graphPolicyFill, graphPolicyStroke
		case "route":
		default:
			for k, v := range graphFill {
				if strings.ToLower(k) == c {
					fill = v
				}
			}
		}
		fmt.Fprintf(w, "  classDef %s fill:%s,stroke:%s\n", c, fill, stroke)
		fmt.Fprintf(w, "  class %s %s\n", strings.Join(classes[c], ","), c)
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "  linkStyle %s stroke:%s,color:%s\n", strings.Join(bad, ","), graphBadStroke, graphBadStroke)
	}
	if len(warn) > 0 {
		fmt.Fprintf(w, "  linkStyle %s color:%s\n", strings.Join(warn, ","), graphBadStroke)
	}
	if len(policy) > 0 {
		fmt.Fprintf(w, "  linkStyle %s stroke:%s\n", strings.Join(policy, ","), graphPolicyStroke)
	}
}

// mermaidText makes s safe inside a quoted Mermaid label: quotes become
// #quot;, angle brackets their entities, and newlines <br/>.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\r", "", "\n", "<br/>").Replace(s)
}
