package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/emulator"
)

// FrameInterval is how often ForwardTraces sends a batch at most: about 30
// frames per second, so that heavy traffic cannot make the dashboard
// redraw more often than that.
const FrameInterval = time.Second / 30

// ForwardTraces reads traces from a subscription (emulator.Server.Subscribe,
// which drops traces rather than slow requests when its buffer is full)
// and sends them to the dashboard in batches, at most one TracesMsg per
// interval (FrameInterval when 0). A batch keeps at most limit traces, the
// newest (0: defaultTraceLimit). It returns when ctx is done or traces is
// closed; send is typically Program.Send.
func ForwardTraces(ctx context.Context, traces <-chan emulator.Trace, send func(tea.Msg), interval time.Duration, limit int) {
	if interval <= 0 {
		interval = FrameInterval
	}
	if limit <= 0 {
		limit = defaultTraceLimit
	}
	var batch []emulator.Trace
	timer := time.NewTimer(interval)
	timer.Stop()
	armed := false
	flush := func() {
		if len(batch) > 0 {
			send(TracesMsg{Traces: batch})
			batch = nil
		}
	}
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case t, ok := <-traces:
			if !ok {
				timer.Stop()
				flush()
				return
			}
			batch = append(batch, t)
			if len(batch) > limit {
				batch = append(batch[:0], batch[len(batch)-limit:]...)
			}
			if !armed {
				timer.Reset(interval)
				armed = true
			}
		case <-timer.C:
			armed = false
			flush()
		}
	}
}
