package emulator

// What consumers outside the data plane read of the trace history besides
// Server.Traces and Server.Subscribe: a batched subscription that counts
// what it loses, and the history's size. The admin API's metrics are built
// on these (emulator/admin); the ring itself stays unexported.

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
	sub, cancel := s.traces.subscribe(limit)
	return &TraceSubscription{sub: sub, cancel: cancel}
}

// Each calls f with every trace, oldest first, on the calling goroutine
// until Cancel (the traces still queued then are passed too). Under load
// traces arrive in batches, at most one batch per traceBatchWindow. The
// *Trace is valid only during the call: f must copy what it keeps.
func (ts *TraceSubscription) Each(f func(*Trace)) { ts.sub.each(f) }

// Dropped counts the traces the subscription lost because its queue was
// full.
func (ts *TraceSubscription) Dropped() int64 { return ts.sub.dropped.Load() }

// Cancel ends the subscription; Each returns once it has passed what was
// queued. Any number of calls.
func (ts *TraceSubscription) Cancel() { ts.cancel() }

// TraceUsage is the number of traces the history keeps and their estimated
// bytes, which Config.TraceBytes bounds.
func (s *Server) TraceUsage() (traces, bytes int) { return s.traces.usage() }
