package watch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWatcherOverlay reads an editor's unsaved text instead of the file,
// loads a buffer not saved yet, keeps a broken buffer's last good objects,
// coalesces a burst of changes into one reload, never writes the file,
// and reads the disk again once the overlay is dropped.
func TestWatcherOverlay(t *testing.T) {
	l := newTestLoader(t)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	writeTree(t, dir, map[string]string{"a.yaml": watchRouteYAML("a", "80")})
	ov := NewOverlay()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const debounce = 40 * time.Millisecond
	w, err := l.Watch(ctx, dir, WatchOptions{Debounce: debounce, Overlay: ov})
	if err != nil {
		t.Fatal(err)
	}
	if got := routePort(t, w.Current(), "a"); got != 80 {
		t.Fatalf("first load: port %d, want 80", got)
	}
	time.Sleep(2 * debounce) // quiet: the next change reloads at once
	ov.Set(a, []byte(watchRouteYAML("a", "81")))
	if got := routePort(t, nextUpdate(t, w), "a"); got != 81 {
		t.Fatalf("overlaid: port %d, want 81", got)
	}
	if disk, _ := os.ReadFile(a); !bytes.Equal(disk, []byte(watchRouteYAML("a", "80"))) {
		t.Fatalf("the file on disk changed:\n%s", disk)
	}

	// A burst: every keystroke within the debounce makes one reload, with
	// the last text.
	time.Sleep(2 * debounce)
	ov.Set(a, []byte(watchRouteYAML("a", "82"))) // leading: at once
	if got := routePort(t, nextUpdate(t, w), "a"); got != 82 {
		t.Fatalf("leading change: port %d, want 82", got)
	}
	for _, port := range []string{"83", "84", "85", "86"} {
		ov.Set(a, []byte(watchRouteYAML("a", port)))
		time.Sleep(debounce / 4)
	}
	if got := routePort(t, nextUpdate(t, w), "a"); got != 86 {
		t.Fatalf("burst: port %d, want 86", got)
	}
	select {
	case u := <-w.Updates():
		t.Fatalf("a burst made more than one reload after its first: port %d", routePort(t, u, "a"))
	case <-time.After(4 * debounce):
	}

	// A buffer that does not parse keeps the file's last good objects and
	// says where the YAML breaks.
	ov.Set(a, []byte("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: a\n"))
	u := nextUpdate(t, w)
	if got := routePort(t, u, "a"); got != 86 {
		t.Fatalf("broken buffer: port %d, want the last good 86", got)
	}
	if len(u.Stale) != 1 || len(u.Result.Problems) == 0 || u.Result.Problems[0].File != a || u.Result.Problems[0].Line == 0 {
		t.Fatalf("broken buffer: stale %v, problems %v", u.Stale, u.Result.Problems)
	}

	// A buffer not saved yet is loaded like a file.
	b := filepath.Join(dir, "sub", "b.yaml")
	ov.Set(b, []byte(watchRouteYAML("b", "90")))
	if got := routePort(t, nextUpdate(t, w), "b"); got != 90 {
		t.Fatalf("unsaved buffer: port %d, want 90", got)
	}
	if _, err := os.Stat(b); !os.IsNotExist(err) {
		t.Fatalf("the unsaved buffer was written: %v", err)
	}

	// Dropped: the disk's content again.
	ov.Drop(a)
	if got := routePort(t, nextUpdate(t, w), "a"); got != 80 {
		t.Fatalf("dropped: port %d, want the disk's 80", got)
	}
}
