package watch

import (
	"cmp"
	"slices"
)

// mergedObject is one object in effect from a watched file, with the file's
// path and its position in the file's objects, which order objects that
// collect cannot tell apart as their input order would.
type mergedObject struct {
	path string
	idx  int
	obj  *loaded
}

// compareMerged is collect's order: key, then file and line, then input
// order (the files by path, then each file's objects in order).
func compareMerged(a, b mergedObject) int {
	return cmp.Or(
		cmp.Compare(a.obj.key.Kind, b.obj.key.Kind),
		cmp.Compare(a.obj.key.Namespace, b.obj.key.Namespace),
		cmp.Compare(a.obj.key.Name, b.obj.key.Name),
		cmp.Compare(a.obj.src.File, b.obj.src.File),
		cmp.Compare(a.obj.src.Line, b.obj.src.Line),
		cmp.Compare(a.path, b.path),
		cmp.Compare(a.idx, b.idx),
	)
}

// sortedObjects returns every file's objects in effect (paths: w.files'
// keys, sorted) in collect's order. The order of the last update is kept:
// objects of files whose state did not change stay where they were, and
// only the changed files' objects are sorted and merged in, so that a saved
// file costs a pass over the objects rather than a sort of all of them.
// Called with w.mu held.
func (w *Watcher) sortedObjects(paths []string) []*loaded {
	kept := make([]mergedObject, 0, len(w.merged))
	for _, m := range w.merged {
		if f, ok := w.files[m.path]; ok && f == w.mergedFiles[m.path] {
			kept = append(kept, m)
		}
	}
	var added []mergedObject
	for _, p := range paths {
		f := w.files[p]
		if f == w.mergedFiles[p] {
			continue
		}
		for i := range f.good {
			added = append(added, mergedObject{path: p, idx: i, obj: &f.good[i]})
		}
	}
	slices.SortFunc(added, compareMerged)
	merged := make([]mergedObject, 0, len(kept)+len(added))
	for len(kept) > 0 && len(added) > 0 {
		if compareMerged(added[0], kept[0]) < 0 {
			merged, added = append(merged, added[0]), added[1:]
		} else {
			merged, kept = append(merged, kept[0]), kept[1:]
		}
	}
	merged = append(append(merged, kept...), added...)
	w.merged = merged
	w.mergedFiles = make(map[string]*watchedFile, len(w.files))
	for p, f := range w.files {
		w.mergedFiles[p] = f
	}
	out := make([]*loaded, len(merged))
	for i, m := range merged {
		out[i] = m.obj
	}
	return out
}
