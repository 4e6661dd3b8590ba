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

// heavyBatch is the batch size from which ForwardTraces slows down to a
// third of the frame rate: 100 traces a frame is 3,000 requests/s, a list
// scrolling too fast to read, and the data plane needs the CPU more.
const heavyBatch = 100

// ForwardTraces reads traces from a subscription (emulator.Server.Subscribe,
// which drops traces rather than slow requests when its buffer is full)
// and sends them to the dashboard in batches, at most one TracesMsg per
// interval (FrameInterval when 0), or per three intervals after a batch of
// heavyBatch traces or more. A batch keeps at most limit traces, the newest
// (0: defaultTraceLimit). It returns when ctx is done or traces is closed;
// send is typically Program.Send.
func ForwardTraces(ctx context.Context, traces <-chan emulator.Trace, send func(tea.Msg), interval time.Duration, limit int) {
	if interval <= 0 {
		interval = FrameInterval
	}
	if limit <= 0 {
		limit = defaultTraceLimit
	}
	var batch []emulator.Trace
	trimmed := 0 // older traces left out of the batch
	timer := time.NewTimer(interval)
	timer.Stop()
	armed := false
	wait := interval
	flush := func() {
		if len(batch) > limit {
			trimmed += len(batch) - limit
			batch = batch[len(batch)-limit:]
		}
		if len(batch) > 0 {
			wait = interval
			if len(batch) >= heavyBatch {
				wait = 3 * interval
			}
			send(TracesMsg{Traces: batch, Trimmed: trimmed})
			batch, trimmed = nil, 0
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
			if len(batch) >= 2*limit { // keep memory bounded between frames
				trimmed += len(batch) - limit
				batch = append(batch[:0], batch[len(batch)-limit:]...)
			}
			if !armed {
				timer.Reset(wait)
				armed = true
			}
		case <-timer.C:
			armed = false
			flush()
		}
	}
}
