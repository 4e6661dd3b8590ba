package emulator

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A TraceReader gets the traces recorded since its last Read, oldest
// first, at most the newest limit, and counts the rest as skipped; traces
// the history forgot before it read are skipped too.
func TestTraceReaderReadsNewest(t *testing.T) {
	s := New(Config{TraceBuffer: 100})
	s.traces.record(Trace{Path: "/before"}) // before the reader: not for it
	tr := s.ReadTraces()
	defer tr.Close()
	select {
	case <-tr.Ready():
		t.Fatal("Ready before any trace was recorded")
	default:
	}
	for i := range 30 {
		s.traces.record(Trace{Path: fmt.Sprintf("/%d", i)})
	}
	select {
	case <-tr.Ready():
	default:
		t.Fatal("not Ready after traces were recorded")
	}
	batch, skipped := tr.Read(nil, 10)
	if len(batch) != 10 || skipped != 20 || batch[0].Path != "/20" || batch[9].Path != "/29" {
		t.Fatalf("first read %v, %d skipped; want /20../29 and 20 skipped", paths(batch), skipped)
	}
	// Nothing new: an empty batch in the same array.
	again, skipped := tr.Read(batch, 10)
	if len(again) != 0 || skipped != 0 || cap(again) != cap(batch) {
		t.Fatalf("second read %v, %d skipped (cap %d of %d); want nothing in the same array", paths(again), skipped, cap(again), cap(batch))
	}
	// 250 more than the history keeps (100): the 150 oldest are forgotten.
	for i := range 250 {
		s.traces.record(Trace{Path: fmt.Sprintf("/n%d", i)})
	}
	batch, skipped = tr.Read(again, 0)
	if len(batch) != 100 || skipped != 150 || batch[0].Path != "/n150" || batch[99].Path != "/n249" {
		t.Fatalf("after the history wrapped: %d traces from %s, %d skipped; want /n150../n249 and 150 skipped", len(batch), batch[0].Path, skipped)
	}
	tr.Close()
	<-tr.Done()
	s.traces.record(Trace{Path: "/after"}) // no reader: must not panic
	tr.Close()
}

// Under a flood of recording goroutines, a reader reading in chunks sees
// every goroutine's traces in the order they were recorded, each trace at
// most once, batches never past the limit, and read plus skipped is every
// trace recorded.
func TestTraceReaderFlood(t *testing.T) {
	s := New(Config{TraceBuffer: 500})
	tr := s.ReadTraces()
	const writers, each, limit = 4, 5000, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s.traces.record(Trace{Path: fmt.Sprintf("/%d/%d", w, i)})
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); tr.Close(); close(done) }()
	last := [writers]int{-1, -1, -1, -1}
	var batch []Trace
	read, skipped, maxCap := 0, 0, 0
	check := func() {
		for _, tt := range batch {
			w, i := splitPath(t, tt.Path)
			if i <= last[w] {
				t.Fatalf("writer %d: trace %d after %d", w, i, last[w])
			}
			last[w] = i
		}
	}
	for open := true; open; {
		select {
		case <-tr.Ready():
		case <-tr.Done():
			open = false
		}
		var n int
		batch, n = tr.Read(batch, limit)
		if len(batch) > limit {
			t.Fatalf("batch of %d, limit %d", len(batch), limit)
		}
		maxCap = max(maxCap, cap(batch))
		read, skipped = read+len(batch), skipped+n
		check()
	}
	<-done
	if read+skipped != writers*each {
		t.Errorf("read %d + skipped %d = %d, want %d", read, skipped, read+skipped, writers*each)
	}
	if maxCap > 2*limit {
		t.Errorf("batch array grew to %d traces, want at most about the limit %d", maxCap, limit)
	}
	t.Logf("read %d, skipped %d", read, skipped)
}

func splitPath(t *testing.T, p string) (w, i int) {
	t.Helper()
	a, b, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	w, err1 := strconv.Atoi(a)
	i, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("path %q", p)
	}
	return w, i
}
