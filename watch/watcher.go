package watch

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gwdev/gwdev/engine"
)

// Update is one state of a watched tree: the merged load result, with
// objects whose file broke kept at their last good version.
type Update struct {
	// Result is every file's objects merged. Problems lists what failed to
	// load; Snapshot includes stale objects.
	Result *LoadResult
	// Stale lists objects kept from an earlier version because their file
	// (or the object itself) no longer loads.
	Stale []StaleObject
	// Changed lists the files (re)loaded or removed for this update, sorted;
	// empty for the first update.
	Changed []string
	// Took is how long reloading the changed files took.
	Took time.Duration
	// Root says what happened to the watched root itself in this update
	// (RootSteady: nothing).
	Root RootEvent
}

// StaleObject is an object still in effect at its last good version.
type StaleObject struct {
	Object engine.ObjectKey
	Source engine.Source
	// Reason is the problem that keeps the new version out.
	Reason string
}

// WatchOptions tune a Watcher. The zero value is usable.
type WatchOptions struct {
	// Debounce coalesces bursts of events (0: 50ms): an event after this
	// long without one reloads at once; events closer together than this
	// (a `git checkout`, an editor writing a file in several steps) reload
	// once, this long after the last of them (debounce.go).
	Debounce time.Duration
	// EmptyGrace is how long a file that became empty keeps its last
	// objects in effect (0: DefaultEmptyGrace; negative: not at all). Some
	// editors truncate a file and write it again a moment later; an
	// intentionally emptied file takes effect once the grace is over.
	EmptyGrace time.Duration
	// DeleteGrace is how long a deleted file keeps its last objects in
	// effect (0: DefaultDeleteGrace; negative: not at all). `rm -rf dir`
	// deletes the files one by one before the directory, and a reload
	// between the two would drop objects that the missing root keeps.
	DeleteGrace time.Duration
	// Renders are commands whose output is loaded like a file, run again
	// when a file they watch changes (render.go).
	Renders []Render
	// Remote is the user's consent for kustomizations to fetch remote
	// resources (zero: none, kustomize_remote.go).
	Remote Consent
	// Overlay holds contents read instead of the files on disk (nil: none;
	// overlay.go).
	Overlay *Overlay
}

// Watcher keeps a LoadResult up to date with a directory tree, watching
// directories (not files: editors save by rename) with fsnotify, including
// directories created later. Each burst of changes produces one Update.
//
// The root may come and go: when it is removed or renamed away, or does
// not exist yet, the watcher watches its nearest existing ancestor, keeps
// the objects last loaded in effect and reports the root missing; when a
// directory (the same or another one, as after `mv new dir`) is there
// again, it watches and reloads it.
type Watcher struct {
	loader     *Loader
	root       string
	abs        string // root made absolute, to place ancestors and events
	debounce   time.Duration
	emptyGrace time.Duration
	// deleteGrace is WatchOptions.DeleteGrace with its default applied.
	deleteGrace time.Duration
	// fsw and watched are owned by the run goroutine once Watch returns:
	// fsw is replaced whenever the root changes, dropping every old watch.
	fsw     *fsnotify.Watcher
	watched rootWatch
	// stopped is closed when the run goroutine has returned.
	stopped chan struct{}
	// realRoot is the root with symlinks resolved; linkDirs are the
	// directories outside it watched for symlinked files (see
	// watchLinkTarget). Both are owned like fsw.
	realRoot string
	linkDirs map[string]bool
	// ctx is the watch's context, which render commands run under.
	ctx context.Context
	// renders are the render commands (WatchOptions.Renders); renderSet
	// delivers new ones (SetRenders).
	renders   []Render
	renderSet chan []Render
	// remote is WatchOptions.Remote.
	remote Consent
	// overlay is WatchOptions.Overlay (nil: none).
	overlay *Overlay
	// builds are the kustomize builds by folder, those another build
	// reads (bases) included, which are not in files.
	builds map[string]*sourceState

	mu    sync.Mutex
	files map[string]*watchedFile
	// merged are every file's objects in effect in collect's order, kept
	// between updates so that one sorts only the changed files' objects
	// (merged.go); mergedFiles are the file states they were taken from,
	// and paths their paths, sorted.
	merged      []mergedObject
	mergedFiles map[string]*watchedFile
	paths       []string
	// winners are the objects of the last update's Snapshot, by key, and
	// spare delivers a copy of its Sources made in the background once it
	// was published (nil: no update yet): the next update patches that
	// copy where the objects differ (merged.go).
	winners []*loaded
	spare   chan map[engine.ObjectKey]engine.Source
	// warnings are the last walk's (symlinks leaving the root).
	warnings []Warning
	current  *Update

	updates chan *Update
	errs    chan error
	// tests delivers the routing test files (*.gwtest.yaml) saved or
	// removed since the last read, as one list (TestFiles).
	tests chan []string
}

