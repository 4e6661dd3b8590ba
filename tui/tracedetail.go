package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/gwdev/gwdev/emulator"
)

// detailHang is the indent of a wrapped decision step: past "  1 listener  ".
const detailHang = 14

// traceDetail renders one request: summary, the routing decision step by
// step, filters, timings and both header sets.
func traceDetail(st *styles, t emulator.Trace, width int) []string {
	statusStyle := st.OK
	switch {
	case t.Status >= 500 || t.Status == 0 && t.End == "":
		statusStyle = st.Error
	case t.Status >= 400:
		statusStyle = st.Warning
	}
	what := strings.TrimSpace(t.Method + " " + t.Host + t.Path)
	if rawStream(t) { // a stream: its protocol and the name it asked for (SNI) or where it went
		what = strings.TrimSpace(methodCell(t) + " " + orDefault(hostCell(t), t.Address))
	}
	head := st.Title.Render(what) + "  → " + statusStyle.Render(statusCell(t)) +
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
	if tls := tlsSummary(t); tls != "" {
		add("tls", tls)
	}
	switch {
	case t.Listener == "":
		fail(orDefault(t.Reason, "no listener took the request"))
	default:
		l := t.Listener
		if t.Host != "" {
			l += st.Dim.Render("  (host " + t.Host + ")")
		}
		add("listener", l)
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
		if t.Span != "" {
			add("span", t.Span) // XTelemetryPolicy: trace id/span id and its fate
		}
		if t.Reason != "" {
			fail(t.Reason)
		}
		if t.Location != "" {
			add("redirect", t.Location)
		}
	}
	if t.Hint != "" {
		add("instead", st.OK.Render(t.Hint))
	}
	switch {
	case t.GRPCStatus != "":
		add("answered", statusStyle.Render(strconv.Itoa(t.Status))+" grpc-status "+grpcStyle(st, t.GRPCStatus).Render(t.GRPCStatus))
	case t.Status != 0:
		add("answered", statusStyle.Render(strconv.Itoa(t.Status)))
	}
	if t.End != "" {
		add("ended", t.EndText())
	}
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
	if rawStream(t) {
		return lines // a raw stream has no HTTP headers to record
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

// tlsSummary is a trace's TLS line: SNI, the ALPN offered and agreed, the
// version and the client certificate ("" : not a TLS connection).
func tlsSummary(t emulator.Trace) string {
	isTLS := t.SNI != "" || t.TLSVersion != "" || len(t.ALPN) > 0 || t.NegotiatedProtocol != "" ||
		strings.HasPrefix(t.Proto, "TLS") || strings.HasPrefix(t.Proto, "HTTPS")
	if !isTLS {
		return ""
	}
	parts := []string{"SNI " + orDefault(t.SNI, "(none)")}
	if len(t.ALPN) > 0 || t.NegotiatedProtocol != "" {
		alpn := "ALPN " + orDefault(strings.Join(t.ALPN, ","), "(none offered)")
		if t.NegotiatedProtocol != "" {
			alpn += " → " + t.NegotiatedProtocol
		}
		parts = append(parts, alpn)
	}
	if t.TLSVersion != "" {
		parts = append(parts, t.TLSVersion)
	}
	if t.ClientCert != "" {
		parts = append(parts, "client cert: "+t.ClientCert)
	}
	return strings.Join(parts, " · ")
}

// grpcStyle colours a grpc-status name: OK is fine, anything else failed.
func grpcStyle(st *styles, status string) lipgloss.Style {
	if status == "OK" {
		return st.OK
	}
	return st.Error
}
