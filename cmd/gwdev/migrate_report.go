package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/dash"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
	"github.com/spf13/cobra"
)

// runCompare runs migrate --compare and prints the comparison.
func (o *migrateOptions) runCompare(cmd *cobra.Command, proj *project.Project, lr *watch.LoadResult) error {
	c, err := app.CompareMigration(cmd.Context(), proj, lr, o.migrationOptions())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	switch o.format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"requests": c.Requests, "differences": nonNil(c.Differences), "dropped": nonNil(c.Dropped),
			"kept": nonNil(c.Kept), "convertedProblems": nonNil(c.Converted.Problems), "leftOut": c.LeftOut}); err != nil {
			return err
		}
	case "github":
		for _, d := range c.Differences {
			fmt.Fprintf(out, "::error file=%s,line=%d::%s\n", d.Request.From.File, d.Request.From.Line, githubEscape(differenceText(d)))
		}
		for _, p := range c.Converted.Problems {
			fmt.Fprintf(out, "::error file=%s,line=%d::%s\n", p.File, p.Line, githubEscape("the converted manifests: "+p.Message))
		}
		seen := map[string]bool{}
		for _, d := range c.Dropped {
			msg := d.Ingress.String() + ": not carried over: " + d.What + ": " + d.Why
			if !seen[d.Source.String()+msg] {
				seen[d.Source.String()+msg] = true
				fmt.Fprintf(out, "::warning file=%s,line=%d::%s\n", d.Source.File, d.Source.Line, githubEscape(msg))
			}
		}
	default:
		fmt.Fprintln(out, compareSummary(c))
		for _, g := range app.GroupDifferences(c.Differences) {
			fmt.Fprintln(out, groupText(g))
		}
		if len(c.Converted.Problems) > 0 {
			fmt.Fprintln(out)
			printConvertedProblems(out, proj, c.Converted)
		}
		if len(c.Dropped) > 0 {
			fmt.Fprintln(out, "\nNot carried over:")
			printDropped(out, c.Dropped)
			printSecurityDropped(out, c.Dropped)
		}
	}
	if c.Failed() {
		return exitError{exitProblems}
	}
	return nil
}

// compareSummary is the comparison's first line.
func compareSummary(c *app.MigrationComparison) string {
	s := fmt.Sprintf("Sent %d requests generated from the Ingress rules to ingress-nginx (emulated) and to the converted Gateway API routes: %d differ.",
		c.Requests, len(c.Differences))
	if len(c.Kept) > 0 {
		s += fmt.Sprintf(" The folder's own version of %s was used.", plural(len(c.Kept), "converted object"))
	}
	if c.LeftOut > 0 {
		s += fmt.Sprintf(" %d more were not sent (at most %d).", c.LeftOut, app.MaxCompareRequests)
	}
	return s
}

// githubEscape escapes a workflow command's message.
func githubEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// differenceText renders a difference for people.
func differenceText(d app.CompareDifference) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (from %s)\n", d.RequestLine(), d.Request.From)
	for _, f := range d.Fields {
		fmt.Fprintf(&b, "  %-9s ingress-nginx %-30s gateway-api %s\n", f+":", dash.Quoted(d.Ingress.Field(f)), dash.Quoted(d.Gateway.Field(f)))
	}
	fmt.Fprintf(&b, "  rule:     ingress-nginx %s (%s)\n            gateway-api   %s (%s)", dash.Or(d.Ingress.Rule), dash.Or(d.Ingress.Source), dash.Or(d.Gateway.Rule), dash.Or(d.Gateway.Source))
	return b.String()
}

// groupText renders a group of differences for people: a difference alone
// as differenceText; several as one block with their count, the fields
// that differ (the same on every one), each request with where it comes
// from, and each distinct pair of matched rules once.
func groupText(g app.DifferenceGroup) string {
	if len(g.Differences) == 1 {
		return differenceText(g.Differences[0])
	}
	var b strings.Builder
	first := g.Differences[0]
	fmt.Fprintf(&b, "%d requests answered with the same difference:\n", len(g.Differences))
	for _, f := range first.Fields {
		fmt.Fprintf(&b, "  %-9s ingress-nginx %-30s gateway-api %s\n", f+":", dash.Quoted(first.Ingress.Field(f)), dash.Quoted(first.Gateway.Field(f)))
	}
	seen := map[string]bool{}
	var rules []string
	for _, d := range g.Differences {
		fmt.Fprintf(&b, "  %s (from %s)\n", d.RequestLine(), d.Request.From)
		r := fmt.Sprintf("  rule:     ingress-nginx %s (%s)\n            gateway-api   %s (%s)", dash.Or(d.Ingress.Rule), dash.Or(d.Ingress.Source), dash.Or(d.Gateway.Rule), dash.Or(d.Gateway.Source))
		if !seen[r] {
			seen[r] = true
			rules = append(rules, r)
		}
	}
	b.WriteString(strings.Join(rules, "\n"))
	return b.String()
}

// nonNil is s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
