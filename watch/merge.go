package watch

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
)

// loaded is one object that passed validation, with where it came from.
type loaded struct {
	key engine.ObjectKey
	src engine.Source
	obj metav1.Object
	// note is the object's channel note (channelNote; "": none).
	note string
}

// Merge combines the results of several loads (for example one per file)
// into one, as if everything had been loaded together: Files add up,
// Problems and Skipped are concatenated and sorted, Warnings concatenated, and the Snapshots are
// merged. When the same object (kind, namespace, name) appears more than
// once, the definition that comes first by file and line wins and each other
// one becomes a Problem. Nil results are ignored; the inputs are not
// modified, but the returned Snapshot shares their objects.
func Merge(results ...*LoadResult) *LoadResult {
	var (
		files    int
		objs     []loaded
		problems []Problem
		skipped  []Skipped
		warnings []Warning
		notes    []Note
	)
	for _, r := range results {
		if r == nil {
			continue
		}
		files += r.Files
		problems = append(problems, r.Problems...)
		skipped = append(skipped, r.Skipped...)
		warnings = append(warnings, r.Warnings...)
		objs = append(objs, snapshotObjects(r.Snapshot)...)
		notes = append(notes, r.Notes...)
	}
	res := assemble(files, objs, problems, skipped)
	res.Warnings = warnings
	for _, n := range notes { // the notes of the definitions in effect
		if src, ok := res.Snapshot.LookupSource(n.Object); ok && src.File == n.File && src.Line == n.Line {
			res.Notes = append(res.Notes, n)
		}
	}
	slices.SortFunc(res.Notes, compareNotes)
	return res
}

// assemble builds a LoadResult: it sorts everything, keeps the first
// definition of each object and reports the others as duplicates.
func assemble(files int, objs []loaded, problems []Problem, skipped []Skipped) *LoadResult {
	c := collect(files, objs, problems, skipped)
	return c.result()
}

// collected is what loading found, sorted and without duplicates, before
// it becomes a Snapshot: the watcher keeps one per file and builds a
// single Snapshot from all of them.
type collected struct {
	files int
	// objs are the objects in effect, by key then file and line; each key
	// once.
	objs     []loaded
	problems []Problem
	skipped  []Skipped
}

// collect sorts everything, keeps the first definition (by file and line)
// of each object and reports the others as duplicates.
func collect(files int, objs []loaded, problems []Problem, skipped []Skipped) collected {
	// Sort positions rather than the (large) records; the position breaks
	// ties, which keeps the input order of objects on the same line. The
	// positions are first grouped by kind, in input order, and the kinds'
	// groups sorted side by side (parallel): a kind is the first thing
	// compared, and 30,000 objects of two kinds sorted in one list on one
	// core were 50 ms of a load that ran on two (issue 42, session 19).
	byKind := map[string][]int32{}
	for i := range objs {
		k := objs[i].key.Kind
		byKind[k] = append(byKind[k], int32(i))
	}
	kinds := slices.Sorted(maps.Keys(byKind))
	groups := make([][]int32, len(kinds))
	for i, k := range kinds {
		groups[i] = byKind[k]
	}
	parallel(len(groups), func(g int) {
		slices.SortFunc(groups[g], func(i, j int32) int { return compareLoaded(&objs[i], &objs[j], i, j) })
	})
	sorted := make([]*loaded, 0, len(objs))
	for _, g := range groups {
		for _, i := range g {
			sorted = append(sorted, &objs[i])
		}
	}
	return collectSorted(files, sorted, problems, skipped)
}

