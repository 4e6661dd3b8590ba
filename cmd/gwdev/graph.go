package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// graphOptions are the flags of `gwdev graph`.
type graphOptions struct {
	format   string
	profiles []string
}

func newGraphCmd() *cobra.Command {
	o := &graphOptions{}
	cmd := &cobra.Command{
		Use:   "graph [DIR]",
		Short: "Draw Gateways → listeners → routes → rules → backends as Mermaid or DOT",
		Long: `graph translates the manifests under DIR (default: the current directory) and prints the
structure as a Mermaid flowchart (default) or a Graphviz DOT digraph: Gateways and ListenerSets,
their listeners, the routes attached to them, the routes' rules with their matches, and the
backend Services. What is not accepted, programmed or resolved is red, with the reason: a
listener with a problem condition, a route a parent refused (the edge to the listener or Gateway
it named), a rule that is shadowed or answers 500, an invalid backend reference.

  gwdev graph samples/basic > graph.mmd
  gwdev graph --format dot samples/basic | dot -Tsvg > graph.svg`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) > 0 {
				dir = args[0]
			}
			return o.run(cmd.OutOrStdout(), cmd.ErrOrStderr(), dir)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "mermaid", "output format: mermaid or dot")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	return cmd
}

func (o *graphOptions) run(out, errOut io.Writer, dir string) error {
	if o.format != "mermaid" && o.format != "dot" {
		return fmt.Errorf("unknown format %q (want mermaid or dot)", o.format)
	}
	loader, err := watch.NewLoader()
	if err != nil {
		return err
	}
	lr, res, err := translateTree(loader, dir, o.profiles, metav1.NewTime(time.Now().UTC()))
	if err != nil {
		return err
	}
	printLoadProblems(errOut, lr)
	g := res.Graph()
	if o.format == "dot" {
		writeDOT(out, g)
	} else {
		writeMermaid(out, g)
	}
	return nil
}

// Colours of the drawings: healthy nodes by kind, problems red.
var graphFill = map[string]string{
	"Gateway": "#dbeafe", "ListenerSet": "#dbeafe", "IngressClass": "#dbeafe", "Listener": "#e0f2fe", "Rule": "#f1f5f9", "Service": "#dcfce7",
}

const (
	graphRouteFill  = "#fef9c3"
	graphBadFill    = "#fecaca"
	graphBadStroke  = "#b91c1c"
	graphEdgeColour = "#475569"
)

func nodeFill(n *engine.GraphNode) string {
	if n.Problem != "" {
		return graphBadFill
	}
	if c, ok := graphFill[n.Kind]; ok {
		return c
	}
	return graphRouteFill // every route kind
}

// nodeLines is what a node shows: label, detail, problem.
func nodeLines(n *engine.GraphNode) []string {
	lines := []string{n.Label}
	if n.Detail != "" {
		lines = append(lines, n.Detail)
	}
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
		if n.Problem != "" {
			attrs += fmt.Sprintf(", color=%s, penwidth=2", dotString(graphBadStroke))
		}
		fmt.Fprintf(w, "  %s [%s];\n", dotString(n.ID), attrs)
	}
	for _, e := range g.Edges {
		var attrs []string
		label := e.Label
		if e.Problem != "" {
			label = strings.TrimSpace(label + " ✗ " + e.Problem)
			attrs = append(attrs, "color="+dotString(graphBadStroke), "fontcolor="+dotString(graphBadStroke), "style=dashed")
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
		fmt.Fprintf(w, "  %s[\"%s\"]\n", ids[n.ID], mermaidText(strings.Join(nodeLines(n), "\n")))
	}
	bad := []string{}
	i := -1 // linkStyle counts the links printed
	for _, e := range g.Edges {
		from, to := ids[e.From], ids[e.To]
		if from == "" || to == "" {
			continue
		}
		i++
		label := e.Label
		arrow := "-->"
		if e.Problem != "" {
			label = strings.TrimSpace(label + " ✗ " + e.Problem)
			arrow = "-.->"
			bad = append(bad, strconv.Itoa(i))
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
}

// mermaidText makes s safe inside a quoted Mermaid label: quotes become
// #quot;, angle brackets their entities, and newlines <br/>.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\r", "", "\n", "<br/>").Replace(s)
}