// watchedFile is the state of one manifest file.
type watchedFile struct {
	size int64
	mod  time.Time
	// emptySince is when the file was first seen empty while it still had
	// objects in effect (zero: it is not being held; see grace.go).
	emptySince time.Time
	// deletedSince is when the file was first found deleted while it still
	// had objects in effect (zero: it exists, or is not being held).
	deletedSince time.Time
	// good are the objects in effect from this file: its last load's
	// objects plus stale ones kept from before.
	good []loaded
	// load is the file's last load (its objects, problems and skipped
	// documents); the Watcher builds one Snapshot from every file's good.
	load  collected
	stale []StaleObject
	// source is set for a kustomize build or a render command's output
	// (watch_sources.go): what it read and when to run it again.
	source *sourceState
}

// Watch loads root and starts watching it until ctx is done. The first
// state is available at once from Current; later ones arrive on Updates.
func (l *Loader) Watch(ctx context.Context, root string, opts WatchOptions) (*Watcher, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", root, err)
	}
	w := &Watcher{loader: l, root: root, abs: abs, debounce: opts.Debounce, emptyGrace: opts.EmptyGrace, deleteGrace: opts.DeleteGrace,
		files: map[string]*watchedFile{}, updates: make(chan *Update, 1), errs: make(chan error, 1), tests: make(chan []string, 1),
		ctx: ctx, renders: opts.Renders, remote: opts.Remote, overlay: opts.Overlay, renderSet: make(chan []Render, 1), builds: map[string]*sourceState{}}
	if w.debounce <= 0 {
		w.debounce = 50 * time.Millisecond
	}
	if w.emptyGrace == 0 {
		w.emptyGrace = DefaultEmptyGrace
	}
	if w.deleteGrace == 0 {
		w.deleteGrace = DefaultDeleteGrace
	}
	ev, err := w.syncRoot()
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", root, err)
	}
	w.current, _ = w.rescan(nil, true, ev)
	if ev == RootMissing {
		go l.warm()
	}
	w.stopped = make(chan struct{})
	go w.run(ctx)
	return w, nil
}

// Current returns the latest state.
func (w *Watcher) Current() *Update {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.current
}

// Updates delivers new states. It holds at most one pending update: a
// slow reader gets the newest state, never a backlog.
func (w *Watcher) Updates() <-chan *Update { return w.updates }

// TestFiles delivers the routing test files (IsRoutingTestName) saved,
// created or removed below the root, once per burst of changes. They are
// never loaded as manifests, so a save of only test files publishes no
// Update: this tells the reader to run the tests again on the state it
// has. It holds at most one pending list, newer paths merged into it.
func (w *Watcher) TestFiles() <-chan []string { return w.tests }

// publishTests makes paths (sorted) pending on TestFiles, merged with an
// unread older list.
func (w *Watcher) publishTests(paths []string) {
	select {
	case old := <-w.tests:
		paths = append(paths, old...)
	default:
	}
	w.tests <- slices.Compact(slices.Sorted(slices.Values(paths)))
}

// Errors delivers watcher failures (for example too many watches).
func (w *Watcher) Errors() <-chan error { return w.errs }

// addDirs adds an fsnotify watch on dir and every directory below it that
// the loader would enter.
func (w *Watcher) addDirs(dir string) {
	fi, err := os.Stat(dir)
	if err != nil {
		return
	}
	if !fi.IsDir() {
		// A single file: watch its directory.
		_ = w.fsw.Add(filepath.Dir(dir))
		return
	}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(d string) {
		real, err := filepath.EvalSymlinks(d)
		if err != nil || seen[real] {
			return
		}
		seen[real] = true
		_ = w.fsw.Add(d)
		entries, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			if skipName(e.Name()) {
				continue
			}
			p := filepath.Join(d, e.Name())
			st, err := os.Stat(p)
			switch {
			case err != nil:
			case st.IsDir():
				walk(p)
			case e.Type()&fs.ModeSymlink != 0 && IsManifestName(e.Name()):
				w.watchLinkTarget(p)
			}
		}
	}
	walk(dir)
}

