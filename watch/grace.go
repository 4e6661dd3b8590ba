package watch

import (
	"fmt"
	"time"
)

// DefaultEmptyGrace is how long a file that became empty keeps its last
// objects in effect by default. Editors that truncate a file before
// writing it leave it empty for a moment (200 ms was seen), longer than
// the debounce; an intentionally emptied file takes effect after it.
const DefaultEmptyGrace = time.Second

// DefaultDeleteGrace is how long a deleted file keeps its last objects in
// effect by default: long enough for `rm -rf` or a tool replacing the
// folder to remove the directory after its files (then the missing root
// keeps them), short enough that deleting one file takes effect at once
// to a person.
const DefaultDeleteGrace = 250 * time.Millisecond

// holds reports whether a file now empty keeps old's objects: it had
// objects and has not been empty for the whole grace yet.
func (w *Watcher) holds(old *watchedFile, now time.Time) bool {
	return old != nil && len(old.good) > 0 && w.emptyGrace > 0 &&
		(old.emptySince.IsZero() || now.Sub(old.emptySince) < w.emptyGrace)
}

// holdFile is an emptied file still serving old's objects, each marked
// stale with the reason.
func holdFile(old *watchedFile, res collected, size int64, mod, now time.Time, grace time.Duration) *watchedFile {
	since := old.emptySince
	if since.IsZero() {
		since = now
	}
	wf := &watchedFile{size: size, mod: mod, emptySince: since, load: res, good: old.good}
	reason := fmt.Sprintf("the file is empty (an editor truncating it before writing?): its last objects stay for up to %s, then the emptied file takes effect", grace)
	for _, o := range old.good {
		wf.stale = append(wf.stale, StaleObject{Object: o.key, Source: o.src, Reason: reason})
	}
	return wf
}

// holdsDeleted reports whether a file found deleted keeps f's objects: it
// had objects and has not been deleted for the whole grace yet.
func (w *Watcher) holdsDeleted(f *watchedFile, now time.Time) bool {
	return len(f.good) > 0 && w.deleteGrace > 0 &&
		(f.deletedSince.IsZero() || now.Sub(f.deletedSince) < w.deleteGrace)
}

// holdDeleted is a deleted file still serving f's objects, each marked
// stale with the reason.
func holdDeleted(f *watchedFile, now time.Time, grace time.Duration) *watchedFile {
	wf := &watchedFile{size: f.size, mod: f.mod, deletedSince: now, load: collected{}, good: f.good}
	reason := fmt.Sprintf("the file was deleted: its last objects stay for up to %s (or while its folder is missing), then the deletion takes effect", grace)
	for _, o := range f.good {
		wf.stale = append(wf.stale, StaleObject{Object: o.key, Source: o.src, Reason: reason})
	}
	return wf
}

// graceEnd returns when the earliest grace of an emptied or deleted file
// ends (zero: no file is held).
func (w *Watcher) graceEnd() time.Time {
	var end time.Time
	earliest := func(t time.Time) {
		if end.IsZero() || t.Before(end) {
			end = t
		}
	}
	for _, f := range w.files {
		if !f.emptySince.IsZero() {
			earliest(f.emptySince.Add(w.emptyGrace))
		}
		if !f.deletedSince.IsZero() {
			earliest(f.deletedSince.Add(w.deleteGrace))
		}
	}
	return end
}

// held names the files whose objects are held, to reload them when the
// grace ends. Only the run goroutine, which alone writes files, calls it.
func (w *Watcher) held() map[string]bool {
	out := map[string]bool{}
	for path, f := range w.files {
		if !f.emptySince.IsZero() || !f.deletedSince.IsZero() {
			out[path] = true
		}
	}
	return out
}
