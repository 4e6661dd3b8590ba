package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	// Debounce is how long the watcher waits after the last event before
	// reloading (0: 50ms). Editors write a file in several steps.
	Debounce time.Duration
}

// Watcher keeps a LoadResult up to date with a directory tree, watching
// directories (not files: editors save by rename) with fsnotify, including
// directories created later. Each burst of changes produces one Update.
type Watcher struct {
	loader   *Loader
	root     string
	debounce time.Duration
	fsw      *fsnotify.Watcher

	mu      sync.Mutex
	files   map[string]*watchedFile
	current *Update

	updates chan *Update
	errs    chan error
}

// watchedFile is the state of one manifest file.
type watchedFile struct {
	size int64
	mod  time.Time
	// good are the objects in effect from this file: its last load's
	// objects plus stale ones kept from before.
	good  []loaded
	res   *LoadResult
	stale []StaleObject
}

// Watch loads root and starts watching it until ctx is done. The first
// state is available at once from Current; later ones arrive on Updates.
func (l *Loader) Watch(ctx context.Context, root string, opts WatchOptions) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", root, err)
	}
	w := &Watcher{loader: l, root: root, debounce: opts.Debounce, fsw: fsw,
		files: map[string]*watchedFile{}, updates: make(chan *Update, 1), errs: make(chan error, 1)}
	if w.debounce <= 0 {
		w.debounce = 50 * time.Millisecond
	}
	w.addDirs(root)
	w.current = w.rescan(nil, true)
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
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				walk(p)
			}
		}
	}
	walk(dir)
}

func (w *Watcher) run(ctx context.Context) {
	defer w.fsw.Close()
	var timer *time.Timer
	var fire <-chan time.Time
	touched := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Op&fsnotify.Create != 0 {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() && !skipName(filepath.Base(ev.Name)) {
					w.addDirs(ev.Name)
				}
			}
			touched[ev.Name] = true
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
			select {
			case w.errs <- err:
			default:
			}
		case <-fire:
			fire = nil
			u := w.rescan(touched, false)
			touched = map[string]bool{}
			if u == nil {
				continue
			}
			select {
			case <-w.updates: // drop the unread older state
			default:
			}
			w.updates <- u
		}
	}
}

// rescan walks the tree, reloads files that are new, changed (size, mtime)
// or named by an event, forgets deleted ones and returns the new state, or
// nil when nothing changed.
func (w *Watcher) rescan(touched map[string]bool, first bool) *Update {
	start := time.Now()
	found, walkProblems := findManifests(w.root)
	w.mu.Lock()
	defer w.mu.Unlock()
	type reload struct {
		f   manifestFile
		res *LoadResult
	}
	var (
		changed []string
		reloads []reload
	)
	present := map[string]bool{}
	for _, f := range found {
		present[f.path] = true
		old := w.files[f.path]
		if old != nil && !touched[f.path] && old.size == f.size && old.mod.Equal(f.mod) {
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
		data, p := readManifest(r.f)
		r.res = w.loader.load([]fileInput{{path: r.f.path, data: data, problem: p}}, nil)
	})
	for _, r := range reloads {
		w.files[r.f.path] = mergeFile(w.files[r.f.path], r.res, r.f.size, r.f.mod)
		changed = append(changed, r.f.path)
	}
	for path := range w.files {
		if !present[path] {
			delete(w.files, path)
			changed = append(changed, path)
		}
	}
	if !first && len(changed) == 0 {
		return nil
	}
	sort.Strings(changed)
	u := w.assemble(walkProblems)
	if !first {
		u.Changed = changed
	}
	u.Took = time.Since(start)
	w.current = u
	return u
}

// mergeFile computes a file's objects in effect after a reload: the new
// load's objects, plus — when the new load has problems — the previous
// good version of every object that the new load lost.
func mergeFile(old *watchedFile, res *LoadResult, size int64, mod time.Time) *watchedFile {
	wf := &watchedFile{size: size, mod: mod, res: res, good: snapshotObjects(res.Snapshot)}
	if old == nil || len(res.Problems) == 0 {
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
		reason := res.Problems[0].String()
		for _, p := range res.Problems {
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

// assemble merges every file's objects in effect.
func (w *Watcher) assemble(walkProblems []Problem) *Update {
	var objs []loaded
	var problems []Problem
	var skipped []Skipped
	var stale []StaleObject
	paths := make([]string, 0, len(w.files))
	for p := range w.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f := w.files[p]
		objs = append(objs, f.good...)
		problems = append(problems, f.res.Problems...)
		skipped = append(skipped, f.res.Skipped...)
		stale = append(stale, f.stale...)
	}
	problems = append(problems, walkProblems...)
	return &Update{Result: assemble(len(w.files), objs, problems, skipped), Stale: stale}
}
