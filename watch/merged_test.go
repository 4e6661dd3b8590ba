package watch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestSortedObjectsEqualsFullMerge: after random edits (files written with
// objects defined twice, in one file or across files, files broken so that
// last good objects stay, emptied, deleted), the update built from the
// order kept between rescans is the one a full sort of every file's
// objects builds.
func TestSortedObjectsEqualsFullMerge(t *testing.T) {
	dir := t.TempDir()
	l := newTestLoader(t)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := l.Watch(ctx, dir, WatchOptions{Debounce: time.Hour, EmptyGrace: -1, DeleteGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	cancel() // the test rescans itself; the watch loop only ends
	rng := rand.New(rand.NewPCG(1, 28))
	route := func(name, ns string) string {
		return fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: %s}\nspec:\n  hostnames: [%s.example.com]\n", name, ns, name)
	}
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
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: the kept order builds\n%+v\nfull sort builds\n%+v", step, got, want)
		}
	}
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
