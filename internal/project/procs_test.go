package project

import (
	"runtime"
	"testing"
)

// While `gwdev up` serves it runs on half the Ps it found; loads and
// reloads, nested or not, raise it to all of them while they run, and the
// restore puts back what ServeProcs found. GOMAXPROCS in the environment,
// and a single core, are left alone.
func TestServeProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	t.Setenv("GOGC", "")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	procs := func() int { return runtime.GOMAXPROCS(0) }

	runtime.GOMAXPROCS(4)
	restore := ServeProcs()
	if got := procs(); got != 2 {
		t.Fatalf("serving: GOMAXPROCS %d, want 2 of 4", got)
	}
	if again := ServeProcs(); procs() != 2 {
		t.Errorf("a second ServeProcs changed the setting to %d", procs())
	} else {
		again()
		if got := procs(); got != 2 {
			t.Errorf("the second ServeProcs' restore set %d, want the first's 2 to stand", got)
		}
	}
	load := loadGC() // a load of many files
	if got := procs(); got != 4 {
		t.Errorf("during a load: GOMAXPROCS %d, want all 4", got)
	}
	reload := HoldGC() // a reload beside it
	load()
	if got := procs(); got != 4 {
		t.Errorf("the load ended, the reload runs: GOMAXPROCS %d, want 4", got)
	}
	reload()
	if got := procs(); got != 2 {
		t.Errorf("after the reload: GOMAXPROCS %d, want 2 again", got)
	}
	restore()
	if got := procs(); got != 4 {
		t.Errorf("after serving: GOMAXPROCS %d, want the 4 found", got)
	}
	load = loadGC()
	load()
	if got := procs(); got != 4 {
		t.Errorf("a load when not serving: GOMAXPROCS %d, want 4 untouched", got)
	}

	// A load in progress when serving starts keeps all Ps until it ends.
	load = loadGC()
	restore = ServeProcs()
	if got := procs(); got != 4 {
		t.Errorf("serving began during a load: GOMAXPROCS %d, want 4 until it ends", got)
	}
	load()
	if got := procs(); got != 2 {
		t.Errorf("that load ended: GOMAXPROCS %d, want 2", got)
	}
	restore()

	runtime.GOMAXPROCS(1)
	restore = ServeProcs()
	if got := procs(); got != 1 {
		t.Errorf("one core: GOMAXPROCS %d", got)
	}
	restore()

	runtime.GOMAXPROCS(4)
	t.Setenv("GOMAXPROCS", "3")
	restore = ServeProcs()
	if got := procs(); got != 4 {
		t.Errorf("GOMAXPROCS in the environment: ServeProcs set %d", got)
	}
	restore()
}

func TestServingProcs(t *testing.T) {
	for all, want := range map[int]int{1: 1, 2: 1, 3: 1, 4: 2, 8: 4, 64: 32} {
		if got := servingProcs(all); got != want {
			t.Errorf("servingProcs(%d) = %d, want %d", all, got, want)
		}
	}
}