// watchCreated starts watching a new directory, or the target's directory
// of a new symlink leading out of the root.
func (w *Watcher) watchCreated(path string) {
	name := filepath.Base(path)
	st, err := os.Stat(path)
	if err != nil || skipName(name) {
		return
	}
	if st.IsDir() {
		w.addDirs(path)
		return
	}
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&fs.ModeSymlink != 0 && IsManifestName(name) {
		w.watchLinkTarget(path)
	}
}

// watchLinkTarget watches the directory of the file a symlink leads to
// when it is outside the root (the root's own directories are watched
// already), so that editing the target reloads the link.
func (w *Watcher) watchLinkTarget(link string) {
	target := realPath(link)
	if within(target, w.realRoot) {
		return
	}
	dir := filepath.Dir(target)
	if !w.linkDirs[dir] && w.fsw.Add(dir) == nil {
		w.linkDirs[dir] = true
	}
}

func (w *Watcher) run(ctx context.Context) {
	defer close(w.stopped)
	defer func() { w.fsw.Close() }()
	var timer, graceTimer *time.Timer
	var fire, graceFire <-chan time.Time
	touched := map[string]bool{}
	// testsTouched are the routing test files the events since the last
	// burst named: told on TestFiles, never loaded.
	testsTouched := map[string]bool{}
	quiet := debouncer{wait: w.debounce}
	flushTests := func() {
		if len(testsTouched) > 0 {
			w.publishTests(slices.Collect(maps.Keys(testsTouched)))
			testsTouched = map[string]bool{}
		}
	}
	// setGrace arms the timer for the end of the earliest grace of an
	// emptied file (zero: none).
	setGrace := func(until time.Time) {
		if graceTimer != nil {
			graceTimer.Stop()
		}
		graceFire = nil
		if !until.IsZero() {
			graceTimer = time.NewTimer(time.Until(until))
			graceFire = graceTimer.C
		}
	}
	// reload rescans what the events since the last one touched.
	reload := func() {
		root, err := w.syncRoot()
		if err != nil {
			w.report(err)
		}
		u, until := w.rescan(touched, false, root)
		touched = map[string]bool{}
		setGrace(until)
		w.publish(u)
		quiet.reloaded(time.Now())
	}
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			setGrace(time.Time{})
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if !w.concerns(ev.Name) {
				continue // a sibling of the root, seen by the watch on its parent
			}
			if IsRoutingTestName(filepath.Base(ev.Name)) {
				// A test file: waits for its burst to end (a file written
				// in place is read whole), then is told, not loaded.
				testsTouched[ev.Name] = true
				if timer == nil {
					timer = time.NewTimer(w.debounce)
				} else {
					timer.Reset(w.debounce)
				}
				fire = timer.C
				continue
			}
			if ev.Op&fsnotify.Create != 0 && !w.watched.missing {
				w.watchCreated(ev.Name)
			}
			touched[ev.Name] = true
			if quiet.event(ev.Name, time.Now()) && savedWhole(ev) {
				// The tree was quiet: a save, served at once. Events of
				// the same save that follow are a burst and wait.
				if timer != nil {
					timer.Stop()
				}
				fire = nil
				reload()
				flushTests() // the stopped timer's test files too
				continue
			}
			if timer == nil {
				timer = time.NewTimer(w.debounce)
			} else {
				timer.Reset(w.debounce)
			}
			fire = timer.C
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.report(err)
		case <-fire:
			fire = nil
			if len(touched) > 0 {
				reload()
			}
			flushTests()
		case <-w.overlay.changes():
			// An editor's buffer changed: as a file event, a keystroke
			// after a quiet while reloads at once and a burst of them
			// reloads once when it ends.
			lead := false
			for _, p := range w.overlay.take() {
				touched[p] = true
				lead = quiet.event(p, time.Now()) || lead
			}
			if lead {
				if timer != nil {
					timer.Stop()
				}
				fire = nil
				reload()
				flushTests()
				continue
			}
			if timer == nil {
				timer = time.NewTimer(w.debounce)
			} else {
				timer.Reset(w.debounce)
			}
			fire = timer.C
		case rs := <-w.renderSet:
			w.renders = rs
			reload()
		case <-graceFire:
			graceFire = nil
			u, until := w.rescan(w.held(), false, RootSteady)
			setGrace(until)
			w.publish(u)
		}
	}
}

