package main

import (
	"fmt"
	"io"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
)

// printOutranked lists the rules that matched the request too but lost to
// the chosen one, each with the precedence criterion that decided.
func printOutranked(out io.Writer, res *engine.Result, t *emulator.Trace) {
	if len(t.Outranked) == 0 {
		return
	}
	vh := findVirtualHost(res.Table, t.VirtualHost)
	if vh == nil {
		return
	}
	winner := findRule(vh, t.Rule)
	for i, name := range t.Outranked {
		label := ""
		if i == 0 {
			label = "also matched:"
		}
		loser := findRule(vh, name)
		if winner == nil || loser == nil {
			fmt.Fprintf(out, "  %-14s %s\n", label, name)
			continue
		}
		fmt.Fprintf(out, "  %-14s %s\n  %-14s   lost: %s\n", label, engine.DescribeRule(loser), "", res.PrecedenceReason(vh.Hostname, winner, loser))
	}
}

func findVirtualHost(tab *engine.Table, name string) *engine.VirtualHost {
	var found *engine.VirtualHost
	engine.EachListener(tab, func(l *engine.ListenerTable) {
		for _, vh := range l.VirtualHosts {
			if vh.Name == name && name != "" {
				found = vh
			}
		}
	})
	return found
}

func findRule(vh *engine.VirtualHost, name string) *engine.RouteRule {
	for _, r := range vh.Rules {
		if r.Name == name {
			return r
		}
	}
	return nil
}
