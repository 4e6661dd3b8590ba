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

// TraceSource is where ForwardTraces takes traces from:
// *emulator.TraceReader, which reads the trace history at the dashboard's
// pace, so that a request costs the dashboard no copy and no wake-up.
type TraceSource interface {
	// Ready has a value when traces were recorded since it was last taken.
	Ready() <-chan struct{}
	// Done is closed when the source ends.
	Done() <-chan struct{}
	// Read returns the traces recorded since the last Read, oldest first,
	// at most the newest limit, in dst's array when it is big enough;
	// skipped counts the older ones left out.
	Read(dst []emulator.Trace, limit int) (batch []emulator.Trace, skipped int)
}

var _ TraceSource = (*emulator.TraceReader)(nil)

// ForwardTraces reads traces from src and sends them to the dashboard in
// batches, at most one TracesMsg per interval (FrameInterval when 0), or
// per three intervals after a batch of heavyBatch traces or more; the
// first trace after a quiet interval goes at once. A batch keeps at most
// limit traces, the newest (0: defaultTraceLimit); the older ones are
// counted in its Trimmed. Batch arrays come back from the Model once it
// has taken their traces and are reused. It returns when ctx is done, or
// after sending what is left when src ends; send is typically
// Program.Send.
func ForwardTraces(ctx context.Context, src TraceSource, send func(tea.Msg), interval time.Duration, limit int) {
	if interval <= 0 {
		interval = FrameInterval
	}
	if limit <= 0 {
		limit = defaultTraceLimit
	}
	// Arrays of limit traces the Model has handed back; two are enough,
	// one the Model is taking and one being filled.
	free := make(chan []emulator.Trace, 2)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var last time.Time // when the last batch was sent
	wait := interval   // the time due between that batch and the next
	trimmed := 0       // skipped traces not yet reported
	for {
		open := true
		select {
		case <-ctx.Done():
			return
		case <-src.Done():
			open = false
		case <-src.Ready():
		}
		// Wait for the frame without taking Ready's tokens: each token taken
		// would let the next request wake this goroutine.
		if d := wait - time.Since(last); open && d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return
			case <-src.Done():
				open = false
			case <-timer.C:
			}
		}
		var buf []emulator.Trace
		select {
		case buf = <-free:
		default: // the Model still has them: one more, that Read never grows
			buf = make([]emulator.Trace, 0, limit)
		}
		batch, skipped := src.Read(buf, limit)
		trimmed += skipped
		if len(batch) > 0 {
			wait = interval
			if len(batch) >= heavyBatch {
				wait = 3 * interval
			}
			last = time.Now()
			send(TracesMsg{Traces: batch, Trimmed: trimmed, free: free})
			trimmed = 0
		} else {
			TracesMsg{Traces: batch, free: free}.release() // nothing new: kept for the next frame
		}
		if !open {
			return
		}
	}
}
