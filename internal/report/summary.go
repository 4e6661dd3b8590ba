package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// WriteSummary writes the human summary of `gwdev check`: problems first
// (load errors, then findings by severity), then gateways and routes.
func WriteSummary(w io.Writer, lr *watch.LoadResult, res *engine.Result, loaded, total time.Duration) {
	nerr, nwarn := CountFindings(res.Findings)
	nerr += len(lr.Problems)
	fmt.Fprintf(w, "Loaded %s from %s in %s; translated in %s.\n",
		Plural(res.Objects.Len(), "object"), Plural(lr.Files, "file"), RoundDuration(loaded), RoundDuration(total-loaded))
	if nerr == 0 && nwarn == 0 {
		fmt.Fprintln(w, "No problems: every object is accepted and resolved.")
	} else {
		fmt.Fprintf(w, "%s, %s.\n", Plural(nerr, "error"), Plural(nwarn, "warning"))
	}
	printProblems(w, "Rejected (not loaded, like kubectl apply would refuse them)", lr.Problems, false)
	printProblems(w, "Pruned (loaded without the field, as the cluster stores them when validation is off)", lr.Problems, true)
	printFindings(w, "Errors", "✗", res.Findings, engine.SeverityError)
	printFindings(w, "Warnings", "!", res.Findings, engine.SeverityWarning)
	if len(lr.Skipped) > 0 {
		fmt.Fprintln(w, "\nSkipped (kinds gwdev does not use):")
		for _, s := range lr.Skipped {
			fmt.Fprintf(w, "  - %s\n", s.String())
		}
	}
	printGateways(w, res)
	printRoutes(w, res)
	printMesh(w, res)      // summary_mesh.go
	printIngresses(w, res) // summary_ingress.go
	printInfo(w, res.Findings)
}

// CountFindings counts the errors and the warnings among fs, as `gwdev
// check` and `gwdev up` report them (load problems are errors too: the
// caller adds them).
func CountFindings(fs []engine.Finding) (errors, warnings int) {
	for _, f := range fs {
		switch f.Severity {
		case engine.SeverityError:
			errors++
		case engine.SeverityWarning:
			warnings++
		}
	}
	return errors, warnings
}

// printProblems writes the load problems whose Pruned is pruned under
// title.
func printProblems(w io.Writer, title string, ps []watch.Problem, pruned bool) {
	first := true
	for _, p := range ps {
		if p.Pruned != pruned {
			continue
		}
		if first {
			fmt.Fprintf(w, "\n%s:\n", title)
			first = false
		}
		fmt.Fprintf(w, "  ✗ %s\n", p.String())
	}
}

func printFindings(w io.Writer, title, mark string, fs []engine.Finding, sev engine.Severity) {
	first := true
	for _, f := range fs {
		if f.Severity != sev {
			continue
		}
		if first {
			fmt.Fprintf(w, "\n%s:\n", title)
			first = false
		}
		loc := f.Source.String()
		if loc == "" {
			loc = "-"
		}
		head := loc
		if f.Object.Kind != "" {
			head += "  " + f.Object.String()
		}
		if f.Scope != "" {
			head += "  " + f.Scope
		}
		fmt.Fprintf(w, "  %s %s\n", mark, head)
		what := f.Message
		if f.Type != "" {
			what = f.Condition() + " " + f.Reason + ": " + f.Message
		}
		fmt.Fprintf(w, "      %s\n", what)
	}
}

func printInfo(w io.Writer, fs []engine.Finding) {
	first := true
	for _, f := range fs {
		if f.Severity != engine.SeverityInfo {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nNotes:")
			first = false
		}
		fmt.Fprintf(w, "  - %s: %s\n", f.Object.String(), f.Message)
	}
}

