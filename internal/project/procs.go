package project

import (
	"os"
	"runtime"
)

// Serving threads. While `gwdev up` serves, Go runs its goroutines on at
// most half of the machine's cores (servingProcs); a load of many files, a
// reload's translation and check run on all of them. On a developer's
// machine the clients and backends the data plane stands between run on
// the same cores, as they do in bench/proxy.sh (wrk, gwdev and nginx on two
// cores): with as many Ps as cores, each request that woke a parked
// connection goroutine also woke an idle P's thread to look for work (a
// futex wake, a context switch, a spinning thread's nanosleep), which the
// other processes then waited on. Measured there (docs/decisions/proxying.md,
// "CPU per request, part 3"): with one P instead of two, CPU per request
// fell by a tenth to a fifth and p99 by a fifth or more, at the same
// request rate. Loads and translations are another matter: they run
// validation and writing side by side and finish sooner on every core, so
// they raise the setting for their duration (with the GC hold, gc.go).
//
// GOMAXPROCS in the environment is the user's choice and is left alone.

var (
	// procsAll is the setting ServeProcs found (0: ServeProcs is not in
	// effect); procsServe is the one it set. Both under gcMu, with the
	// count of loads in progress (gcLoads).
	procsAll, procsServe int
)

// servingProcs is the number of Ps the data plane serves on, out of all:
// half, at least one.
func servingProcs(all int) int { return max(1, all/2) }

// ServeProcs sets GOMAXPROCS to servingProcs of what it is until the
// returned function is called, which puts it back; loads and reloads
// (loadGC, HoldGC) raise it again while they run. It does nothing when
// GOMAXPROCS is set in the environment or there is one core.
func ServeProcs() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	gcMu.Lock()
	defer gcMu.Unlock()
	if procsAll != 0 {
		return func() {} // nested: the first one's setting stands
	}
	all := runtime.GOMAXPROCS(0)
	serve := servingProcs(all)
	if serve == all {
		return func() {}
	}
	procsAll, procsServe = all, serve
	if gcLoads == 0 {
		runtime.GOMAXPROCS(serve)
	}
	return func() {
		gcMu.Lock()
		defer gcMu.Unlock()
		runtime.GOMAXPROCS(procsAll)
		procsAll, procsServe = 0, 0
	}
}

// procsForLoad is called with gcMu held when the first of the loads in
// progress starts (start) or the last one ends (!start).
func procsForLoad(start bool) {
	if procsAll == 0 {
		return
	}
	if start {
		runtime.GOMAXPROCS(procsAll)
	} else {
		runtime.GOMAXPROCS(procsServe)
	}
}
