package emulator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A subscriber takes what gathered while it was busy in one batch, in
// order; past its limit traces are dropped and counted, and cancelling
// hands over what is still queued.
func TestSubscriptionBatches(t *testing.T) {
	r := newTraceRing(100, 1<<20)
	sub, cancel := r.subscribe(5, 0)
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

// A subscriber that stops taking traces holds at most about its byte
// bound, however large the traces (issue 35: a stalled /traces/stream
// client held 5.5 MB); the traces left out are counted, and a first trace
// larger than the bound still gets through.
func TestSubscriptionByteBound(t *testing.T) {
	r := newTraceRing(100, 64<<20)
	const bound = 64 << 10
	sub, cancel := r.subscribe(1<<12, bound)
	defer cancel()
	big := strings.Repeat("x", 8<<10)
	for i := range 1000 {
		r.record(Trace{Path: fmt.Sprintf("/%d", i), Reason: big})
	}
	n, b := sub.queued()
	if b > bound || n == 0 || n >= 1000 {
		t.Fatalf("%d traces (%d bytes) queued, want some within %d bytes", n, b, bound)
	}
	if d := sub.dropped.Load(); d != int64(1000-n) {
		t.Errorf("dropped %d, want %d", d, 1000-n)
	}
	batch, _ := sub.next(context.Background(), 0, nil)
	if len(batch) != n {
		t.Errorf("batch of %d, want the %d queued", len(batch), n)
	}
	if _, b := sub.queued(); b != 0 {
		t.Errorf("%d bytes counted after the batch was taken", b)
	}
	r.record(Trace{Path: "/huge", Reason: strings.Repeat("y", 2*bound)})
	if n, _ := sub.queued(); n != 1 {
		t.Errorf("a first trace over the bound: %d queued, want 1", n)
	}
}
