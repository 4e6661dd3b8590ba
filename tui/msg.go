package tui

import (
	"github.com/gwdev/gwdev/emulator"
)

// The dashboard's state arrives as the Session's own *app.State (after the
// first load and after every reload; the dashboard keeps the previous one
// to highlight what changed and to diff status) and the Ingress
// comparison as app.MigrationState: the application's types, not copies.
// The messages below are the dashboard's own.

// TracesMsg is a batch of new request traces, oldest first. ForwardTraces
// sends at most one per frame.
type TracesMsg struct {
	Traces []emulator.Trace
	// Trimmed counts older traces of the batch left out to keep it within
	// the dashboard's list size; they count in the request rate.
	Trimmed int
	// free takes Traces' array back for ForwardTraces to reuse once the
	// Model has copied the traces out (nil: nobody reuses it).
	free chan<- []emulator.Trace
}

// release hands the batch's array back to ForwardTraces, if it wants it.
func (m TracesMsg) release() {
	if m.free == nil {
		return
	}
	select {
	case m.free <- m.Traces:
	default:
	}
}

// WatchErrorMsg reports a failure of the file watcher (for example too many
// watches); it is shown in the status line.
type WatchErrorMsg struct {
	Err error
}

// NoticeMsg is a line of information for the status line, such as where
// backend mappings came from.
type NoticeMsg struct {
	Text string
	// Problem shows it as an error.
	Problem bool
}
