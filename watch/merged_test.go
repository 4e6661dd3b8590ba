package watch

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
)

// TestSortedObjectsEqualsFullMerge: after random edits (files written with
// objects defined twice, in one file or across files, files broken so that
// last good objects stay, emptied, deleted), the update built from the
// order kept between rescans, with the last Snapshot's Sources patched, is
// the one a full sort of every file's objects builds; the objects of the
// files not edited keep their pointers (the engine reuses what it compiled
// for them by pointer), and the last update's Snapshot is not changed.
func TestSortedObjectsEqualsFullMerge(t *testing.T) {
	dir, w := rescanWatcher(t)
	rng := rand.New(rand.NewPCG(1, 28))
	route := func(name, ns string) string {
		return fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: %s}\nspec:\n  hostnames: [%s.example.com]\n", name, ns, name)
	}
	var last *LoadResult
	var lastSources map[engine.ObjectKey]engine.Source
	lastObjects := map[engine.ObjectKey]metav1.Object{}
	for step := range 200 {
		file := filepath.Join(dir, fmt.Sprintf("f%d.yaml", rng.IntN(6)))
		switch op := rng.IntN(10); {
		case op < 6:
			var docs []string
			for range rng.IntN(5) {
				docs = append(docs, route(fmt.Sprintf("r%d", rng.IntN(8)), fmt.Sprintf("ns%d", rng.IntN(2))))
			}
			if rng.IntN(3) == 0 {
				docs = append(docs, "apiVersion: v1\nkind: Service\nmetadata: {name: s"+fmt.Sprint(step)+"}\nspec: {ports: [{port: 80}]}\n")
			}
			writeNow(t, file, strings.Join(docs, "---\n"))
		case op < 8:
			writeNow(t, file, "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: [broken\n")
		default:
			_ = os.Remove(file)
		}
		w.rescan(nil, false, RootSteady)
		w.mu.Lock()
		got := w.current.Result
		var objs []loaded
		var problems []Problem
		var skipped []Skipped
		paths := make([]string, 0, len(w.files))
		for p := range w.files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			objs = append(objs, w.files[p].good...)
			problems = append(problems, w.files[p].load.problems...)
			skipped = append(skipped, w.files[p].load.skipped...)
		}
		want := assemble(len(w.files), objs, problems, skipped)
		w.mu.Unlock()
		want.Warnings = got.Warnings
		// The watcher keeps a map of sources to patch; a load, a list.
		want.Snapshot.Sources, want.Snapshot.SourceList = sourceMap(want.Snapshot), nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: the kept order builds\n%+v\nfull sort builds\n%+v", step, got, want)
		}
		if got == last {
			continue // nothing changed: no new update
		}
		if last != nil && !reflect.DeepEqual(last.Snapshot.Sources, lastSources) {
			t.Fatalf("step %d: the last update's Sources changed", step)
		}
		if got.Snapshot.Sources == nil || (last != nil && reflect.ValueOf(got.Snapshot.Sources).UnsafePointer() == reflect.ValueOf(last.Snapshot.Sources).UnsafePointer()) {
			t.Fatalf("step %d: the update shares the last one's Sources", step)
		}
		objects := map[engine.ObjectKey]metav1.Object{}
		got.Snapshot.Each(func(k engine.ObjectKey, o metav1.Object) {
			objects[k] = o
			if src := got.Snapshot.SourceOf(k); src.File != file && last != nil && reflect.DeepEqual(last.Snapshot.SourceOf(k), src) && lastObjects[k] != o {
				t.Errorf("step %d: %s of %s, a file not edited, is a new object", step, k, src.File)
			}
		})
		last, lastSources, lastObjects = got, maps.Clone(got.Snapshot.Sources), objects
	}
}

// rescanWatcher is a Watcher on a new folder whose watch loop has ended:
// the test rescans it itself (w.rescan), with no grace for emptied or
// deleted files.
func rescanWatcher(t *testing.T) (string, *Watcher) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := newTestLoader(t).Watch(ctx, dir, WatchOptions{Debounce: time.Hour, EmptyGrace: -1, DeleteGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	// Ended, not only told to: a loop still running takes the test's own
	// writes as saves and rescans beside the test (TestEditedFileKeepsUnchangedObjects
	// failed 6 runs in 300 that way).
	<-w.stopped
	return dir, w
}

// writeNow writes a file with a modification time that differs from its
// last one, so that a rescan sees the change.
func writeNow(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if fi, err := os.Stat(path); err == nil && !fi.ModTime().Before(now) {
		now = fi.ModTime().Add(time.Millisecond)
	}
	if err := os.Chtimes(path, now, now); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkAssembleOneChanged10000HTTPRoutes compares, for one changed
// file among 10,000 (one route each), building the update from the order
// kept between rescans with a full sort of every file's objects, as the
// watcher did before.
func BenchmarkAssembleOneChanged10000HTTPRoutes(b *testing.B) {
	dir := b.TempDir()
	writeRoutes(b, dir, 10000)
	benchmarkAssembleOneChanged(b, dir)
}

// BenchmarkAssembleOneChangedGenRoutes10000 is
// BenchmarkAssembleOneChanged10000HTTPRoutes on bench/genroutes' folder
// (bench/reload.sh's): 10,000 HTTPRoutes 50 a file and 20,000 Services.
func BenchmarkAssembleOneChangedGenRoutes10000(b *testing.B) {
	benchmarkAssembleOneChanged(b, genRoutes(b, 10000))
}

func benchmarkAssembleOneChanged(b *testing.B, dir string) {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := newTestLoader(b).Watch(ctx, dir, WatchOptions{Debounce: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	paths := make([]string, 0, len(w.files))
	for p := range w.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b.Run("kept-order", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			p := paths[i%len(paths)]
			f := *w.files[p] // a new state of the file: its objects sort again
			w.files[p] = &f
			w.assemble(nil)
		}
	})
	b.Run("full-sort", func(b *testing.B) {
		for b.Loop() {
			var objs []loaded
			for _, p := range paths {
				objs = append(objs, w.files[p].good...)
			}
			assemble(len(w.files), objs, nil, nil)
		}
	})
}
