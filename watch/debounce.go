package watch

import (
	"path/filepath"
	"time"
)

// debouncer decides when a file event reloads: at once when the tree was
// quiet (no event that matters, and no reload, for the whole wait), so a
// saved file is served without waiting; otherwise after the wait, so that
// a burst (a `git checkout`, a formatter run over the tree, an editor that
// writes a file in several steps) is one reload. It holds no clock: the
// watcher passes the time of each event and reload.
type debouncer struct {
	// wait is the quiet time before a leading reload and the time a burst
	// waits after its last event (WatchOptions.Debounce).
	wait time.Duration
	// last is the time of the last event that matters or of the end of the
	// last reload, whichever is later (zero: never).
	last time.Time
}

// event says whether an event about path at now reloads at once (true) or
// waits until the tree is quiet for d.wait (false: the caller arms or
// re-arms its timer). Events about names the loader never reads (dotfiles
// such as an editor's temporary file before its rename, backups, swap
// files) never reload at once and do not make the tree busy: the rename
// that follows them does.
func (d *debouncer) event(path string, now time.Time) bool {
	if skipName(filepath.Base(path)) {
		return false
	}
	lead := d.last.IsZero() || now.Sub(d.last) >= d.wait
	d.last = now
	return lead
}

// reloaded records that a reload ended at now: events queued while it ran
// arrive just after it and wait for the burst to end.
func (d *debouncer) reloaded(now time.Time) {
	if now.After(d.last) {
		d.last = now
	}
}
