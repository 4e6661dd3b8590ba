package main

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/atotto/clipboard"
	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/tui"
)

// useTUI reports whether `gwdev up` shows the dashboard: stdin and stdout
// are terminals, --no-tui is not given and the access log does not go to
// stderr (it would write over the dashboard).
func (o *upOptions) useTUI(out io.Writer) bool {
	return !o.noTUI && o.accessLog != "-" && terminals(out)
}

// terminals reports whether stdin and out are terminals.
func terminals(out io.Writer) bool {
	f, ok := out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && term.IsTerminal(int(os.Stdin.Fd()))
}

// dashboardOff says, in words, why a terminal that would show the
// dashboard gets plain lines instead ("" : it does not, or is no terminal
// and expects none).
func (o *upOptions) dashboardOff(terminal bool) string {
	if terminal && !o.noTUI && o.accessLog == "-" {
		return "--access-log - writes JSON lines to stderr, over where the dashboard would be: printing plain lines instead (--access-log FILE keeps the dashboard; tail -f FILE shows the log)"
	}
	return ""
}

// runTUI runs the dashboard until the user quits or ctx is done: the watch
// loop and the trace subscription feed it with Program.Send. Nothing else
// writes to the terminal meanwhile. Listeners are closed by the caller
// once it returns. migrated is told every Migration comparison too.
func (o *upOptions) runTUI(ctx context.Context, out io.Writer, dir string, sess *app.Session, admin app.AdminState, migrated func(app.MigrationState)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	noColor := os.Getenv("NO_COLOR") != ""
	m := tui.New(tui.Options{Dir: dir, Renderer: tui.NewRenderer(out, noColor), NoColor: noColor, Clipboard: clipboardWriter(out),
		SystemClipboard: clipboard.WriteAll, Admin: admin.Note, AdminProblem: admin.Problem, CAFiles: app.KnownCAFiles(dir)})
	// No signal handler of Bubble Tea's: up's own (signal.NotifyContext)
	// cancels ctx on SIGINT and SIGTERM. With both, Bubble Tea's could
	// take the signal after ctx had stopped the event loop, block sending
	// it a quit, and hang the shutdown (TestUpTUIStopsOnSIGTERM). In raw
	// mode ^C is a key the dashboard handles.
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out),
		tea.WithFPS(int(time.Second/tui.FrameInterval)), tea.WithoutSignalHandler())
	// The Migration view: migrate --compare after each reload with
	// Ingresses, off the Session's loop (app.MigrationRunner).
	mig := app.NewMigrationRunner(func(m app.MigrationState) {
		p.Send(m)
		migrated(m) // the web view shows the same comparison
	})
	defer mig.Wait()
	// The folder's routing tests after every reload: the Tests view, and
	// the notice line when one fails.
	tests := app.NewTestRunner(dir, func(m app.TestsState) {
		p.Send(m)
		if m.Failed() {
			p.Send(tui.NoticeMsg{Text: app.TestsSummary(m), Problem: true})
		}
	})
	defer tests.Wait()
	// A save of only a test file runs them again on the State served.
	sess.SubscribeTestFiles(func(st *app.State, saved []string) { tests.Rerun(ctx, st, saved) })
	sess.Subscribe(func(st *app.State) {
		p.Send(st)
		mig.Submit(ctx, sess.Project(), st.Update.Result, st.Reload)
		tests.Submit(ctx, st)
		switch {
		case st.RootProblem:
			p.Send(tui.WatchErrorMsg{Err: errors.New(st.Root)})
		case st.Root != "":
			p.Send(tui.NoticeMsg{Text: st.Root})
		}
	})
	traces := sess.Server().ReadTraces() // read at the dashboard's frame rate
	defer traces.Close()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		tui.ForwardTraces(ctx, traces, p.Send, 0, 0)
	}()
	go func() {
		defer wg.Done()
		if path := sess.Project().ConfigPath(); path != "" {
			p.Send(tui.NoticeMsg{Text: "settings from " + path + " (reloaded when it changes)"})
		}
		if admin.Problem { // said last, so that it is what the status line shows
			p.Send(tui.NoticeMsg{Text: admin.Note, Problem: true})
		}
		sess.Start()
		sess.Run(ctx, func(err error) { p.Send(tui.WatchErrorMsg{Err: err}) })
	}()
	_, err := p.Run()
	cancel()
	wg.Wait()
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, tea.ErrInterrupted) {
		return nil // a signal: stopping is what was asked
	}
	return err
}

// clipboardWriter is where OSC 52 clipboard sequences go: stderr when it is
// the terminal too, so that they never interleave with frames on stdout.
func clipboardWriter(out io.Writer) io.Writer {
	if term.IsTerminal(int(os.Stderr.Fd())) {
		return os.Stderr
	}
	return out
}
