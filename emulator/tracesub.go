package emulator

import (
	"context"
	"slices"
	"sync"
	"time"
)

// What consumers outside the data plane read of the trace history besides
// Server.Traces: a batched subscription that gets every trace and counts
// what it loses (the admin API's metrics and /traces/stream, the access
// log's tests), a reader of the history itself that keeps up with the
// newest traces at its own pace (the dashboard), and the history's size.
// The ring itself stays unexported.

// TraceSubscription is one subscriber's queue of the traces recorded since
// it subscribed (Server.SubscribeTraces), for a consumer that takes them in
// batches on a goroutine of its own, such as the admin API's metrics.
type TraceSubscription struct {
	sub    *subscription
	cancel func()
}

// SubscribeTraces subscribes to every new trace. The queue holds up to
// limit traces; a trace that finds it full is lost for this subscriber
// (counted by Dropped), so a slow reader never slows requests. Each
// delivers the traces; Cancel ends the subscription.
func (s *Server) SubscribeTraces(limit int) *TraceSubscription {
	return s.SubscribeTracesWithin(limit, 0)
}

// SubscribeTracesWithin is SubscribeTraces with a bound on the queue's
// memory too: a trace that would take the queue's estimated bytes (the
// history's own estimate, Config.TraceBytes) past maxBytes is lost for
// this subscriber and counted by Dropped, unless the queue is empty
// (maxBytes <= 0: no byte bound). A subscriber that stops taking traces
// then holds at most about maxBytes, whatever the traces' size.
func (s *Server) SubscribeTracesWithin(limit, maxBytes int) *TraceSubscription {
	sub, cancel := s.traces.subscribe(limit, maxBytes)
	return &TraceSubscription{sub: sub, cancel: cancel}
}

// Queued is the number of traces waiting in the subscription's queue and
// their estimated bytes.
func (ts *TraceSubscription) Queued() (traces, bytes int) { return ts.sub.queued() }

// Each calls f with every trace, oldest first, on the calling goroutine
// until Cancel (the traces still queued then are passed too). Under load
// traces arrive in batches, at most one batch per traceBatchWindow. The
// *Trace is valid only during the call: f must copy what it keeps.
func (ts *TraceSubscription) Each(f func(*Trace)) { ts.sub.each(f) }

// Next waits for the next batch of traces, oldest first, for a consumer
// that handles a batch at once (/traces/stream writes it and flushes
// once). Under load a batch comes at most once per traceBatchWindow. ok
// is false once Cancel was called or ctx is done; the traces still queued
// then come with it. With idle > 0, a wait that sees no trace for idle
// returns an empty batch (ok true). prev, the previous batch, is reused
// for this one: the caller must be done with it. One goroutine at a time.
func (ts *TraceSubscription) Next(ctx context.Context, idle time.Duration, prev []Trace) (batch []Trace, ok bool) {
	return ts.sub.next(ctx, idle, prev)
}

// Dropped counts the traces the subscription lost because its queue was
// full.
func (ts *TraceSubscription) Dropped() int64 { return ts.sub.dropped.Load() }

// Cancel ends the subscription; Each returns once it has passed what was
// queued. Any number of calls.
func (ts *TraceSubscription) Cancel() { ts.cancel() }

// TraceUsage is the number of traces the history keeps and their estimated
// bytes, which Config.TraceBytes bounds.
func (s *Server) TraceUsage() (traces, bytes int) { return s.traces.usage() }

// TraceReader reads the trace history itself, from where it last left off,
// for a consumer that wants the newest traces now and then rather than
// every trace, such as the dashboard (tui.ForwardTraces). Recording a
// trace costs it one token on Ready when none is pending: no copy, no
// queue and no wake-up of a reader that is busy or waiting for its next
// frame. Traces the history forgot before the reader got to them, and
// older ones past Read's limit, are skipped and counted.
type TraceReader struct {
	ring *traceRing
	// next is the sequence number of the first trace not read yet.
	next  uint64
	ready chan struct{}
	done  chan struct{} // closed by Close
	once  sync.Once
}

// readChunk is how many traces Read copies per hold of the history's lock,
// so that a reader copying a thousand traces never keeps a request from
// recording its own for long.
const readChunk = 64

// ReadTraces starts a TraceReader at the traces recorded from now on.
// Close it when done.
func (s *Server) ReadTraces() *TraceReader {
	r := s.traces
	tr := &TraceReader{ring: r, ready: make(chan struct{}, 1), done: make(chan struct{})}
	r.mu.Lock()
	tr.next = r.seq
	r.readers = append(r.readers, tr.ready)
	r.mu.Unlock()
	return tr
}

// Ready has a value when traces were recorded since the reader last took
// it (possibly ones Read has taken since). A reader waits on it only when
// it wants the next trace at once: each token taken makes the next trace
// send another, a wake-up per request for a reader that keeps waiting on
// it.
func (tr *TraceReader) Ready() <-chan struct{} { return tr.ready }

// Done is closed by Close.
func (tr *TraceReader) Done() <-chan struct{} { return tr.done }

// Read returns the traces recorded since the last Read, oldest first, at
// most the newest limit of them (limit <= 0: no limit), in dst's array
// (reused: dst's traces are overwritten) or a new one when it is too
// small. skipped counts the traces left out: older ones past limit, and
// those the history forgot (its count or byte budget) before Read got to
// them.
func (tr *TraceReader) Read(dst []Trace, limit int) (batch []Trace, skipped int) {
	r := tr.ring
	old := dst
	batch = dst[:0]
	r.mu.Lock()
	end := r.seq
	pos := max(tr.next, r.seq-uint64(r.n))
	if limit > 0 && end-pos > uint64(limit) {
		pos = end - uint64(limit)
	}
	skipped = int(pos - tr.next)
	for pos < end {
		oldest := r.seq - uint64(r.n)
		if pos < oldest { // forgotten while the lock was let go
			skipped += int(min(oldest, end) - pos)
			pos = min(oldest, end)
		}
		for stop := min(end, pos+readChunk); pos < stop; pos++ {
			batch = append(batch, r.buf[(r.head+int(pos-oldest))%len(r.buf)])
		}
		if pos < end {
			r.mu.Unlock()
			r.mu.Lock()
		}
	}
	r.mu.Unlock()
	tr.next = end
	if len(old) > len(batch) && cap(batch) == cap(old) {
		clear(old[len(batch):]) // let the collector have what the array held
	}
	return batch, skipped
}

// Close stops the reader: recording no longer signals it, and Done is
// closed. Read still returns what was recorded before. Any number of
// calls.
func (tr *TraceReader) Close() {
	tr.once.Do(func() {
		r := tr.ring
		r.mu.Lock()
		r.readers = slices.DeleteFunc(r.readers, func(c chan struct{}) bool { return c == tr.ready })
		r.mu.Unlock()
		close(tr.done)
	})
}
