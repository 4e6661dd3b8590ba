package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
)

// graphOptions are the flags of `gwdev graph`.
type graphOptions struct {
	// trust is --trust (trust.go).
	trust bool

	format   string
	profiles []string
	// crds is --crds (crds.go).
	crds string
}

// graphFormats are the formats graph's --format takes.
var graphFormats = app.GraphFormats

func newGraphCmd() *cobra.Command {
	o := &graphOptions{}
	cmd := &cobra.Command{
		Use:   "graph [DIR]",
		Short: "Draw Gateways → listeners → routes → rules → backends, and policies, as Mermaid, DOT or SVG",
		Long: `graph translates the manifests under DIR (default: the current directory) and prints the
structure as a Mermaid flowchart (default), a Graphviz DOT digraph, or SVG or PNG (the DOT laid
out by Graphviz's dot, which must be on PATH; without it gwdev says what to do instead, and the
web view of gwdev up draws the graph in the browser): Gateways and ListenerSets,
their listeners, the routes attached to them, the routes' rules with their matches and filters, and the
backend Services, and the policies (BackendTLSPolicy, XBackendTrafficPolicy, XTelemetryPolicy, a
profile's), each a node of its own with a dashed edge to every target it names. What is not
accepted, programmed or resolved is red, with the reason: a listener with a problem condition, a
route a parent refused (the edge to the listener or Gateway it named), a rule that is shadowed or
answers 500, an invalid backend reference, a policy that does not apply to a target (a missing
one, a conflict).

  gwdev graph samples/basic > graph.mmd
  gwdev graph --format svg samples/basic > graph.svg
  gwdev graph --format png samples/basic > graph.png`,
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
	f.StringVar(&o.format, "format", "mermaid", "output format: "+formatList(graphFormats)+" (svg and png run Graphviz's dot)")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	return cmd
}

func (o *graphOptions) run(out, errOut io.Writer, dir string) error {
	if !slices.Contains(graphFormats, o.format) {
		return fmt.Errorf("unknown format %q (want %s)", o.format, formatList(graphFormats))
	}
	if o.format == "svg" || o.format == "png" {
		if _, err := app.GraphvizDot(o.format); err != nil {
			return err // before loading anything: nothing could be drawn
		}
	}
	proj, err := project.Open([]string{dir}, project.Flags{Profiles: o.profiles, CRDs: o.crds, Trust: o.trust})
	if err != nil {
		return err
	}
	lr, res, err := proj.LoadAndTranslate(metav1.NewTime(time.Now().UTC()))
	if err != nil {
		return err
	}
	report.WriteLoadProblems(errOut, lr)
	return app.WriteGraph(out, res.Graph(), o.format)
}
