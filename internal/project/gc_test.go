package project

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestServingGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, serveHeadroom * 100},
		{8 << 20, 800},               // 8 MiB live: grow by 64 MiB
		{32 << 20, 200},              // 32 MiB: by 64 MiB
		{64 << 20, 100},              // from here on Go's default
		{500 << 20, 100},             // a large table: never below it
		{serveHeadroom / 3, 300},     // rounds down
		{serveHeadroom * 2 / 3, 150}, // 96 MiB goal over 42.7 MiB
		{serveHeadroom + 1, 100},     // just over
	} {
		if got := servingGCPercent(c.live); got != c.want {
			t.Errorf("servingGCPercent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// A load while ServeGC has raised the target runs at loadGCPercent, and
// ServeGC sizes the target again afterwards from Go's default; it never
// raises it during a load.
func TestServingGCYieldsToLoads(t *testing.T) {
	t.Setenv("GOGC", "") // ServeGC's own decisions, whatever the environment
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	setServingGC(800)
	if got := gcPercent(); got != 800 {
		t.Fatalf("after setServingGC(800): GOGC %d", got)
	}
	restore := loadGC()
	during := gcPercent()
	if want := loadPercentFor(liveHeap()); during != want {
		t.Errorf("during a load: GOGC %d, want %d (the serving raise dropped)", during, want)
	}
	setServingGC(during * 2)
	if got := gcPercent(); got != during {
		t.Errorf("ServeGC changed the target during a load: %d, want %d", got, during)
	}
	restore()
	if got := gcPercent(); got != 100 {
		t.Errorf("after the load: GOGC %d, want 100 until ServeGC looks again", got)
	}
	setServingGC(105) // within a tenth: left alone
	if got := gcPercent(); got != 100 {
		t.Errorf("a change of 5%%: GOGC %d, want 100", got)
	}
	setServingGC(100)
}

// ServeGC leaves a GOGC from the environment alone, and puts back Go's
// default when it stops.
func TestServeGCRespectsGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ServeGC(ctx)
	if got := gcPercent(); got != 150 {
		t.Errorf("GOGC=150 in the environment: ServeGC left %d", got)
	}
	t.Setenv("GOGC", "")
	debug.SetGCPercent(100)
	ServeGC(ctx) // one look at the live heap (a test binary's: raised), then stop
	if got := gcPercent(); got != 100 {
		t.Errorf("after ServeGC stopped: GOGC %d, want 100", got)
	}
}

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// A reload holds the collector off under a memory limit, nests with loads
// and puts back the target and limit it found; GOGC=off stays off.
func TestHoldGC(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	setServingGC(800)
	restore := HoldGC()
	if got := gcPercent(); got != -1 {
		t.Errorf("during a reload: GOGC %d, want off", got)
	}
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 || limit < reloadHeadroom {
		t.Errorf("during a reload: memory limit %d, want the heap plus at least %d", limit, reloadHeadroom)
	}
	setServingGC(900)
	inner := loadGC() // a load of many files while the reload runs
	if got := gcPercent(); got != -1 {
		t.Errorf("a load within the reload: GOGC %d, want off", got)
	}
	inner()
	if got := gcPercent(); got != -1 {
		t.Errorf("after the inner load: GOGC %d, want off until the reload ends", got)
	}
	restore()
	if got := gcPercent(); got != 100 {
		t.Errorf("after the reload: GOGC %d, want 100 (the serving raise dropped)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("after the reload: memory limit %d, want none", got)
	}

	debug.SetMemoryLimit(1 << 20) // GOMEMLIMIT lower than the reload's: it stands
	restore = HoldGC()
	if got := debug.SetMemoryLimit(-1); got != 1<<20 {
		t.Errorf("GOMEMLIMIT=1MiB: the reload set the limit to %d", got)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != 1<<20 {
		t.Errorf("after the reload: memory limit %d, want 1MiB back", got)
	}
	debug.SetMemoryLimit(math.MaxInt64)

	debug.SetGCPercent(-1)
	restore = HoldGC()
	restore()
	if got := gcPercent(); got != -1 {
		t.Errorf("GOGC=off: after a reload %d", got)
	}
}

// A load lowers Go's default target to loadGCPercent and puts it back
// after; a lower target, or GC off, stands (issue 42: the load's highest
// point of heap follows the target).
func TestLoadGCLowersTheTarget(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct{ before, during int }{{100, 0}, {200, 0}, {30, 30}, {-1, -1}} {
		debug.SetGCPercent(c.before)
		restore := loadGC()
		if c.during == 0 {
			c.during = loadPercentFor(liveHeap())
		}
		if got := gcPercent(); got != c.during {
			t.Errorf("GOGC %d: %d during a load, want %d", c.before, got, c.during)
		}
		restore()
		if got := gcPercent(); got != c.before {
			t.Errorf("GOGC %d: %d after the load", c.before, got)
		}
	}
}

// check's translation is sized as a load is: with little live heap the
// target is loadHeadroom over it (far above 50%), and it is sized again
// after each collection; a lower GOGC stands, and the setting comes back.
func TestTranslateGCSizesAsALoad(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	restore := translateGC()
	if got, want := gcPercent(), loadPercentFor(liveHeap()); got != want || got <= loadGCPercent {
		t.Errorf("during the translation: GOGC %d, want %d (over %d)", got, want, loadGCPercent)
	}
	restore()
	checkSizedAfterEachCollection(t, "the translation", translateGC)
	debug.SetGCPercent(30)
	restore = translateGC()
	if got := gcPercent(); got != 30 {
		t.Errorf("GOGC=30: %d during the translation", got)
	}
	restore()
}

func TestLoadPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, math.MaxInt32},            // nothing live: no collection for the first 32 MiB
		{4 << 20, 800},                // a small heap grows by loadHeadroom
		{32 << 20, 100},               //
		{loadHeadroom * 2, 50},        // from here on loadGCPercent
		{loadHeadroom * 100 / 51, 51}, // just under twice
		{1 << 30, loadGCPercent},      // a large load
		{loadHeadroom * 3, 50},        //
		{loadHeadroom/2 + 1, 199},     // rounds down
		{loadHeadroom / 3, 300},       //
		{loadHeadroom * 100 / 49, 50}, // 49% is below the floor
	} {
		if got := loadPercentFor(c.live); got != c.want {
			t.Errorf("loadPercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// A load sizes the target again after every collection from the heap that
// collection found live, and stops when the load ends: the target put
// back stays (issue 42, session 19).
func TestLoadGCSizesAfterEachCollection(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	checkSizedAfterEachCollection(t, "the load", loadGC)
}

// checkSizedAfterEachCollection checks that while start's setting holds
// the target follows the live heap after each collection, that the
// setting it put back (GOGC 100) comes back, and that no sizer runs after
// what ended.
func checkSizedAfterEachCollection(t *testing.T, what string, start func() (restore func())) {
	t.Helper()
	restore := start()
	keep := make([]*[1 << 20]byte, 0, 48)
	for range 48 { // 48 MiB live: loadHeadroom is 2/3 of it
		keep = append(keep, new([1 << 20]byte))
	}
	runtime.GC()
	if want := loadPercentFor(liveHeap()); want >= 100 || want <= loadGCPercent {
		t.Fatalf("with 48 MiB live the target should be between %d and 100, is %d", loadGCPercent, want)
	}
	if got, want := waitSized(); got != want {
		t.Errorf("after a collection with %d bytes live: GOGC %d, want %d", liveHeap(), got, want)
	}
	runtime.KeepAlive(keep)
	keep = nil
	runtime.GC()
	if got, want := waitSized(); got != want || want <= 100 {
		t.Errorf("after the heap was let go: GOGC %d, want %d (over 100)", got, want)
	}
	restore()
	if got := gcPercent(); got != 100 {
		t.Fatalf("after %s: GOGC %d, want 100", what, got)
	}
	checkNoSizerRuns(t, what)
}

// checkNoSizerRuns collects three times and fails if the target moved
// from 100 after what ended: no load's sizer may run any more.
func checkNoSizerRuns(t *testing.T, what string) {
	t.Helper()
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // room for a sizer that should not run
	}
	if got := gcPercent(); got != 100 {
		t.Errorf("collections after %s changed GOGC to %d", what, got)
	}
}

// waitSized waits up to 5 s for the target to be loadPercentFor the live
// heap the last collection found, and returns the target and that. The
// sizer runs on the cleanup goroutine after a collection, and the sizer it
// arms is allocated then: when that falls within the next collection's
// marking it lives through it, and sizes after the one after. So the wait
// collects again every 50 ms.
func waitSized() (got, want int) {
	deadline := time.Now().Add(5 * time.Second)
	for i := 1; ; i++ {
		got, want = gcPercent(), loadPercentFor(liveHeap())
		if got == want || time.Now().After(deadline) {
			return got, want
		}
		time.Sleep(time.Millisecond)
		if i%50 == 0 {
			runtime.GC()
		}
	}
}

// A load's sizer stops when the last of the nested holds ends, whichever
// it is: here a reload's hold, taken during the load, ends after it.
func TestLoadSizerStopsWhenAReloadEndsLast(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	load := loadGC()
	hold := HoldGC()
	load()
	hold()
	if got := gcPercent(); got != 100 {
		t.Fatalf("after both: GOGC %d, want 100", got)
	}
	checkNoSizerRuns(t, "both ended")
}
