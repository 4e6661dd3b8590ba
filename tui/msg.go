package tui

import (
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
)

// StateMsg is one translated state of the watched folder, sent after the
// first load and after every reload. The dashboard keeps the previous one to
// highlight what changed and to diff status.
type StateMsg struct {
	// Result is the translation: objects with status, table, findings
	// (nil: nothing loaded yet).
	Result *engine.Result
	// Problems are the documents and files that failed to load (nil: none).
	Problems []LoadProblem
	// Stale lists objects still served at their last good version because
	// their file no longer loads (nil: none).
	Stale []StaleObject
	// Ports is what the data plane bound for each Gateway port (nil: none).
	Ports []emulator.PortReport
	// Changed are the files reloaded or removed for this state (nil: the
	// first load).
	Changed []string
	// Reload counts reloads: 0 is the first load.
	Reload int
	// Files is the number of manifest files read.
	Files int
	// Time is when the state was applied (zero: unknown).
	Time time.Time
	// Load, Translate and Apply are how long each step took.
	Load, Translate, Apply time.Duration
}

// LoadProblem is one reason a file, document or object was not loaded.
type LoadProblem struct {
	// File is the manifest path ("" when not about one file).
	File string
	// Line and Column are 1-based (0: unknown).
	Line, Column int
	// Object names the object, if it could be identified.
	Object engine.ObjectKey
	// Field is the JSON path of the offending field ("" : none).
	Field string
	// Message is the full error, as the loader words it.
	Message string
	// Hint says what the problem means and how to fix it, as the loader
	// knows it (watch.Problem.Hint); the Problems view shows it.
	Hint string
}

// Where renders the problem's position as file:line ("" when unknown).
func (p LoadProblem) Where() string {
	return engine.Source{File: p.File, Line: p.Line}.String()
}

// StaleObject is an object still in effect at its last good version.
type StaleObject struct {
	Object engine.ObjectKey
	// Source is where the last good version was read.
	Source engine.Source
	// Reason is the load problem that keeps the new version out.
	Reason string
}

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
