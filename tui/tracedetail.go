package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gwdev/gwdev/emulator"
)

// detailHang is the indent of a wrapped decision step: past "  1 listener  ".
const detailHang = 14

// traceDetail renders one request: summary, the routing decision step by
// step, filters, timings and both header sets.
func traceDetail(st *styles, t emulator.Trace, width int) []string {
	statusStyle := st.OK
	switch {
	case t.Status >= 500 || t.Status == 0:
		statusStyle = st.Error
	case t.Status >= 400:
		statusStyle = st.Warning
	}
	head := st.Title.Render(t.Method+" "+t.Host+t.Path) + "  → " + statusStyle.Render(strconv.Itoa(t.Status)) +
		"  " + roundDuration(time.Duration(t.Duration)) + "  " + st.Dim.Render(t.Time.Format("15:04:05.000"))
	if t.Client != "" {
		head += st.Dim.Render("  from " + t.Client)
	}
	lines := []string{head, "", st.Bold.Render("Decision")}
	step := 0
	add := func(what, detail string) {
		step++
		lines = append(lines, fmt.Sprintf("  %d %-9s %s", step, what, detail))
	}
	fail := func(why string) {
		step++
		lines = append(lines, fmt.Sprintf("  %d %s", step, st.Error.Render("✗ "+why)))
	}
	arrived := t.Address
	if t.Gateway != "" {
		arrived += fmt.Sprintf(" (%s port %d)", t.Gateway, t.Port)
	}
	if t.Proto != "" {
		arrived += " " + t.Proto
	}
	if t.GRPC {
		arrived += " gRPC"
	}
	add("arrived", arrived)
	switch {
	case t.Listener == "":
		fail(orDefault(t.Reason, "no listener took the request"))
	default:
		add("listener", t.Listener+st.Dim.Render("  (host "+t.Host+")"))
		if t.VirtualHost != "" {
			add("vhost", t.VirtualHost)
		}
		if t.Rule == "" {
			fail(orDefault(t.Reason, "no rule matched"))
			break
		}
		rule := t.Rule
		if t.Source != "" {
			rule += st.Dim.Render("  " + t.Source)
		}
		add("rule", rule)
		for _, f := range t.Filters {
			add("filter", f)
		}
		if t.Backend != "" {
			b := t.Backend
			if t.Service != "" {
				b += " → Service " + t.Service
			}
			if t.Target != "" {
				b += " (" + t.Target + ")"
			}
			add("backend", b)
			if t.Why != "" {
				lines = append(lines, strings.Repeat(" ", detailHang)+st.Dim.Render(t.Why))
			}
		}
		if t.Upstream != "" {
			add("upstream", fmt.Sprintf("%s, %s", t.Upstream, plural(max(1, t.Attempts), "attempt")))
		}
		if t.BackendClientCert != "" {
			add("mTLS", "client certificate "+t.BackendClientCert)
		}
		if t.Reason != "" {
			fail(t.Reason)
		}
		if t.Location != "" {
			add("redirect", t.Location)
		}
	}
	add("answered", statusStyle.Render(strconv.Itoa(t.Status)))
	lines = append(lines, "", st.Bold.Render("Timings"))
	total := time.Duration(t.Duration)
	up := time.Duration(t.UpstreamDuration)
	timing := "  total " + roundDuration(total)
	if up > 0 {
		timing += "  upstream " + roundDuration(up) + "  gateway " + roundDuration(total-up)
	}
	lines = append(lines, timing, fmt.Sprintf("  bytes in %d  out %d", t.BytesIn, t.BytesOut))
	if t.Truncated != "" {
		lines = append(lines, "  "+st.Warning.Render("trace shortened: "+t.Truncated))
	}
	lines = append(lines, "", st.Bold.Render("Request headers"))
	lines = append(lines, indentAll(headerLines(t.RequestHeaders), "  ", "(none recorded)")...)
	lines = append(lines, "", st.Bold.Render("Response headers"))
	lines = append(lines, indentAll(headerLines(t.ResponseHeaders), "  ", "(none recorded)")...)
	return lines
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func indentAll(lines []string, indent, empty string) []string {
	if len(lines) == 0 {
		return []string{indent + empty}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = indent + l
	}
	return out
}
