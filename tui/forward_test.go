package tui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/gwdev/gwdev/emulator"
)

// client keeps a connection per concurrent request, so that no connection
// is closed (and traced) while the tests count request traces.
var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// get requests url and reads the answer.
func get(t *testing.T, url string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// batches collects what ForwardTraces sends, with when it was sent.
type batches struct {
	// model, when set, takes every batch as the dashboard does (and hands
	// its array back); otherwise send hands it back itself.
	model *Model
	mu    sync.Mutex
	msgs  []TracesMsg
	paths [][]string
	at    []time.Time
}

// send records msg (copying the paths out, as the Model does) and hands
// the array back as the Model does.
func (b *batches) send(m tea.Msg) {
	msg := m.(TracesMsg)
	var ps []string
	for _, tr := range msg.Traces {
		ps = append(ps, tr.Path)
	}
	b.mu.Lock()
	b.msgs, b.paths, b.at = append(b.msgs, msg), append(b.paths, ps), append(b.at, time.Now())
	b.mu.Unlock()
	if b.model != nil {
		run(b.model, msg)
		return
	}
	msg.release()
}

func (b *batches) get() ([]TracesMsg, [][]string, []time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]TracesMsg(nil), b.msgs...), append([][]string(nil), b.paths...), append([]time.Time(nil), b.at...)
}

// Real requests through a real server: within one (long) interval the
// dashboard gets the first trace at once and, when the reader closes, one
// batch of the newest limit traces in order, with the older ones counted
// as trimmed; every request is counted once.
func TestForwardTracesBatches(t *testing.T) {
	srv, url := echoGateway(t)
	t.Cleanup(client.CloseIdleConnections) // before the server closes
	reader := srv.ReadTraces()
	var b batches
	done := make(chan struct{})
	go func() {
		ForwardTraces(context.Background(), reader, b.send, time.Hour, 30)
		close(done)
	}()
	const n = 100
	for i := range n {
		get(t, fmt.Sprintf("%s/%d", url, i))
	}
	if msgs, _, _ := b.get(); len(msgs) > 1 {
		t.Fatalf("%d batches within one interval, want at most the first trace's", len(msgs))
	}
	reader.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ForwardTraces does not return when the reader closes")
	}
	msgs, paths, _ := b.get()
	total := 0
	for _, m := range msgs {
		total += len(m.Traces) + m.Trimmed
	}
	last := paths[len(paths)-1]
	if total != n || len(last) != 30 {
		t.Fatalf("%d batches counting %d requests (traces and trimmed), the last of %d traces; want %d counted, the newest 30 last",
			len(msgs), total, len(last), n)
	}
	for i, p := range last {
		if want := fmt.Sprintf("/%d", n-30+i); p != want {
			t.Fatalf("last batch [%d] = %s, want %s (in order)", i, p, want)
		}
	}
}

// Under a flood the batches keep to the frame rate (three intervals after
// a heavy batch), never pass the limit, arrive in order, and reuse two
// arrays instead of growing new ones.
func TestForwardTracesFlood(t *testing.T) {
	srv, url := echoGateway(t)
	t.Cleanup(client.CloseIdleConnections) // before the server closes
	reader := srv.ReadTraces()
	b := batches{model: newTestModel(120, 40, Options{TraceLimit: 40})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	const interval, limit = 5 * time.Millisecond, 50
	go func() {
		ForwardTraces(ctx, reader, b.send, interval, limit)
		close(done)
	}()
	var wg sync.WaitGroup
	const clients, each = 4, 400
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				get(t, fmt.Sprintf("%s/%d/%d", url, c, i))
			}
		}()
	}
	wg.Wait()
	reader.Close()
	<-done
	cancel()
	msgs, paths, at := b.get()
	arrays := map[*emulator.Trace]bool{}
	total := 0
	lastSeen := map[string]int{}
	// The batches are spaced by the forwarder's clock, taken just before
	// each send; at is taken inside send, which a loaded machine may
	// delay by milliseconds, so one gap may look short. Summed, the gaps
	// are at least what was due between the first batch and the one
	// before the last, less the first batch's delay.
	var dues time.Duration
	for i, m := range msgs {
		total += len(m.Traces) + m.Trimmed
		if len(m.Traces) > limit {
			t.Fatalf("batch %d has %d traces, limit %d", i, len(m.Traces), limit)
		}
		arrays[&m.Traces[:1][0]] = true
		if i > 0 && i < len(msgs)-1 { // the last one comes at once: the reader closed
			due := interval
			if len(msgs[i-1].Traces) >= heavyBatch {
				due = 3 * interval
			}
			dues += due
		}
		for _, p := range paths[i] {
			var c, n int
			if _, err := fmt.Sscanf(p, "/%d/%d", &c, &n); err != nil {
				t.Fatalf("path %q", p)
			}
			key := fmt.Sprint(c)
			if prev, ok := lastSeen[key]; ok && n <= prev {
				t.Fatalf("client %d: request %d after %d", c, n, prev)
			}
			lastSeen[key] = n
		}
	}
	if total != clients*each {
		t.Errorf("batches count %d requests, want %d", total, clients*each)
	}
	if n := len(msgs); n > 2 {
		if spread := at[n-2].Sub(at[0]); spread+20*time.Millisecond < dues {
			t.Errorf("%d batches in %s, want them spaced by the frame: %s due", n, spread, dues)
		}
	}
	if got := b.model.c.s.traces; got != clients*each {
		t.Errorf("the dashboard counted %d requests, want %d", got, clients*each)
	}
	if tv := b.model.views[viewTraces].(*tracesView); len(tv.entries) != 40 || tv.entries[39].t.Path != paths[len(paths)-1][len(paths[len(paths)-1])-1] {
		t.Errorf("the dashboard lists %d traces, want the newest 40", len(tv.entries))
	}
	if len(msgs) < 5 {
		t.Fatalf("%d batches: too few to see arrays reused", len(msgs))
	}
	if len(arrays) > 2 {
		t.Errorf("%d batch arrays for %d batches, want them reused", len(arrays), len(msgs))
	}
	t.Logf("%d batches", len(msgs))
}

func TestForwardTracesStops(t *testing.T) {
	srv := emulator.New(emulator.Config{})
	reader := srv.ReadTraces()
	defer reader.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		ForwardTraces(ctx, reader, func(tea.Msg) {}, 0, 0)
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ForwardTraces does not return when ctx is done")
	}
}
