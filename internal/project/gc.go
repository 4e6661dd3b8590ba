package project

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// loadGCPercent is the garbage collector target used while a directory is
// loaded. Loading allocates many short-lived objects (unstructured maps, CEL
// values) and keeps few, but what it keeps is most of what a one-shot
// command holds: the heap between collections grows by loadGCPercent of
// what the last one found live, in-flight documents included. 200% was
// chosen when a load of 10,000 routes allocated 1.1 GB; since the loader
// allocates 440 MB for the same folder (issue 16) the target only costs
// memory: 255 MB peak RSS of check -o yaml at 200% against 230 MB at 100%.
// At 100% the load's highest point (84 MB of heap for 10,000 HTTPRoutes and
// 20,000 Services) was level with the translation's end; at 50% it is 75 MB,
// and peak RSS 143 -> 137 MB, for ~6% more CPU and wall time (6 interleaved
// runs at load average ~2.5: user+sys 5.14 -> 5.45 s, wall 3.05 -> 3.26 s;
// issue 42). A lower GOGC, or GOGC=off, stands.
const loadGCPercent = 50

var (
	gcMu      sync.Mutex
	gcLoads   int // loads in progress
	gcRestore int // the setting to restore when the last one ends
	// gcServing is the target ServeGC set last (0: none is in effect).
	gcServing int
)

// loadHeadroom is how much the heap may grow between collections during a
// load, at least: the target is the larger of loadGCPercent and
// loadHeadroom over the live heap (loadPercentFor), sized again after
// every cycle. At loadGCPercent alone a load starting from a few megabytes
// of live heap collected every few megabytes: 32 cycles for 10,000
// HTTPRoutes and 20,000 Services, each marking everything kept so far,
// and a check of one route spent a quarter of its CPU collecting while
// the CRD validators were compiled. Past twice loadHeadroom of live heap
// loadGCPercent governs as before, so the highest point of a large load is
// where it was; below that the heap stays within loadHeadroom of what is
// live (issue 42, session 19: 32 -> 14 cycles for those routes; check's
// peak RSS is the same because app.Once hands the load's free pages back
// before translating).
const loadHeadroom = 32 << 20

// loadPercentFor is the GC target during a load with live bytes of live
// heap: the heap grows by loadGCPercent of it, or by loadHeadroom when that
// is more.
func loadPercentFor(live uint64) int {
	return max(loadGCPercent, int(min(loadHeadroom*100/max(live, 1), math.MaxInt32)))
}

// gcGen is the generation of the load whose sizer may run (gcSizer);
// it moves when a load starts and when it ends, which stops the sizers
// armed before.
var gcGen uint64

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// gcSizer is the object whose cleanup runs once after each collection
// while a load sizes the target: it sets the target from the live heap
// that collection found and arms a new sizer. It holds a pointer so that
// it is not a tiny allocation (those share a block, and a block is freed
// only when all its objects are). A sizer armed while the next collection
// marks lives through it: that collection is sized after the one after,
// with the live heap it found.
type gcSizer struct{ _ *gcSizer }

// armGCSizer arranges for sizeLoadGC(gen) to run after the next
// collection.
func armGCSizer(gen uint64) {
	runtime.AddCleanup(&gcSizer{}, sizeLoadGC, gen)
}

// sizeLoadGC sets the load's target from the live heap and arms the next
// sizing, unless the load of generation gen has ended.
func sizeLoadGC(gen uint64) {
	gcMu.Lock()
	defer gcMu.Unlock()
	if gen != gcGen {
		return
	}
	debug.SetGCPercent(loadPercentFor(liveHeap()))
	armGCSizer(gen)
}

