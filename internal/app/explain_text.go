package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
)

// Served reports whether a backend would serve the request or connection
// or a route's redirect answer it; not when gwdev would refuse it, answer
// 4xx/5xx itself, or end it in a gRPC error (explain's exit status 1).
func (ex *Explanation) Served() bool {
	t := ex.Trace
	switch {
	case t.Status >= 400:
		return false
	case t.GRPCStatus != "" && t.GRPCStatus != "OK":
		return false
	case t.Status >= 300:
		return true // a RequestRedirect filter answers
	}
	return t.Backend != "" || t.Target != "" || t.Upstream != ""
}

// WriteJSON writes the trace and the steps not done as indented JSON.
func (ex *Explanation) WriteJSON(out io.Writer) error {
	b, err := json.MarshalIndent(struct {
		*emulator.Trace
		NotDone []string `json:"notDone,omitempty"`
	}{ex.Trace, ex.NotDone}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// WriteText writes the explanation for people: the trace's steps, what
// was not done, the rules the request outranked, the policies on its way,
// hints when nothing took it, and notes on files that did not load.
func (ex *Explanation) WriteText(out io.Writer) {
	res, tr := ex.result, ex.Trace
	printTrace(out, ex.probe, tr)
	printNotDone(out, ex.NotDone)
	printOutranked(out, res, tr)
	printExplainPolicies(out, res, tr)
	for _, h := range ex.Hints {
		fmt.Fprintf(out, "  hint: %s\n", h)
	}
	if ex.fileProblems > 0 {
		fmt.Fprintf(out, "\nnote: %s did not load; run gwdev check %s\n", report.Plural(ex.fileProblems, "file problem"), ex.dir)
	}
	if ex.pruned > 0 {
		fmt.Fprintf(out, "\nnote: %s not in the cluster's CRDs (dropped, as that cluster stores the objects); run gwdev check --crds %s %s\n",
			report.Plural(ex.pruned, "field"), ex.crdsName, ex.dir)
	}
}

// printTrace writes the trace's steps, one labelled line each.
func printTrace(out io.Writer, p emulator.Probe, t *emulator.Trace) {
	fmt.Fprintln(out, probeLine(p, t))
	step := func(label, value string) {
		if value != "" {
			fmt.Fprintf(out, "  %-14s %s\n", label+":", value)
		}
	}
	step("gateway", t.Gateway)
	step("sni", t.SNI)
	if p.TLS && t.SNI == "" {
		step("sni", "(none)")
	}
	step("tls", strings.TrimSpace(t.TLSVersion+" "+t.NegotiatedProtocol))
	if t.Certificate != "" {
		step("certificate", "from Secret "+t.Certificate)
	}
	step("client cert", t.ClientCert)
	step("listener", t.Listener)
	step("virtual host", t.VirtualHost)
	step("route", t.Route)
	step("rule", t.Rule)
	step("source", t.Source)
	for i, f := range t.Filters {
		label := ""
		if i == 0 {
			label = "filters"
		}
		if label == "" {
			fmt.Fprintf(out, "  %-14s %s\n", "", f)
		} else {
			step(label, f)
		}
	}
	if len(t.Candidates) > 0 {
		step("candidates", strings.Join(t.Candidates, ", "))
	}
	step("backend", t.Backend)
	step("service", t.Service)
	if t.Target != "" {
		step("target", t.Target+" ("+t.Why+")")
	}
	step("upstream", t.Upstream)
	step("backend cert", t.BackendClientCert)
	step("location", t.Location)
	switch {
	case t.GRPCStatus != "":
		step("answer", fmt.Sprintf("grpc-status %s (HTTP %d)", t.GRPCStatus, t.Status))
	case t.Status != 0:
		step("answer", fmt.Sprintf("%d %s", t.Status, http.StatusText(t.Status)))
	case t.Backend != "" && t.End == "":
		step("answer", "from the backend")
	case t.End != "":
		step("connection", t.EndText())
	}
	step("why", t.Reason)
	if t.Hint != "" {
		fmt.Fprintf(out, "  hint: %s\n", t.Hint)
	}
}

// probeLine is the first line of explain's answer: what was sent where.
func probeLine(p emulator.Probe, t *emulator.Trace) string {
	if r := p.Request; r != nil {
		proto := r.Proto
		if strings.HasPrefix(t.Proto, "HTTP/") {
			proto = t.Proto // over TLS, the protocol ALPN agreed
		}
		kind := ""
		if t.GRPC {
			kind = "gRPC "
		}
		// The trace's path, not the request's: it is redacted (emulator/redact.go).
		path := t.Path
		if path == "" {
			path = r.URL.RequestURI()
		}
		return fmt.Sprintf("%s%s %s %s (Host %s, port %d%s)", kind, r.Method, path, proto, r.Host, p.Port, tlsNote(p))
	}
	switch {
	case p.UDP:
		return fmt.Sprintf("UDP datagrams to port %d", p.Port)
	case p.TLS:
		return fmt.Sprintf("TLS connection to port %d%s", p.Port, tlsNote(p))
	}
	return fmt.Sprintf("TCP connection to port %d", p.Port)
}

// tlsNote says how a TLS probe says hello.
func tlsNote(p emulator.Probe) string {
	if !p.TLS {
		return ""
	}
	sni := p.SNI
	if sni == "" {
		sni = "(none)"
	}
	s := ", TLS with SNI " + sni
	if len(p.ALPN) > 0 {
		s += ", ALPN " + strings.Join(p.ALPN, ",")
	}
	return s
}

// printNotDone writes explain's "not done:" lines.
func printNotDone(out io.Writer, lines []string) {
	for i, l := range lines {
		label := ""
		if i == 0 {
			label = "not done:"
		}
		fmt.Fprintf(out, "  %-14s %s\n", label, l)
	}
}

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

// printExplainPolicies lists the policies that target the Gateway, the
// route and the backend Service a request went through.
func printExplainPolicies(out io.Writer, res *engine.Result, t *emulator.Trace) {
	first := true
	for _, e := range explainPolicies(res, t) {
		label := ""
		if first {
			label, first = "policies:", false
		}
		k := e.Target
		fmt.Fprintf(out, "  %-14s %s %s/%s: %s\n", label, k.Kind, k.Namespace, k.Name, report.PolicyLine(e))
	}
}

// explainPolicies are the policies that target the Gateway, the route and
// the backend Service a request went through (t), by target in that
// order.
func explainPolicies(res *engine.Result, t *emulator.Trace) []engine.PolicyEffect {
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
	var out []engine.PolicyEffect
	for _, k := range targets {
		out = append(out, res.PoliciesFor(k)...)
	}
	return out
}

// WriteServedTrace writes a request the data plane served (a trace from
// /traces/stream) as explain writes its answer: the decision step by step,
// the rules it outranked and the policies on its way in res (the
// translation served; nil: the steps only). The web view shows it.
func WriteServedTrace(out io.Writer, res *engine.Result, t *emulator.Trace) {
	p := emulator.Probe{Address: t.Address, Port: t.Port, TLS: t.TLSVersion != "" || t.SNI != "", SNI: t.SNI, UDP: t.Proto == "UDP"}
	if t.Method != "" {
		proto := t.Proto
		if !strings.HasPrefix(proto, "HTTP/") {
			proto = "HTTP/1.1"
		}
		p.Request = &http.Request{Method: t.Method, Host: t.Host, Proto: proto, URL: &url.URL{Path: t.Path}}
	}
	printTrace(out, p, t)
	if res != nil {
		printOutranked(out, res, t)
		printExplainPolicies(out, res, t)
	}
}