// compareLoaded orders objects by key, then file and line, then position
// (i and j, a's and b's), comparing only as far as they differ.
func compareLoaded(a, b *loaded, i, j int32) int {
	if c := strings.Compare(a.key.Kind, b.key.Kind); c != 0 {
		return c
	}
	if c := strings.Compare(a.key.Namespace, b.key.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(a.key.Name, b.key.Name); c != 0 {
		return c
	}
	if c := strings.Compare(a.src.File, b.src.File); c != 0 {
		return c
	}
	if c := cmp.Compare(a.src.Line, b.src.Line); c != 0 {
		return c
	}
	return cmp.Compare(i, j)
}

// collectSorted is collect for objects already in its order (by key, then
// file and line, then input order).
func collectSorted(files int, sorted []*loaded, problems []Problem, skipped []Skipped) collected {
	objs := make([]loaded, 0, len(sorted))
	problems = firstDefinitions(sorted, problems, func(o *loaded) { objs = append(objs, *o) })
	sortProblems(problems)
	slices.SortStableFunc(skipped, compareSkipped)
	return collected{files: files, objs: objs, problems: problems, skipped: skipped}
}

// firstDefinitions calls keep with the first of the objects of each key in
// sorted (collect's order), in order, and adds a problem to problems for
// each other one.
func firstDefinitions(sorted []*loaded, problems []Problem, keep func(*loaded)) []Problem {
	var w *loaded
	for _, o := range sorted {
		if w != nil && sameKey(o.key, w.key) {
			problems = append(problems, Problem{
				File: o.src.File, Line: o.src.Line, Column: 1, Object: o.key,
				Message: fmt.Sprintf("%s is already defined at %s; this definition is ignored", o.key, w.src), Kind: ProblemAlreadyDefined,
			})
			continue
		}
		keep(o)
		w = o
	}
	return problems
}

// sameKey is a == b comparing the name first: neighbours in collect's order
// share their kind and often their namespace.
func sameKey(a, b engine.ObjectKey) bool {
	return a.Name == b.Name && a.Namespace == b.Namespace && a.Kind == b.Kind
}

// result builds the Snapshot of the collected objects.
func (c *collected) result() *LoadResult {
	// Sources are a slice in the objects' order (by key, each key once),
	// 104 bytes an object: a map of them, grown one entry at a time, held
	// 9.5 MB for 30,000 objects until check ends, 3.1 MB as a slice
	// (issue 42). The watcher, which patches its Sources on each save,
	// keeps a map (Watcher.snapshot).
	snap := &engine.Snapshot{SourceList: make([]engine.SourceEntry, len(c.objs))}
	f := snapshotFiller{s: snap}
	for i := range c.objs {
		o := &c.objs[i]
		f.add(o)
		snap.SourceList[i] = engine.SourceEntry{Key: o.key, Source: o.src}
	}
	return &LoadResult{Snapshot: snap, Problems: c.problems, Skipped: c.skipped, Files: c.files, Notes: f.sortedNotes()}
}

// snapshotFiller appends objects, sorted by key, to the Snapshot slices of
// their kinds, and collects their channel notes. The objects of one kind
// are a run: its registry entry is looked up once per run, not by trying
// every kind on every object.
type snapshotFiller struct {
	s *engine.Snapshot
	// kind is the registry entry of the run of kindName (nil: a kind
	// stored under another name, ImplementationPolicies).
	kind     *engine.Kind
	kindName string
	notes    []Note
}

func (f *snapshotFiller) add(o *loaded) {
	if o.key.Kind != f.kindName || f.kind == nil {
		f.kindName, f.kind = o.key.Kind, engine.KindNamed(o.key.Kind)
	}
	if f.kind == nil || !f.kind.Add(f.s, o.obj) {
		addToSnapshot(f.s, o.obj)
	}
	if o.note != "" {
		f.notes = append(f.notes, Note{File: o.src.File, Line: o.src.Line, Object: o.key, Message: o.note})
	}
}

// sortedNotes returns the notes, sorted.
func (f *snapshotFiller) sortedNotes() []Note {
	slices.SortFunc(f.notes, compareNotes)
	return f.notes
}

// addToSnapshot appends obj to the Snapshot slice of its type.
func addToSnapshot(s *engine.Snapshot, obj metav1.Object) {
	if !s.AddObject(obj) {
		panic(fmt.Sprintf("watch: no Snapshot slice for %T", obj))
	}
}

// snapshotObjects lists every object of s with its key and source (Merge
// combines finished LoadResults).
func snapshotObjects(s *engine.Snapshot) []loaded {
	if s == nil {
		return nil
	}
	var out []loaded
	s.Each(func(key engine.ObjectKey, o metav1.Object) {
		out = append(out, loaded{key: key, src: s.SourceOf(key), obj: o})
	})
	return out
}

// objectKey names an object of spec.
func objectKey(spec *kindSpec, namespace, name string) engine.ObjectKey {
	if !spec.namespaced {
		namespace = ""
	}
	return engine.ObjectKey{Kind: spec.kind, Namespace: namespace, Name: name}
}
