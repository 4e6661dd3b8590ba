package tui

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/gwdev/gwdev/emulator"
)

// TestTraceDetailShowsSpan: a request through a Gateway with an
// XTelemetryPolicy shows its span's ids and fate in the request view.
func TestTraceDetailShowsSpan(t *testing.T) {
	tr := emulator.Trace{Gateway: "gateway/default/gw", Listener: "gateway/default/gw/listener/http",
		Rule: "httproute/default/app/rule/0/match/0", Backend: "httproute/default/app/rule/0/backend/0", Status: 200,
		Span: "4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7 sampled, dropped: the export queue is full"}
	detail := strings.Join(traceDetail(newStyles(lipgloss.NewRenderer(io.Discard), true), tr, 160), "\n")
	if !strings.Contains(detail, "4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7 sampled, dropped: the export queue is full") {
		t.Errorf("request view lacks the span:\n%s", detail)
	}
}
