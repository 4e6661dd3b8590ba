package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// RootEvent is what happened to a Watcher's root in an Update.
type RootEvent int

const (
	// RootSteady: nothing happened to the root itself.
	RootSteady RootEvent = iota
	// RootMissing: the root does not exist (removed, renamed away, or not
	// created yet). The objects last loaded from it stay in effect, and
	// Result.Problems says so.
	RootMissing
	// RootBack: the root exists again, or is another directory than the
	// one watched so far (replaced by a rename); it is watched anew and
	// every file in it reloaded.
	RootBack
)

// rootWatch is what the fsnotify watcher is set up for.
type rootWatch struct {
	set     bool   // false before the first syncRoot
	missing bool   // the root does not exist; why says why
	why     string // the stat error, worded for a Problem
	id      fileID // identity of the root directory (of a root file's directory)
	// anchor is the absolute path of the directory watched outside the
	// root to see it come and go: its parent, or its nearest existing
	// ancestor while it is missing ("" for a root file, whose directory
	// is watched anyway).
	anchor string
}

// syncRoot compares the root with what is watched and, when it changed
// (appeared, disappeared, replaced), replaces the fsnotify watcher, which
// drops every watch of the old tree, and watches the new state.
func (w *Watcher) syncRoot() (RootEvent, error) {
	prev := w.watched
	want := w.probeRoot()
	if prev.set && want == prev {
		return RootSteady, nil
	}
	// The root may appear between the probe and the new watch on its
	// ancestor, which then never reports it: probe again after watching.
	for range 3 {
		if err := w.rewatch(want); err != nil {
			return RootSteady, err
		}
		again := w.probeRoot()
		if again == want {
			break
		}
		want = again
	}
	switch {
	case want.missing && !prev.missing:
		return RootMissing, nil
	case !want.missing && prev.set && (prev.missing || prev.id != want.id):
		return RootBack, nil
	}
	return RootSteady, nil
}

// probeRoot describes the root as it is now.
func (w *Watcher) probeRoot() rootWatch {
	fi, err := os.Stat(w.root)
	if err != nil {
		return rootWatch{set: true, missing: true, why: describeStatError(err), anchor: existingAncestor(w.abs)}
	}
	rw := rootWatch{set: true, anchor: filepath.Dir(w.abs)}
	if !fi.IsDir() {
		rw.anchor = ""
		if fi, err = os.Stat(filepath.Dir(w.root)); err != nil {
			return rootWatch{set: true, missing: true, why: describeStatError(err), anchor: existingAncestor(w.abs)}
		}
	}
	rw.id, _ = idOf(fi)
	if rw.anchor == w.abs { // the root is /
		rw.anchor = ""
	}
	return rw
}

// rewatch replaces the fsnotify watcher with one set up for want. It fails
// only when no new watcher can be made; a directory that cannot be watched
// is reported on Errors.
func (w *Watcher) rewatch(want rootWatch) error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if w.fsw != nil {
		w.fsw.Close()
	}
	w.fsw, w.watched = fsw, want
	w.realRoot, w.linkDirs = realPath(w.root), map[string]bool{}
	if !want.missing {
		w.addDirs(w.root)
	}
	if want.anchor != "" {
		if err := fsw.Add(want.anchor); err != nil {
			w.report(fmt.Errorf("watching %s for %s to come and go: %w", want.anchor, w.root, err))
		}
	}
	return nil
}

// existingAncestor returns the nearest ancestor directory of abs that
// exists ("" if none does).
func existingAncestor(abs string) string {
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// concerns reports whether an event about name can matter: it is the root,
// inside it, one of its ancestors or beside a file a symlink leads to. The watch on the root's parent also
// reports the root's siblings, which do not matter.
func (w *Watcher) concerns(name string) bool {
	abs, err := filepath.Abs(name)
	if err != nil {
		return true
	}
	return abs == w.abs || within(abs, w.abs) || within(w.abs, abs) || w.linkDirs[filepath.Dir(abs)]
}

// within reports whether path is strictly inside dir (both clean and
// absolute).
func within(path, dir string) bool {
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

// missingProblem says that the root is missing and what is served
// meanwhile.
func (w *Watcher) missingProblem(first bool) Problem {
	if first {
		return Problem{File: w.root, Root: true, Message: w.watched.why + ": waiting for it to appear"}
	}
	n := 0
	for _, f := range w.files {
		n += len(f.good)
	}
	return Problem{File: w.root, Root: true, Message: fmt.Sprintf("%s (removed or renamed away): still serving the %d objects last loaded from it until it is back", w.watched.why, n)}
}
