package main

import (
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// loadGCPercent is the garbage collector target used while a directory is
// loaded. Loading allocates many short-lived objects (unstructured maps, CEL
// values) and keeps few. 200% was chosen when a load of 10,000 routes
// allocated 1.1 GB: the default cost a fifth more time. Since the loader
// allocates 440 MB for the same folder (issue 16), 200% only costs memory:
// the heap grows to three times what is live, and peak RSS of
// check -o yaml was 255 MB against 230 MB at 100%, for about the same CPU
// time (interleaved runs on a loaded machine). 100% is Go's default: the
// raise now only applies when GOGC is set lower.
const loadGCPercent = 100

var (
	gcMu      sync.Mutex
	gcLoads   int // loads in progress
	gcRestore int // the setting to restore when the last one ends
)

// relaxGC raises the GC target for the duration of a load and returns the
// function that undoes it; it is the loaders' BulkLoad (see newLoader): the
// process-wide setting is cmd's to change, not the loader's. Nested and concurrent loads share one raise. A
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

// newLoader returns a loader that raises the GC target while it loads many
// files and collects garbage between the batches of a large load, so that
// it can pack each batch's objects together (watch/compact.go).
func newLoader() (*watch.Loader, error) {
	l, err := watch.NewLoader()
	if err != nil {
		return nil, err
	}
	l.BulkLoad = relaxGC
	l.Collect = runtime.GC
	return l, nil
}

// translateGCPercent is the garbage collector target while check
// translates. The translation only adds to what the load left live (for
// 10,000 HTTPRoutes, from 45 to about 95 MB: the table, the status copies,
// the per-route state), so the default target lets the heap reach twice
// the live data of its last cycle, and check's peak memory is reached
// there. At 50% the heap stays within one and a half times; the extra
// cycles run on the idle core while the translation, which is
// single-threaded, goes on.
const translateGCPercent = 50

// translateTight translates with the garbage collector target at
// translateGCPercent; a lower GOGC, or GOGC=off, is left alone.
func translateTight(snap *engine.Snapshot, opts engine.Options) *engine.Result {
	prev := debug.SetGCPercent(translateGCPercent)
	if prev < translateGCPercent {
		debug.SetGCPercent(prev)
	}
	defer debug.SetGCPercent(prev)
	return engine.Translate(snap, opts)
}