// savedWhole reports whether ev is a file that appeared whole: a Create (an
// editor's rename into place, or a new file) of a regular file that is not
// empty. A file written in place (truncated, then written) reports Write
// events and may be read half-written, so it waits for its burst to end, as
// do removals.
func savedWhole(ev fsnotify.Event) bool {
	if ev.Op&fsnotify.Create == 0 {
		return false
	}
	fi, err := os.Stat(ev.Name)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// publish makes u the pending update (nil: nothing changed). An unread
// older update is replaced, and what it said that u does not is carried
// over: the root's event (the root came back, then a file was saved before
// the reader looked) and the files it changed.
func (w *Watcher) publish(u *Update) {
	if u == nil {
		return
	}
	select {
	case old := <-w.updates: // drop the unread older state
		u = w.carryOver(old, u)
	default:
	}
	w.updates <- u
}

// carryOver returns u with old's root event (when u has none) and changed
// files added, as a copy that is also made Current when u is.
func (w *Watcher) carryOver(old, u *Update) *Update {
	if (u.Root != RootSteady || old.Root == RootSteady) && len(old.Changed) == 0 {
		return u
	}
	c := *u
	if c.Root == RootSteady {
		c.Root = old.Root
	}
	if len(old.Changed) > 0 {
		c.Changed = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(old.Changed), u.Changed...))))
	}
	w.mu.Lock()
	if w.current == u {
		w.current = &c
	}
	w.mu.Unlock()
	return &c
}

// report delivers a watcher failure unless one is already pending.
func (w *Watcher) report(err error) {
	select {
	case w.errs <- err:
	default:
	}
}

// rescan walks the tree, reloads files that are new, changed (size, mtime)
// or named by an event (every file when the root came back), forgets
// deleted ones and returns the new state, or nil when nothing changed, with
// the time the earliest grace of an emptied file ends (zero: none). While
// the root is missing nothing is walked: the objects last loaded stay.
func (w *Watcher) rescan(touched map[string]bool, first bool, root RootEvent) (*Update, time.Time) {
	start := time.Now()
	if w.watched.missing {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !first && root == RootSteady {
			return nil, time.Time{}
		}
		u := w.assemble([]Problem{w.missingProblem(first)})
		u.Root, u.Took = root, time.Since(start)
		w.current = u
		return u, time.Time{}
	}
	walk := findManifests(w.root, !w.loader.NoKustomize)
	walkProblems, warnings := walk.problems, walk.warnings
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := os.Stat(w.root); err != nil && !first {
		// Gone since syncRoot, maybe during the walk: keep the state; the
		// event about the removal comes next and syncRoot sees it.
		return nil, w.graceEnd()
	}
	type reload struct {
		f     manifestFile
		res   collected
		empty bool
	}
	var (
		changed []string
		reloads []reload
	)
	present := map[string]bool{}
	// Kustomizations and render commands first: what they read is not
	// loaded as manifests.
	changed = w.rescanSources(walk.kusts, touched, root, present)
	inputs := w.inputs()
	found := withoutInputs(walk.files, inputs)
	found = append(found, w.overlay.unwalked(w.root, found, inputs)...)
	warnings = append(slices.Clip(warnings), chartWarnings(walk.charts, inputs)...)
	for _, f := range found {
		present[f.path] = true
		old := w.files[f.path]
		if old != nil && root != RootBack && !touched[f.path] && old.size == f.size && old.mod.Equal(f.mod) {
			continue
		}
		reloads = append(reloads, reload{f: f})
	}
	// Files load independently, so a first scan (or a branch switch) uses
	// every core, as LoadDir does.
	if len(reloads) > 1 {
		defer w.loader.bulkLoad()()
	}
	parallel(len(reloads), func(i int) {
		r := &reloads[i]
		data, p := w.overlay.read(r.f)
		r.empty = p == nil && len(bytes.TrimSpace(data)) == 0
		r.res = w.loader.loadFiles([]fileInput{{path: r.f.path, data: data, problem: p}}, nil)
	})
	for _, r := range reloads {
		old := w.files[r.f.path]
		if r.empty && w.holds(old, start) {
			w.files[r.f.path] = holdFile(old, r.res, r.f.size, r.f.mod, start, w.emptyGrace)
		} else {
			w.files[r.f.path] = mergeFile(old, r.res, r.f.size, r.f.mod)
		}
		changed = append(changed, r.f.path)
	}
	for path, f := range w.files {
		switch {
		case present[path]:
		case w.holdsDeleted(f, start):
			if f.deletedSince.IsZero() {
				w.files[path] = holdDeleted(f, start, w.deleteGrace)
				changed = append(changed, path)
			}
		default:
			delete(w.files, path)
			changed = append(changed, path)
		}
	}
	until := w.graceEnd()
	if !first && len(changed) == 0 && root == RootSteady {
		return nil, until
	}
	w.warnings = warnings
	sort.Strings(changed)
	u := w.assemble(walkProblems)
	if !first {
		u.Changed = changed
	}
	u.Root = root
	u.Took = time.Since(start)
	w.current = u
	return u, until
}

