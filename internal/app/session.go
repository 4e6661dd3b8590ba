package app

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
)

// Session is a project being served (`gwdev up`): it watches the
// project's folder and gwdev.yaml, translates every change, applies the
// routing table to the data plane and publishes one typed State to its
// subscribers (the dashboard, the plain printer, the admin API). Front
// ends read the State; none of them loads or translates.
type Session struct {
	dir     string // the watched folder, as given
	srv     *emulator.Server
	project *project.Project
	watcher *watch.Watcher
	// cfgChanged signals a change of gwdev.yaml (nil: not watched).
	cfgChanged <-chan struct{}
	// cfgErr is the last mistake found in gwdev.yaml (nil: none); the
	// mappings before it keep serving.
	cfgErr error
	// crdsFlag is true when --crds was given: gwdev.yaml's crds: is then
	// not used, at start or later.
	crdsFlag bool
	// cfgSeen is gwdev.yaml's configSignature when last read.
	cfgSeen string
	// lastUpdate is the watch state last applied, applied again when only
	// gwdev.yaml changes.
	lastUpdate *watch.Update
	n          int
	// prev is the last translation: each Gateway keeps its address from it.
	prev *engine.Result

	// stopGC ends serveGC's loop and waits for it (Close).
	stopGC func()

	mu    sync.Mutex
	subs  []func(*State)
	state *State
	// testSubs are told of routing test files saved (SubscribeTestFiles).
	testSubs []func(*State, []string)
}

// State is what a Session made of one load: the objects with their
// status, the findings, the routing table served and what the data plane
// bound. It is never modified once published.
type State struct {
	// Reload counts the loads before this one (0: the first load).
	Reload int
	// Update is what the watcher loaded, with a mistake in gwdev.yaml among
	// its problems.
	Update *watch.Update
	// Result is the translation: objects with status, findings (the
	// engine's, the loader's warnings, unused backend mappings, nothing to
	// serve) and the routing table.
	Result *engine.Result
	// Ports is what the data plane made of the table (nil: a one-shot
	// State, see Once, serves nothing).
	Ports *emulator.ApplyReport
	// Time is when the translation started (a one-shot State's, Once's:
	// when opening the project started); Load is how long loading took (a
	// reload's: the changed files); Translate and Apply how long the
	// translation and the data plane took (Apply: 0 in a one-shot State).
	Time                   time.Time
	Load, Translate, Apply time.Duration
	// Empty words a folder with no manifests ("": it has some); the
	// warning is among Result's findings too.
	Empty string
	// Root says what happened to the watched folder itself ("": nothing);
	// RootProblem is set when it is missing.
	Root        string
	RootProblem bool
}

// LoadProblems counts the manifests and settings that failed to load.
func (st *State) LoadProblems() int { return len(st.Update.Result.Problems) }

// SessionOptions say how a Session watches and serves.
type SessionOptions struct {
	// Dir is the folder watched, as the user gave it.
	Dir string
	// Server is the data plane the routing table is applied to (nil: none,
	// the Session only translates, as for the language server; nothing is
	// served and State.Ports is nil).
	Server *emulator.Server
	// CRDsFlag is set when --crds was given: gwdev.yaml's crds: is not used.
	CRDsFlag bool
	// Watch are the watcher's options (debounce, empty-file grace); the
	// render: commands are the project's.
	Watch watch.WatchOptions
	// ServeProcs serves on half the cores, loads and reloads on all of
	// them (project.ServeProcs), with a Server. It is the process's
	// setting: a test running Sessions beside other tests leaves it off.
	ServeProcs bool
}

// NewSession starts watching proj's folder and its gwdev.yaml until ctx
// ends, and keeps the heap's headroom for serving (serveGC) and, with
// o.ServeProcs, the data plane on half the cores until Close.
// Nothing is translated before Start.
func NewSession(ctx context.Context, proj *project.Project, o SessionOptions) (*Session, error) {
	w, err := proj.WatchDir(ctx, o.Watch)
	if err != nil {
		return nil, err
	}
	s := &Session{dir: o.Dir, srv: o.Server, project: proj, watcher: w, crdsFlag: o.CRDsFlag, cfgSeen: project.ConfigSignature(o.Dir)}
	s.cfgChanged = project.WatchConfig(ctx, o.Dir, o.Watch.Debounce)
	if s.srv == nil {
		s.stopGC = func() {} // no data plane: no serving heap headroom either
		return s, nil
	}
	gcCtx, stopGC := context.WithCancel(ctx)
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		project.ServeGC(gcCtx) // gc.go: heap headroom while serving
	}()
	restoreProcs := func() {}
	if o.ServeProcs {
		restoreProcs = project.ServeProcs() // procs.go: half the cores while serving
	}
	s.stopGC = func() {
		stopGC()
		<-gcDone
		restoreProcs()
	}
	return s, nil
}

