package emulator

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A subscriber takes what gathered while it was busy in one batch, in
// order; past its limit traces are dropped and counted, and cancelling
// hands over what is still queued.
func TestSubscriptionBatches(t *testing.T) {
	r := newTraceRing(100, 1<<20)
	sub, cancel := r.subscribe(5)
	defer cancel()
	for i := range 7 {
		r.record(Trace{Path: fmt.Sprintf("/%d", i)})
	}
	batch, ok := sub.next(context.Background(), 0, nil)
	if !ok || len(batch) != 5 {
		t.Fatalf("first batch: %d traces (ok %v), want the 5 queued", len(batch), ok)
	}
	for i, tr := range batch {
		if want := fmt.Sprintf("/%d", i); tr.Path != want {
			t.Errorf("batch[%d] = %s, want %s", i, tr.Path, want)
		}
	}
	if d := sub.dropped.Load(); d != 2 {
		t.Errorf("dropped %d, want 2", d)
	}
	// The next batch waits for a trace, then for the window to pass.
	got := make(chan []Trace, 1)
	last := sub.last // when the first batch was taken
	go func() {
		b, _ := sub.next(context.Background(), 0, batch)
		got <- b
	}()
	r.record(Trace{Path: "/a"})
	r.record(Trace{Path: "/b"})
	b := <-got
	if len(b) != 2 || b[0].Path != "/a" || b[1].Path != "/b" {
		t.Errorf("second batch %v, want /a and /b together", paths(b))
	}
	if waited := time.Since(last); waited < traceBatchWindow {
		t.Errorf("second batch after %s, want at least the %s window", waited, traceBatchWindow)
	}
	r.record(Trace{Path: "/c"})
	cancel()
	b, ok = sub.next(context.Background(), 0, b)
	if ok || len(b) != 1 || b[0].Path != "/c" {
		t.Errorf("after cancel: %v (ok %v), want /c and ok false", paths(b), ok)
	}
	r.record(Trace{Path: "/d"}) // no subscriber left: nothing queued
	if len(sub.queue) != 0 {
		t.Errorf("a cancelled subscription still queues")
	}
}

func paths(ts []Trace) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Path)
	}
	return out
}
