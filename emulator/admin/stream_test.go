package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
)

// sseEvent is one server-sent event of /traces/stream: its type and data,
// or a comment.
type sseEvent struct{ kind, data string }

// openStream subscribes to /traces/stream and returns its events as they
// come; the stream ends with the test.
func openStream(t *testing.T, admin string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+admin+"/traces/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := make(chan sseEvent, 1<<14)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				ev = sseEvent{kind: "comment", data: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "event: "):
				ev.kind = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data += line[len("data: "):]
			}
		}
	}()
	if ev := <-events; ev.kind != "comment" || ev.data != "gwdev traces" {
		t.Fatalf("first event %+v, want the stream's greeting", ev)
	}
	return events
}

// sendEcho sends n requests to /echo/<first+i>, from workers connections
// at once, and fails the test on any answer but 200.
func sendEcho(t *testing.T, port, first, n, workers int) {
	t.Helper()
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- first + i
	}
	close(next)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/echo/%d", port, i))
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("/echo/%d: %d", i, resp.StatusCode)
				}
			}
		}()
	}
	wg.Wait()
}

// Every trace reaches a stream client that keeps up, once, as a JSON
// Trace, in the order recorded; a quiet stream sends keepalives.
func TestTraceStreamEveryTrace(t *testing.T) {
	_, port, admin := serveGatewayWith(t, emulator.Config{}, func(a *Admin) { a.keepalive = 50 * time.Millisecond })
	events := openStream(t, admin)
	const n = 300
	sendEcho(t, port, 0, n, 1) // one connection: recorded in order
	seen := 0
	timeout := time.After(10 * time.Second)
	for seen < n {
		select {
		case ev := <-events:
			switch ev.kind {
			case "trace":
				var tr emulator.Trace
				if err := json.Unmarshal([]byte(ev.data), &tr); err != nil {
					t.Fatalf("trace %d: %v in %q", seen, err, ev.data)
				}
				if want := fmt.Sprintf("/echo/%d", seen); tr.Path != want || tr.Status != 200 {
					t.Fatalf("trace %d: %s %d, want %s 200", seen, tr.Path, tr.Status, want)
				}
				seen++
			case "dropped":
				t.Fatalf("a client that keeps up missed traces: dropped %s", ev.data)
			}
		case <-timeout:
			t.Fatalf("%d of %d traces", seen, n)
		}
	}
	for deadline := time.After(5 * time.Second); ; {
		select {
		case ev := <-events:
			if ev.kind == "trace" {
				t.Fatalf("an extra trace: %s", ev.data)
			}
			if ev.kind == "comment" && ev.data == "keepalive" {
				return
			}
		case <-deadline:
			t.Fatal("no keepalive on a quiet stream")
		}
	}
}

// A client that falls behind by more than its queue is told how many
// traces it missed: the traces it got and the ones reported dropped add
// up to the requests made.
func TestTraceStreamReportsDropped(t *testing.T) {
	_, port, admin := serveGatewayWith(t, emulator.Config{}, func(a *Admin) { a.streamQueue = 1 })
	events := openStream(t, admin)
	sent, traces, dropped := 0, 0, 0
	count := func(ev sseEvent) {
		switch ev.kind {
		case "trace":
			traces++
		case "dropped":
			d, err := strconv.Atoi(ev.data)
			if err != nil || d <= 0 {
				t.Fatalf("dropped event %q", ev.data)
			}
			dropped += d
		}
	}
	for deadline := time.Now().Add(20 * time.Second); dropped == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no dropped event after %d requests in bursts (%d traces)", sent, traces)
		}
		// One connection: a second one the client dials and leaves unused
		// would be traced too (a connection without a request).
		sendEcho(t, port, sent, 200, 1) // many traces per batch window
		sent += 200
	drain:
		for {
			select {
			case ev := <-events:
				count(ev)
			case <-time.After(200 * time.Millisecond):
				break drain
			}
		}
	}
	// The dropped count of the last batch is reported with the next one.
	sendEcho(t, port, sent, 1, 1)
	sent++
	for deadline := time.After(5 * time.Second); traces+dropped < sent; {
		select {
		case ev := <-events:
			count(ev)
		case <-deadline:
			t.Fatalf("%d traces + %d dropped, want the %d requests made", traces, dropped, sent)
		}
	}
	if traces+dropped != sent {
		t.Errorf("%d traces + %d dropped, want the %d requests made", traces, dropped, sent)
	}
}
