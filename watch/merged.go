package watch

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/gwdev/gwdev/engine"
)

// mergedObject is one object in effect from a watched file, with the file's
// path and its position in the file's objects, which order objects that
// collect cannot tell apart as their input order would.
type mergedObject struct {
	path string
	idx  int
	obj  *loaded
	// file is the file state obj belongs to.
	file *watchedFile
}

// compareMerged is collect's order: key, then file and line, then input
// order (the files by path, then each file's objects in order).
func compareMerged(a, b mergedObject) int {
	return cmp.Or(
		compareKeys(a.obj.key, b.obj.key),
		cmp.Compare(a.obj.src.File, b.obj.src.File),
		cmp.Compare(a.obj.src.Line, b.obj.src.Line),
		cmp.Compare(a.path, b.path),
		cmp.Compare(a.idx, b.idx),
	)
}

// sortedObjects returns w.files' keys sorted and every file's objects in
// effect in collect's order. What the last update found is kept: the sorted
// paths, with only new paths sorted and merged in, and the order of the
// objects, where objects of files whose state did not change stay and only
// the changed files' objects are sorted and put in place by binary search,
// so that a saved file costs a copy of the objects rather than a sort of
// them, and a lookup by path per file rather than per object. Called with
// w.mu held.
func (w *Watcher) sortedObjects() (paths []string, objs []*loaded) {
	if w.mergedFiles == nil {
		w.mergedFiles = map[string]*watchedFile{}
	}
	// The file states replaced or removed since the last merge: a set of
	// a few pointers, so that keeping an object costs no lookup by path.
	var gone map[*watchedFile]bool
	var removed map[string]bool
	for p, f := range w.mergedFiles {
		cur, ok := w.files[p]
		if ok && cur == f {
			continue
		}
		if gone == nil {
			gone = map[*watchedFile]bool{}
		}
		gone[f] = true
		if !ok {
			if removed == nil {
				removed = map[string]bool{}
			}
			removed[p] = true
			delete(w.mergedFiles, p)
		}
	}
	var added []mergedObject
	var newPaths []string
	for p, f := range w.files {
		last, ok := w.mergedFiles[p]
		if ok && last == f {
			continue
		}
		if !ok {
			newPaths = append(newPaths, p)
		}
		w.mergedFiles[p] = f
		for i := range f.good {
			added = append(added, mergedObject{path: p, idx: i, obj: &f.good[i], file: f})
		}
	}
	paths = w.paths
	if removed != nil || newPaths != nil {
		paths = make([]string, 0, len(w.files))
		for _, p := range w.paths {
			if !removed[p] {
				paths = append(paths, p)
			}
		}
		slices.Sort(newPaths)
		paths = mergeSorted(paths, newPaths, strings.Compare)
		w.paths = paths
	}
	kept := w.merged
	if gone != nil {
		kept = make([]mergedObject, 0, len(w.merged))
		for _, m := range w.merged {
			if !gone[m.file] {
				kept = append(kept, m)
			}
		}
	}
	slices.SortFunc(added, compareMerged)
	w.merged = mergeSorted(kept, added, compareMerged)
	objs = make([]*loaded, len(w.merged))
	for i, m := range w.merged {
		objs[i] = m.obj
	}
	return paths, objs
}

// mergeSorted returns the elements of a and b, both sorted by cmp, in one
// sorted slice, where b is short: each of its elements is placed by binary
// search, the runs of a between them copied whole. Neither is modified.
func mergeSorted[T any](a, b []T, cmp func(T, T) int) []T {
	if len(b) == 0 {
		return a
	}
	out := make([]T, 0, len(a)+len(b))
	for _, x := range b {
		i, _ := slices.BinarySearchFunc(a, x, cmp)
		out = append(append(out, a[:i]...), x)
		a = a[i:]
	}
	return append(out, a...)
}

// snapshot builds the Snapshot of sorted (the objects in effect in
// collect's order), the first of each key, with their notes, adds a
// problem to problems for each other one, and keeps the objects for the
// next update. The Snapshot's slices are filled anew (one pass of appends).
// Its Sources is the last update's, copied and patched where the objects
// differ, which it finds walking the last and the new objects side by
// side: an object of a file whose state did not change is the same
// *loaded. The last Snapshot's Sources is never written: a published
// update, and the Result translated from it, are read on other goroutines.
//
// Inserting 30,000 entries (10,000 HTTPRoutes and their Services) took
// 10–20 ms of a one-file reload; maps.Clone copies the map's memory
// instead, 1–5 ms, and that copy is made in the background as soon as a
// Sources is published (spare), so a save finds it ready and only patches
// the keys that changed. The price is a second copy of the map held
// between saves (~7 MB at 30,000 objects). Called with w.mu held.
func (w *Watcher) snapshot(sorted []*loaded, problems []Problem) (*engine.Snapshot, []Note, []Problem) {
	s := &engine.Snapshot{}
	f := snapshotFiller{s: s}
	winners := make([]*loaded, 0, len(sorted))
	problems = firstDefinitions(sorted, problems, func(o *loaded) {
		f.add(o)
		winners = append(winners, o)
	})
	if w.spare != nil {
		s.Sources = <-w.spare
		patchSources(s.Sources, w.winners, winners)
	} else {
		// The first update. No size hint, as collected.result says.
		s.Sources = map[engine.ObjectKey]engine.Source{}
		for _, o := range winners {
			s.Sources[o.key] = o.src
		}
	}
	w.winners = winners
	w.spare = make(chan map[engine.ObjectKey]engine.Source, 1)
	go func(spare chan<- map[engine.ObjectKey]engine.Source, published map[engine.ObjectKey]engine.Source) {
		spare <- maps.Clone(published)
	}(w.spare, s.Sources)
	return s, f.sortedNotes(), problems
}

// patchSources makes sources, the Sources of the objects last, those of
// next (both by key, each key once). The same object in both is passed
// over by pointer, without reading it.
func patchSources(sources map[engine.ObjectKey]engine.Source, last, next []*loaded) {
	for len(last) > 0 || len(next) > 0 {
		if len(last) > 0 && len(next) > 0 && last[0] == next[0] {
			last, next = last[1:], next[1:]
			continue
		}
		c := 1 // only next is left
		switch {
		case len(next) == 0:
			c = -1
		case len(last) > 0:
			c = compareKeys(last[0].key, next[0].key)
		}
		switch {
		case c < 0:
			delete(sources, last[0].key)
			last = last[1:]
		case c > 0:
			sources[next[0].key] = next[0].src
			next = next[1:]
		default:
			sources[next[0].key] = next[0].src
			last, next = last[1:], next[1:]
		}
	}
}

// compareKeys is collect's order of keys.
func compareKeys(a, b engine.ObjectKey) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
