package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
)

// PlainPrinter is `gwdev up` without the dashboard: a subscriber that
// prints each of the Session's States as lines (NewPlainPrinter).
type PlainPrinter struct {
	out  io.Writer
	last map[string]string // port lines printed last time
}

// NewPlainPrinter returns a printer writing to out.
func NewPlainPrinter(out io.Writer) *PlainPrinter { return &PlainPrinter{out: out} }

// Print writes what st loaded, what failed and what is served: subscribe
// it with Session.Subscribe.
func (r *PlainPrinter) Print(st *State) {
	u, res, first, empty := st.Update, st.Result, st.Reload == 0, st.Empty
	if note := st.Root; note != "" {
		fmt.Fprintf(r.out, "gwdev: %s\n", note)
	}
	// The same counts as `gwdev check` (report.WriteSummary).
	nerr, nwarn := report.CountFindings(res.Findings)
	nerr += len(u.Result.Problems)
	what := "loaded"
	if !first {
		what = fmt.Sprintf("reload #%d (%s)", st.Reload, changedSummary(u.Changed))
	}
	counts := report.Plural(nerr, "problem")
	if nwarn > 0 {
		counts += ", " + report.Plural(nwarn, "warning")
	}
	if empty != "" {
		counts += ", warning: nothing to serve"
	}
	if ru := res.Reuse; !first && ru.Reused > 0 {
		// Incremental translation (engine/incremental.go): the routes
		// whose compiled rules came from the last reload.
		counts += fmt.Sprintf(", %d of %d routes reused", ru.Reused, ru.Reused+ru.Compiled)
	}
	if ru := res.Reuse; !first && ru.Patched {
		// The table is the last one with only the changed routes'
		// virtual hosts rebuilt (engine/incremental_table.go).
		counts += fmt.Sprintf(", table patched (%s rebuilt)", report.Plural(ru.VirtualHosts, "virtual host"))
	}
	fmt.Fprintf(r.out, "gwdev: %s: %s, %s; load %s, translate %s, apply %s\n", what,
		report.Plural(res.Objects.Len(), "object"), counts, report.RoundDuration(u.Took), report.RoundDuration(st.Translate), report.RoundDuration(st.Apply))
	if empty != "" {
		fmt.Fprintf(r.out, "  ! %s Every listener is closed.\n", empty)
	}
	for _, p := range u.Result.Problems {
		fmt.Fprintf(r.out, "  ✗ %s\n", p.String())
	}
	for _, s := range u.Stale {
		fmt.Fprintf(r.out, "  ! %s: still serving the last good version from %s\n", s.Object, s.Source)
	}
	for _, w := range u.Result.Warnings {
		fmt.Fprintf(r.out, "  ! %s\n", w)
	}
	for _, f := range res.Findings {
		// Every error and warning `gwdev check` lists, always: a warning
		// (an annotation gwdev does not emulate, a mapping nothing uses)
		// is never silent here while check reports it.
		mark := "✗"
		switch f.Severity {
		case engine.SeverityError:
		case engine.SeverityWarning:
			mark = "!"
		default:
			continue
		}
		scope := ""
		if f.Scope != "" {
			scope = " " + f.Scope
		}
		fmt.Fprintf(r.out, "  %s %s %s%s: %s\n", mark, f.Source, f.Object, scope, strings.TrimPrefix(f.Condition()+" "+f.Reason+": "+f.Message, " : "))
	}
	r.printPorts(st.Ports)
}

// printPorts prints the serving addresses when they change.
func (r *PlainPrinter) printPorts(rep *emulator.ApplyReport) {
	lines := map[string]string{}
	var order []string
	for _, p := range rep.Ports {
		key := fmt.Sprintf("%s %s/%d", p.Gateway, p.Transport, p.Port)
		var line string
		switch {
		case p.Error != "":
			line = fmt.Sprintf("  ✗ %s port %d (%s): not served: %s", p.Gateway, p.Port, p.Protocol, p.Error)
		case p.NotServed != "":
			line = fmt.Sprintf("  - %s port %d (%s): %s", p.Gateway, p.Port, p.Protocol, p.NotServed)
		case p.Fallback:
			why := ""
			if p.Moved != "" {
				why = ": " + p.Moved
			}
			line = fmt.Sprintf("  → %s port %d (%s) on %s (port %d could not be bound%s; --port-offset)", p.Gateway, p.Port, p.Protocol, p.Bound, p.Port, why)
		default:
			line = fmt.Sprintf("  → %s port %d (%s) on %s", p.Gateway, p.Port, p.Protocol, p.Bound)
		}
		lines[key] = line
		order = append(order, key)
	}
	changed := len(lines) != len(r.last)
	for k, v := range lines {
		if r.last[k] != v {
			changed = true
		}
	}
	if !changed {
		return
	}
	for _, k := range order {
		fmt.Fprintln(r.out, lines[k])
	}
	r.last = lines
}

func changedSummary(files []string) string {
	switch len(files) {
	case 0:
		return "no file changed"
	case 1:
		return files[0]
	}
	return fmt.Sprintf("%d files", len(files))
}
