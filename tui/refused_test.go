package tui

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/gwdev/gwdev/emulator"
)

// A listener's refusal over its connection limit shows in the trace list
// and the trace detail with its reason and count.
func TestRefusalTraceIsVisible(t *testing.T) {
	tr := emulator.Trace{Time: time.Now(), Client: "127.0.0.1:5000", Gateway: "gateway/default/web", Listener: "gateway/default/web/listener/http",
		Address: "127.0.0.1:8080", Proto: "HTTP", End: "refused", Refused: 7,
		Reason: "refused: 4096 connections are open on this listener, the limit (gwdev up --max-conns) (7 refused since the last note)"}
	if c := ruleCell(tr); !strings.Contains(c, "✗ refused: 4096 connections") {
		t.Errorf("list cell %q", c)
	}
	detail := strings.Join(traceDetail(newStyles(lipgloss.NewRenderer(io.Discard), true), tr, 160), "\n")
	if !strings.Contains(detail, "7 refused since the last note") || !strings.Contains(detail, "--max-conns") {
		t.Errorf("detail:\n%s", detail)
	}
}
