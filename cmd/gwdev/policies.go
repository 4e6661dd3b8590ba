package main

import (
	"fmt"
	"io"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
)

// printExplainPolicies lists the policies that target the Gateway, the
// route and the backend Service a request went through.
func printExplainPolicies(out io.Writer, res *engine.Result, t *emulator.Trace) {
	var targets []engine.ObjectKey
	for _, g := range res.Table.Gateways {
		if g.Name == t.Gateway {
			targets = append(targets, g.Gateway)
		}
	}
	if vh := findVirtualHost(res.Table, t.VirtualHost); vh != nil {
		if r := findRule(vh, t.Rule); r != nil {
			targets = append(targets, r.Route)
			for _, b := range r.Backends {
				if b.Name == t.Backend {
					targets = append(targets, b.Service)
				}
			}
		}
	}
	first := true
	for _, k := range targets {
		for _, e := range res.PoliciesFor(k) {
			label := ""
			if first {
				label, first = "policies:", false
			}
			fmt.Fprintf(out, "  %-14s %s %s/%s: %s\n", label, k.Kind, k.Namespace, k.Name, report.PolicyLine(e))
		}
	}
}
