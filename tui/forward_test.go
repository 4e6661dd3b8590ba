package tui

import (
	"context"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/emulator"
)

func TestForwardTracesBatches(t *testing.T) {
	ch := make(chan emulator.Trace, 1000)
	var mu sync.Mutex
	var batches []TracesMsg
	send := func(msg tea.Msg) {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, msg.(TracesMsg))
	}
	got := func() []TracesMsg {
		mu.Lock()
		defer mu.Unlock()
		return append([]TracesMsg(nil), batches...)
	}
	done := make(chan struct{})
	go func() {
		ForwardTraces(context.Background(), ch, send, time.Hour, 300)
		close(done)
	}()
	// A burst within one interval is one batch of the newest traces, sent
	// when the interval ends (here: when the channel closes).
	all := sampleTraces(500)
	for _, tr := range all {
		ch <- tr
	}
	time.Sleep(20 * time.Millisecond)
	if n := len(got()); n != 0 {
		t.Fatalf("%d batches before the interval ended", n)
	}
	close(ch)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ForwardTraces does not return when the channel closes")
	}
	bs := got()
	if len(bs) != 1 || len(bs[0].Traces) != 300 || bs[0].Traces[0].Path != all[200].Path || bs[0].Trimmed != 200 {
		t.Fatalf("batches %d, want one of the newest 300 and 200 trimmed", len(bs))
	}
}

func TestForwardTracesInterval(t *testing.T) {
	ch := make(chan emulator.Trace, 10)
	sent := make(chan TracesMsg, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ForwardTraces(ctx, ch, func(m tea.Msg) { sent <- m.(TracesMsg) }, 10*time.Millisecond, 0)
	for _, tr := range sampleTraces(3) {
		ch <- tr
	}
	n := 0
	deadline := time.After(5 * time.Second)
	for n < 3 {
		select {
		case m := <-sent:
			n += len(m.Traces)
		case <-deadline:
			t.Fatalf("%d of 3 traces sent", n)
		}
	}
}

func TestForwardTracesStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan emulator.Trace)
	done := make(chan struct{})
	go func() {
		ForwardTraces(ctx, ch, func(tea.Msg) {}, 0, 0)
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ForwardTraces does not return when ctx is done")
	}
}
