package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchmarkKustomizeSave times one save, as an editor does it (a new file
// renamed over the old), of a file of samples/kustomize while the watcher
// watches the overlay: from the rename to the update that carries the new
// content. file is "base/shop.yaml" (a base the overlay reads, outside the
// watched folder) or "overlays/dev/hostname.yaml" (inside it). The user
// saw about 1 s for the base against 0.09 s for the overlay.
func benchmarkKustomizeSave(b *testing.B, root, file string, inPlace bool) {
	dir := b.TempDir()
	copyTree(b, filepath.Join("..", "samples", "kustomize"), dir)
	overlay := filepath.Join(dir, root)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := newTestLoader(b).Watch(ctx, overlay, WatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if n := w.Current().Result.Snapshot.Len(); n == 0 {
		b.Fatalf("first load: no object (problems %v)", w.Current().Result.Problems)
	}
	path := filepath.Join(dir, file)
	orig, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		time.Sleep(120 * time.Millisecond) // a person's pause between saves: the tree is quiet
		for drained := false; !drained; {  // updates of the last save's trailing events
			select {
			case <-w.Updates():
			default:
				drained = true
			}
		}
		mark := fmt.Sprintf("# save %d\n", i)
		tmp := filepath.Join(filepath.Dir(path), ".save.tmp")
		data := append([]byte(mark), orig...)
		if !inPlace {
			if err := os.WriteFile(tmp, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start := time.Now()
		if inPlace {
			err = os.WriteFile(path, data, 0o644)
		} else {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			b.Fatal(err)
		}
		select {
		case u := <-w.Updates(): // the save's: the tree was quiet before it
			if len(u.Changed) == 0 {
				b.Fatalf("save %d of %s: an update without the build", i, file)
			}
		case <-time.After(10 * time.Second):
			b.Fatalf("save %d of %s: no update in 10s", i, file)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/save")
}

func BenchmarkKustomizeSave(b *testing.B) {
	for _, c := range []struct {
		name, root, file string
		inPlace          bool
	}{
		{"overlay-root/base", "overlays/dev", "base/shop.yaml", false},
		{"overlay-root/overlay", "overlays/dev", "overlays/dev/hostname.yaml", false},
		{"overlay-root/base-in-place", "overlays/dev", "base/shop.yaml", true},
		{"overlay-root/overlay-in-place", "overlays/dev", "overlays/dev/hostname.yaml", true},
		{"folder-root/base", ".", "base/shop.yaml", false},
		{"folder-root/overlay", ".", "overlays/dev/hostname.yaml", false},
	} {
		b.Run(c.name, func(b *testing.B) { benchmarkKustomizeSave(b, c.root, c.file, c.inPlace) })
	}
}