// loadGC sets the GC target to loadPercentFor the live heap for the
// duration of a load, sized again after every collection (loadHeadroom),
// and returns the function that undoes it; it is the loaders' BulkLoad
// (see NewLoader, project.go): the process-wide setting is cmd's to
// change, not the loader's. Nested and concurrent loads share one setting.
// A lower setting, or GC turned off (GOGC=off), is left alone. A target
// ServeGC raised is dropped: a load can multiply the live heap, and a
// target sized for the heap before it would let the heap grow that many
// times over; after the load ServeGC sizes it again from Go's default.
func loadGC() (restore func()) {
	gcMu.Lock()
	defer gcMu.Unlock()
	if gcLoads == 0 {
		procsForLoad(true)
		prev := debug.SetGCPercent(loadGCPercent)
		if prev == gcServing && prev != 0 {
			prev, gcServing = 100, 0
		}
		if prev < 0 || prev <= loadGCPercent {
			debug.SetGCPercent(prev)
		} else {
			debug.SetGCPercent(loadPercentFor(liveHeap()))
			gcGen++
			armGCSizer(gcGen)
		}
		gcRestore = prev
	}
	gcLoads++
	return func() {
		gcMu.Lock()
		defer gcMu.Unlock()
		gcLoads--
		if gcLoads == 0 {
			gcGen++
			debug.SetGCPercent(gcRestore)
			procsForLoad(false)
		}
	}
}

// translateGC sizes the collector while check translates as loadGC sizes
// it during a load: the heap may grow by loadGCPercent of what is live, or
// by loadHeadroom when that is more, sized again after every collection.
// The translation adds to what the load left live (for 10,000 HTTPRoutes,
// from 24 to 62 MB: the compiled routes, the status copies, the per-route
// state) and makes little garbage besides (~6 MB), so Go's default target
// would let the heap reach twice the live data of its last cycle, and
// check's peak memory is reached there. At a fixed 50% the collector ran
// three times for those routes, each marking everything kept so far, the
// last one starting just before the translation ended, so that the
// collection after it (dropUnprinted's) waited for it; with the headroom
// it runs once, and the heap at the translation's end is the same 63 MB
// (issue 42, session 21). A lower GOGC, or GOGC=off, stands.
func translateGC() (restore func()) { return loadGC() }

// serveHeadroom is how much the heap may grow between collections while
// `gwdev up` serves, at least: the collector's target is the larger of
// Go's default (twice the live heap) and the live heap plus serveHeadroom.
// A proxied request allocates a few kilobytes that die with it, and the
// data plane keeps little (the table, the last traces), so at the default
// a few megabytes of live heap meant a collection every few hundred
// requests: measured under wrk, GOGC 800 instead of 100 cut gwdev's user
// CPU per request by 10–15%. The price is memory: up to serveHeadroom more
// under load, none once the live heap is over serveHeadroom itself (a
// large table, a full trace history).
const serveHeadroom = 64 << 20

// serveGCInterval is how often ServeGC looks at the live heap.
const serveGCInterval = time.Second

// servingGCPercent is the GC target that lets the heap grow by
// serveHeadroom over live bytes, and never below Go's default of 100.
func servingGCPercent(live uint64) int {
	if live == 0 {
		live = 1
	}
	return int(max(100, serveHeadroom*100/live))
}

// ServeGC keeps the collector's target at servingGCPercent of the live
// heap until ctx ends, then restores the setting it found. It does nothing
// when GOGC is set in the environment (the user's choice stands); loads
// (loadGC) and check's translation (translateTight) are not affected: it
// leaves the target alone while a load runs.
func ServeGC(ctx context.Context) {
	if os.Getenv("GOGC") != "" {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(serveGCInterval)
	defer tick.Stop()
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			setServingGC(servingGCPercent(sample[0].Value.Uint64()))
		}
		select {
		case <-ctx.Done():
			setServingGC(100)
			return
		case <-tick.C:
		}
	}
}

