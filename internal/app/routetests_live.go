package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gwdev/gwdev/internal/routetest"
)

// TestsState is one message of a TestRunner: the routing tests of reload
// number Reload ran (Run) or could not (Err: a test file that does not
// parse, or the data plane could not start).
type TestsState struct {
	Reload int
	// Saved are the test files whose save made this run, on reload
	// Reload's State (nil: the run follows the reload).
	Saved []string
	Run   *routetest.Run
	Err   error
}

// Failed reports whether the run did not happen or a case failed.
func (m TestsState) Failed() bool {
	if m.Err != nil || m.Run == nil {
		return true
	}
	_, failed := m.Run.Counts()
	return failed > 0
}

// testsRunTimeout bounds one run after a reload.
const testsRunTimeout = 60 * time.Second

// TestRunner runs the folder's routing tests (gwdev test) after every
// reload of a Session, on the State's translation (never a pipeline of its
// own), served by a data plane of its own on free ports: off the watch
// loop, one run at a time, a newer State cancelling the running one. A
// folder without test files is not run.
type TestRunner struct {
	dir  string
	send func(TestsState)

	mu     sync.Mutex
	cancel context.CancelFunc
	next   *State
	// nextSaved are the test files saved that asked for next (nil: a
	// reload did).
	nextSaved []string
	running   bool
	wg        sync.WaitGroup
}

// NewTestRunner returns a runner of dir's tests that delivers each run to
// send.
func NewTestRunner(dir string, send func(TestsState)) *TestRunner {
	return &TestRunner{dir: dir, send: send}
}

// Submit asks for a run on st. It returns at once.
func (r *TestRunner) Submit(ctx context.Context, st *State) { r.submit(ctx, st, nil) }

// Rerun asks for a run on st (the State the Session serves) because the
// test files saved changed, as SubscribeTestFiles tells. It returns at once.
func (r *TestRunner) Rerun(ctx context.Context, st *State, saved []string) {
	r.submit(ctx, st, saved)
}

func (r *TestRunner) submit(ctx context.Context, st *State, saved []string) {
	if st == nil || st.Result == nil {
		return
	}
	if paths, err := routetest.Find(r.dir); err != nil || len(paths) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == st && saved != nil {
		saved = append(saved, r.nextSaved...)
	}
	r.next, r.nextSaved = st, saved
	if r.running {
		if r.cancel != nil {
			r.cancel()
		}
		return
	}
	r.running = true
	r.wg.Add(1)
	go r.loop(ctx)
}

func (r *TestRunner) loop(ctx context.Context) {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		st, saved := r.next, r.nextSaved
		r.next, r.nextSaved = nil, nil
		if st == nil || ctx.Err() != nil {
			r.running, r.cancel = false, nil
			r.mu.Unlock()
			return
		}
		run, cancel := context.WithTimeout(ctx, testsRunTimeout)
		r.cancel = cancel
		r.mu.Unlock()
		msg := TestsState{Reload: st.Reload, Saved: r.relative(saved)}
		files, err := LoadTestFiles(r.dir, TestOptions{})
		if err == nil {
			if errs := impossibleExpectations(st.Result, files); len(errs) > 0 {
				err = &TestFilesError{Errs: errs}
			}
		}
		if err == nil {
			msg.Run, err = runOnResult(run, st.Result, r.dir, TestOptions{}, files)
		}
		msg.Err = err
		cancel()
		r.mu.Lock()
		superseded := r.next != nil
		r.mu.Unlock()
		if ctx.Err() != nil || superseded {
			continue
		}
		r.send(msg)
	}
}

// relative are paths relative to the runner's folder where they are in it.
func (r *TestRunner) relative(paths []string) []string {
	var out []string
	for _, p := range paths {
		if rel, err := filepath.Rel(r.dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
		out = append(out, p)
	}
	return out
}

// Wait waits for the running tests to end (after ctx ends).
func (r *TestRunner) Wait() { r.wg.Wait() }

// PrintTests writes a TestsState for gwdev up's plain output (TestsText),
// in one write.
func PrintTests(out io.Writer, m TestsState) {
	var b strings.Builder
	TestsText(&b, m)
	_, _ = io.WriteString(out, b.String())
}

// TestsSummary is a TestsState in one line (the dashboard's notice).
func TestsSummary(m TestsState) string {
	var b strings.Builder
	TestsText(&b, m)
	line, _, _ := strings.Cut(b.String(), "\n")
	if first, ok := firstFailure(m); ok {
		line += " — first: " + first
	}
	return strings.TrimPrefix(line, "gwdev: ")
}

func firstFailure(m TestsState) (string, bool) {
	if m.Run == nil {
		return "", false
	}
	for _, f := range m.Run.Files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if ls := CaseFailures(f.Path, c); len(ls) > 0 {
				return ls[0], true
			}
		}
	}
	return "", false
}

// TestsText writes a TestsState: one line, and each failed case with the
// expectations it did not meet, at their lines.
func TestsText(out io.Writer, m TestsState) {
	when := fmt.Sprintf("reload %d", m.Reload)
	if len(m.Saved) > 0 {
		when += ", " + strings.Join(m.Saved, ", ") + " saved"
	}
	var tfe *TestFilesError
	switch {
	case errors.As(m.Err, &tfe):
		fmt.Fprintf(out, "gwdev: tests (%s): not run: the test files have errors:\n%s\n", when, tfe.Error())
		return
	case m.Err != nil:
		fmt.Fprintf(out, "gwdev: tests (%s): not run: %v\n", when, m.Err)
		return
	}
	n, failed := m.Run.Counts()
	if failed == 0 {
		fmt.Fprintf(out, "gwdev: tests (%s): all %d cases pass\n", when, n)
		return
	}
	fmt.Fprintf(out, "gwdev: tests (%s): %d of %d cases fail\n", when, failed, n)
	for _, f := range m.Run.Files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.Passed() {
				continue
			}
			fmt.Fprintf(out, "  FAIL %s:%d %s\n", f.Path, c.Line, c.Name)
			for _, l := range CaseFailures(f.Path, c) {
				fmt.Fprintf(out, "       %s\n", l)
			}
		}
	}
}

// CaseFailures are a failed case's failures in one line each: why it
// could not be sent, then "file:line field: expected X, got Y" per
// expectation not met (none: it passed).
func CaseFailures(file string, c *routetest.CaseResult) []string {
	var out []string
	if c.Error != "" {
		out = append(out, fmt.Sprintf("%s:%d %s", file, c.Line, c.Error))
	}
	for _, mm := range c.Mismatches {
		out = append(out, fmt.Sprintf("%s:%d %s: expected %s, got %s", file, max(mm.Line, c.Line), mm.Field, mm.Want, mm.Got))
	}
	return out
}
