package watch

import (
	"runtime/debug"
	"sync"
)

// loadGCPercent is the garbage collector target used while a directory is
// loaded. Loading allocates a great many short-lived objects (YAML nodes,
// unstructured maps, CEL values) and keeps few; at the default 100% the
// collector takes about a third of the CPU time of a large load.
const loadGCPercent = 400

var (
	gcMu      sync.Mutex
	gcLoads   int // loads in progress
	gcRestore int // the setting to restore when the last one ends
)

// relaxGC raises the GC target for the duration of a load and returns the
// function that undoes it. Nested and concurrent loads share one raise. A
// setting above loadGCPercent, or GC turned off (GOGC=off), is left alone.
func relaxGC() (restore func()) {
	gcMu.Lock()
	defer gcMu.Unlock()
	if gcLoads == 0 {
		prev := debug.SetGCPercent(loadGCPercent)
		if prev < 0 || prev >= loadGCPercent {
			debug.SetGCPercent(prev)
		}
		gcRestore = prev
	}
	gcLoads++
	return func() {
		gcMu.Lock()
		defer gcMu.Unlock()
		gcLoads--
		if gcLoads == 0 {
			debug.SetGCPercent(gcRestore)
		}
	}
}