// Close stops what the Session runs beside its loop (the serving GC
// target) and puts back the process's GOMAXPROCS; the watchers stop with
// NewSession's ctx.
func (s *Session) Close() { s.stopGC() }

// Subscribe adds a function told of every State, in the order subscribed,
// on the Session's goroutine (a slow subscriber delays the next reload).
func (s *Session) Subscribe(f func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, f)
}

// SubscribeTestFiles adds a function told, on the Session's goroutine,
// when routing test files (*.gwtest.yaml) below the folder were saved or
// removed, with the last State (nil: none yet) and their paths. The
// manifests are not reloaded: test files never load as manifests.
func (s *Session) SubscribeTestFiles(f func(st *State, paths []string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.testSubs = append(s.testSubs, f)
}

// State returns the last State published (nil: none yet).
func (s *Session) State() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Project is the project served; gwdev.yaml's settings in it change when
// the file does.
func (s *Session) Project() *project.Project { return s.project }

// Start loads, translates and applies the folder as it is now and
// publishes the first State.
func (s *Session) Start() { s.apply(s.watcher.Current(), true) }

// Run publishes a new State for every change of the folder or gwdev.yaml
// until ctx ends; watch errors go to onError. Call Start first.
func (s *Session) Run(ctx context.Context, onError func(error)) {
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-s.watcher.Errors():
			onError(err)
		case u := <-s.watcher.Updates():
			s.apply(u, false)
		case paths := <-s.watcher.TestFiles():
			s.mu.Lock()
			st, subs := s.state, s.testSubs
			s.mu.Unlock()
			for _, f := range subs {
				f(st, paths)
			}
		case <-s.cfgChanged:
			s.configChanged()
		}
	}
}

// apply translates u, applies its table and publishes the State.
func (s *Session) apply(u *watch.Update, first bool) {
	if u.Root == watch.RootBack {
		s.readConfig() // the folder came back, maybe with another gwdev.yaml
	}
	s.lastUpdate = u
	u = s.withConfigProblem(u)
	s.n++
	start := time.Now()
	// No collection until the new table serves and the result is finished
	// (gc.go): collecting the last reload's garbage meanwhile slowed
	// edit-to-served.
	gcDone := project.HoldGC()
	// The data plane takes the table as soon as it is built, while the rest
	// of the result (routes served, findings) is finished on another core;
	// translated and applied overlap. Gateways keep their addresses (prev).
	res, finish := s.project.TranslateTableFirst(u.Result.Snapshot, project.Translation{Now: metav1.NewTime(start.UTC().Truncate(time.Second)), Prev: s.prev})
	tableAt := time.Now()
	finished := make(chan time.Duration, 1)
	go func() {
		finish()
		finished <- time.Since(start)
	}()
	var rep *emulator.ApplyReport
	if s.srv != nil {
		rep = s.srv.Apply(res.Table)
	}
	applied := time.Since(tableAt)
	translated := <-finished
	gcDone()
	s.prev = res
	empty := withLoadFindings(s.project, res, u, s.dir, "serve")
	if empty != "" {
		// As check fails on it: a folder emptied of its manifests serves
		// nothing, which is no "no problems".
		msg := empty + " Every listener is closed."
		if s.srv == nil {
			msg = empty
		}
		project.AddFindings(res, []engine.Finding{{Severity: engine.SeverityWarning, Message: msg}})
	}
	st := &State{Reload: s.n - 1, Update: u, Result: res, Ports: rep, Time: start, Load: u.Took, Translate: translated, Apply: applied, Empty: empty}
	st.Root, st.RootProblem = rootNotice(s.dir, u, first)
	s.mu.Lock()
	s.state = st
	subs := s.subs
	s.mu.Unlock()
	for _, f := range subs {
		f(st)
	}
}

// rootNotice words what happened to the watched folder itself in u (""
// when nothing did); bad is true when it is missing.
func rootNotice(dir string, u *watch.Update, first bool) (note string, bad bool) {
	switch u.Root {
	case watch.RootMissing:
		if first {
			return dir + " does not exist yet: watching for it to appear", true
		}
		return dir + " is gone (removed or renamed away): still serving its last objects, watching for it to come back", true
	case watch.RootBack:
		return dir + " is there: watching it, every file (re)loaded", false
	}
	return "", false
}

// Server is the data plane the Session applies its tables to (nil: none).
func (s *Session) Server() *emulator.Server { return s.srv }