func printGateways(w io.Writer, res *engine.Result) {
	if len(res.Objects.Gateways) == 0 {
		return
	}
	fmt.Fprintln(w, "\nGateways:")
	for _, gw := range res.Objects.Gateways {
		addr := "-"
		if len(gw.Status.Addresses) > 0 {
			addr = gw.Status.Addresses[0].Value
		}
		fmt.Fprintf(w, "  %s/%s  class %s  address %s  %s\n", gw.Namespace, gw.Name, gw.Spec.GatewayClassName, addr,
			Badges(gw.Status.Conditions, "Accepted", "Programmed"))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "    LISTENER\tPROTOCOL\tPORT\tHOSTNAME\tROUTES\tSTATUS")
		for i, l := range gw.Spec.Listeners {
			st := findListenerStatus(gw.Status.Listeners, string(l.Name))
			routes, status := "-", "not managed"
			if st != nil {
				routes = fmt.Sprint(st.AttachedRoutes)
				status = listenerHealth(st.Conditions)
			}
			_ = i
			fmt.Fprintf(tw, "    %s\t%s\t%d\t%s\t%s\t%s\n", l.Name, l.Protocol, l.Port, hostOrAny(l.Hostname), routes, status)
		}
		tw.Flush()
		for _, ls := range res.Objects.ListenerSets {
			if !parentIs(ls, gw) {
				continue
			}
			fmt.Fprintf(w, "    ListenerSet %s/%s  %s\n", ls.Namespace, ls.Name, Badges(ls.Status.Conditions, "Accepted", "Programmed"))
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			for _, l := range ls.Spec.Listeners {
				routes, status := "-", "not attached"
				for _, st := range ls.Status.Listeners {
					if string(st.Name) == string(l.Name) {
						routes, status = fmt.Sprint(st.AttachedRoutes), listenerHealth(st.Conditions)
					}
				}
				fmt.Fprintf(tw, "      %s\t%s\t%d\t%s\t%s\t%s\n", l.Name, l.Protocol, l.Port, hostOrAny(l.Hostname), routes, status)
			}
			tw.Flush()
		}
	}
}

func parentIs(ls *gwv1.ListenerSet, gw *gwv1.Gateway) bool {
	ns := ls.Namespace
	if ls.Spec.ParentRef.Namespace != nil && *ls.Spec.ParentRef.Namespace != "" {
		ns = string(*ls.Spec.ParentRef.Namespace)
	}
	return ns == gw.Namespace && string(ls.Spec.ParentRef.Name) == gw.Name
}

func findListenerStatus(ls []gwv1.ListenerStatus, name string) *gwv1.ListenerStatus {
	for i := range ls {
		if string(ls[i].Name) == name {
			return &ls[i]
		}
	}
	return nil
}

// listenerHealth is "ok" or the first problem condition.
func listenerHealth(conds []metav1.Condition) string {
	var bad []string
	for _, c := range conds {
		if engine.ConditionIsProblem(c.Type, string(c.Status)) {
			bad = append(bad, c.Type+"="+string(c.Status)+" ("+c.Reason+")")
		}
	}
	if len(bad) == 0 {
		return "ok"
	}
	return strings.Join(bad, ", ")
}

func hostOrAny(h *gwv1.Hostname) string {
	if h == nil || *h == "" {
		return "*"
	}
	return string(*h)
}

// routeView is what the summary shows of any route kind.
type routeView struct {
	kind, ns, name string
	hostnames      []gwv1.Hostname
	parents        []gwv1.RouteParentStatus
}

func printRoutes(w io.Writer, res *engine.Result) {
	var rs []routeView
	res.Objects.EachRoute(func(r engine.Route) {
		k := r.Key()
		gateway, mesh := meshParents(r.RouteStatus().Parents)
		if len(gateway) == 0 && len(mesh) > 0 {
			return // only in the mesh section
		}
		rs = append(rs, routeView{k.Kind, k.Namespace, k.Name, r.Hostnames(), gateway})
	})
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nRoutes:")
	for _, r := range rs {
		hosts := "*"
		if len(r.hostnames) > 0 {
			var hs []string
			for _, h := range r.hostnames {
				hs = append(hs, string(h))
			}
			hosts = strings.Join(hs, ", ")
		}
		fmt.Fprintf(w, "  %s %s/%s  hostnames %s\n", r.kind, r.ns, r.name, hosts)
		if len(r.parents) == 0 {
			fmt.Fprintln(w, "    (no parent managed by gwdev)")
		}
		for _, p := range r.parents {
			ns := r.ns
			if p.ParentRef.Namespace != nil {
				ns = string(*p.ParentRef.Namespace)
			}
			target := fmt.Sprintf("%s %s/%s", kindOf(p.ParentRef), ns, p.ParentRef.Name)
			if p.ParentRef.SectionName != nil {
				target += "/" + string(*p.ParentRef.SectionName)
			}
			fmt.Fprintf(w, "    → %s  %s\n", target, Badges(p.Conditions, "Accepted", "ResolvedRefs"))
		}
	}
}

func kindOf(ref gwv1.ParentReference) string {
	if ref.Kind == nil {
		return "Gateway"
	}
	return string(*ref.Kind)
}

// Plural is n and word, with an "s" unless n is 1 ("1 error", "2 errors").
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// RoundDuration rounds d for a human: to 10ms above a second, to 100µs
// above a millisecond, else to the microsecond.
func RoundDuration(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(10 * time.Millisecond)
	case d > time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
