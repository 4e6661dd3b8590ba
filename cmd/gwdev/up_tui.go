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

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/tui"
	"github.com/gwdev/gwdev/watch"
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
// once it returns.
func (o *upOptions) runTUI(ctx context.Context, out io.Writer, dir string, w *watch.Watcher, cfgChanged <-chan struct{}, rl *reloader, admin adminState) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	noColor := os.Getenv("NO_COLOR") != ""
	m := tui.New(tui.Options{Dir: dir, Renderer: tui.NewRenderer(out, noColor), NoColor: noColor, Clipboard: clipboardWriter(out),
		SystemClipboard: clipboard.WriteAll, Admin: admin.note, AdminProblem: admin.problem, CAFiles: knownCAFiles(dir)})
	// No signal handler of Bubble Tea's: up's own (signal.NotifyContext)
	// cancels ctx on SIGINT and SIGTERM. With both, Bubble Tea's could
	// take the signal after ctx had stopped the event loop, block sending
	// it a quit, and hang the shutdown (TestUpTUIStopsOnSIGTERM). In raw
	// mode ^C is a key the dashboard handles.
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out),
		tea.WithFPS(int(time.Second/tui.FrameInterval)), tea.WithoutSignalHandler())
	rl.out, rl.notify = io.Discard, func(s tui.StateMsg) { p.Send(s) }
	// The Migration view: migrate --compare after each reload with
	// Ingresses, off this loop (up_migration.go).
	mig := newMigrationRunner(func(m tui.MigrationMsg) { p.Send(m) })
	defer mig.wait()
	apply := func(u *watch.Update, first bool) {
		rl.apply(u, first)
		mig.submit(ctx, rl.project, u.Result, rl.n-1)
		switch note, bad := rootNotice(dir, u, first); {
		case bad:
			p.Send(tui.WatchErrorMsg{Err: errors.New(note)})
		case note != "":
			p.Send(tui.NoticeMsg{Text: note})
		}
	}
	traces := rl.srv.ReadTraces() // read at the dashboard's frame rate
	defer traces.Close()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		tui.ForwardTraces(ctx, traces, p.Send, 0, 0)
	}()
	go func() {
		defer wg.Done()
		if rl.project.cfg.path != "" {
			p.Send(tui.NoticeMsg{Text: "settings from " + rl.project.cfg.path + " (reloaded when it changes)"})
		}
		if admin.problem { // said last, so that it is what the status line shows
			p.Send(tui.NoticeMsg{Text: admin.note, Problem: true})
		}
		apply(w.Current(), true)
		for {
			select {
			case <-ctx.Done():
				return
			case err := <-w.Errors():
				p.Send(tui.WatchErrorMsg{Err: err})
			case u := <-w.Updates():
				apply(u, false)
			case <-cfgChanged:
				n := rl.n
				rl.configChanged()
				if rl.n != n { // gwdev.yaml changed: compared with the new settings
					mig.submit(ctx, rl.project, rl.lastUpdate.Result, rl.n-1)
				}
			}
		}
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

// stateMsg converts a watch update and what was made of it into the
// dashboard's StateMsg.
func stateMsg(u *watch.Update, res *engine.Result, rep *emulator.ApplyReport, reload int, at time.Time, translated, applied time.Duration) tui.StateMsg {
	msg := tui.StateMsg{Result: res, Ports: rep.Ports, Changed: u.Changed, Reload: reload, Files: u.Result.Files,
		Time: at, Load: u.Took, Translate: translated, Apply: applied}
	for _, p := range u.Result.Problems {
		msg.Problems = append(msg.Problems, tui.LoadProblem{File: p.File, Line: p.Line, Column: p.Column,
			Object: p.Object, Field: p.Field, Message: p.Message, Hint: p.Hint()})
	}
	for _, s := range u.Stale {
		msg.Stale = append(msg.Stale, tui.StaleObject{Object: s.Object, Source: s.Source, Reason: s.Reason})
	}
	return msg
}