// setServingGC sets the GC target to want unless a load runs or the target
// is within a tenth of want already (setting it costs a little).
func setServingGC(want int) {
	gcMu.Lock()
	defer gcMu.Unlock()
	if gcLoads > 0 {
		return
	}
	cur := max(gcServing, 100)
	if d := want - cur; d*10 <= cur && -d*10 <= cur {
		return
	}
	debug.SetGCPercent(want)
	gcServing = want
	if want == 100 {
		gcServing = 0
	}
}

// reloadHeadroom is how much memory a reload of `gwdev up` may add, at
// least, while HoldGC keeps the collector off: a reload of 10,000
// HTTPRoutes allocates about 48 MB (translation, the data plane's table).
const reloadHeadroom = 128 << 20

var (
	// gcHeld is true while HoldGC's setting is in effect (the first of
	// the nested loads was a reload's).
	gcHeld bool
	// gcLimitRestore is the memory limit HoldGC found.
	gcLimitRestore int64
)

// HoldGC turns the collector off while a reload of `gwdev up` translates
// and applies, and returns the function that turns it back on: the
// garbage the reload makes is then collected after the new table serves,
// not while it is built. The heap may grow by the live heap, and at least
// reloadHeadroom, over what the process holds when the reload starts (a
// memory limit: past it the collector runs anyway). When it ends, a
// collection starts in the background. Like loadGC it counts as a load
// (ServeGC leaves the target alone meanwhile), nests with loads, and
// leaves GOGC=off alone; a lower GOMEMLIMIT stands. A reload that starts
// while that collection still marks waits for it (turning the collector
// off does): saves closer together than a collection (~60 ms of marking at
// 10,000 routes) pay for the previous reload's garbage there.
//
// Measured with BenchmarkReload10000HTTPRoutes and 300 ms between saves
// (as bench/reloadprobe): the table and Apply took 118–142 ms instead of
// 163–280 ms (three interleaved pairs, load average 5). Without the
// collection started at the end the cost only moved: the collector began
// at the next reload's load. End to end (bench/reload.sh main, 10,000
// routes, 3 interleaved rounds of 7 saves, load average 2–5): edit-to-served
// median 157 ms and max 193 ms over the 21 saves, against 169 and 292 ms;
// at load average ~1, round medians 91/116/113 ms against 148/144/136.
func HoldGC() (restore func()) {
	gcMu.Lock()
	defer gcMu.Unlock()
	if gcLoads == 0 {
		procsForLoad(true)
		prev := debug.SetGCPercent(-1)
		if prev == gcServing && prev != 0 {
			prev, gcServing = 100, 0
		}
		gcRestore = prev
		if prev < 0 {
			debug.SetGCPercent(prev) // GOGC=off: nothing to hold
			gcLoads++
			return releaseGC
		}
		s := []metrics.Sample{
			{Name: "/memory/classes/total:bytes"},
			{Name: "/memory/classes/heap/released:bytes"},
			{Name: "/gc/heap/live:bytes"},
		}
		metrics.Read(s)
		held := int64(s[0].Value.Uint64() - s[1].Value.Uint64())
		limit := held + max(reloadHeadroom, int64(s[2].Value.Uint64()))
		gcLimitRestore = debug.SetMemoryLimit(-1)
		debug.SetMemoryLimit(min(limit, gcLimitRestore))
		gcHeld = true
	}
	gcLoads++
	return releaseGC
}

// releaseGC ends one of HoldGC's holds; the last one puts back the target
// and limit HoldGC found.
func releaseGC() {
	gcMu.Lock()
	defer gcMu.Unlock()
	gcLoads--
	if gcLoads > 0 {
		return
	}
	gcGen++ // a load that started first is over too: its sizer stops
	debug.SetGCPercent(gcRestore)
	procsForLoad(false)
	if gcHeld {
		debug.SetMemoryLimit(gcLimitRestore)
		gcHeld = false
		// The collector starts when a goroutine allocates past the
		// target, which would be the next reload's load: start it now,
		// while the data plane serves.
		go runtime.GC()
	}
}