// mergeFile computes a file's objects in effect after a reload: the new
// load's objects, plus — when the new load has problems — the previous
// good version of every object that the new load lost.
func mergeFile(old *watchedFile, res collected, size int64, mod time.Time) *watchedFile {
	keepUnchanged(old, res.objs)
	wf := &watchedFile{size: size, mod: mod, load: res, good: slices.Clip(res.objs)}
	if old == nil || len(res.problems) == 0 {
		return wf
	}
	have := map[engine.ObjectKey]bool{}
	for _, o := range wf.good {
		have[o.key] = true
	}
	for _, o := range old.good {
		if have[o.key] {
			continue
		}
		reason := res.problems[0].String()
		for _, p := range res.problems {
			if p.Object == o.key {
				reason = p.String()
				break
			}
		}
		wf.good = append(wf.good, o)
		wf.stale = append(wf.stale, StaleObject{Object: o.key, Source: o.src, Reason: reason})
	}
	return wf
}

// keepUnchanged replaces each object of a file's new load that is the same
// as in the file's last load — same key, same place (file, line, column,
// apiVersion, the positions of its list items), same channel note, equal
// content — with the last load's record, object pointer included. The
// engine tells an unchanged object by its pointer (engine/incremental.go,
// incremental_table.go), so editing one route in a file that also holds
// its Service keeps the Service, and the reload stays incremental.
func keepUnchanged(old *watchedFile, objs []loaded) {
	if old == nil || len(old.good) == 0 {
		return
	}
	prev := make(map[engine.ObjectKey]*loaded, len(old.good))
	for i := range old.good {
		prev[old.good[i].key] = &old.good[i]
	}
	for i := range objs {
		o, p := &objs[i], prev[objs[i].key]
		if p == nil || p.note != o.note || !samePlace(p.src, o.src) || !reflect.DeepEqual(p.obj, o.obj) {
			continue
		}
		*o = *p
	}
}

// samePlace reports whether two sources point at the same places.
func samePlace(a, b engine.Source) bool {
	return a.File == b.File && a.Line == b.Line && a.Column == b.Column && a.APIVersion == b.APIVersion && maps.Equal(a.Fields, b.Fields)
}

// assemble merges every file's objects in effect.
func (w *Watcher) assemble(walkProblems []Problem) *Update {
	var problems []Problem
	var skipped []Skipped
	var stale []StaleObject
	paths, sorted := w.sortedObjects()
	var sourceWarnings []Warning
	for _, p := range paths {
		f := w.files[p]
		if f.source != nil {
			sourceWarnings = append(sourceWarnings, f.source.warnings...)
		}
		problems = append(problems, f.load.problems...)
		skipped = append(skipped, f.load.skipped...)
		stale = append(stale, f.stale...)
	}
	problems = append(problems, walkProblems...)
	snap, notes, problems := w.snapshot(sorted, problems)
	sortProblems(problems)
	slices.SortStableFunc(skipped, compareSkipped)
	res := &LoadResult{Snapshot: snap, Problems: problems, Skipped: skipped, Files: len(w.files), Notes: notes}
	res.Warnings = append(slices.Clip(w.warnings), sourceWarnings...)
	return &Update{Result: res, Stale: stale}
}
