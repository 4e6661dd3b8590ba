package web

import (
	"sync"
	"sync/atomic"
)

// page is one open /ui/events stream: ch holds at most one notice that a
// new State is there (newer ones coalesce into it), so a page that reads
// slowly costs the same as one that reads at once.
type page struct {
	ch chan struct{}
}

// pageHub is the set of open pages, at most max.
type pageHub struct {
	max int

	mu    sync.Mutex
	pages map[*page]struct{}
	// dropped counts pages closed because they accepted nothing within the
	// write deadline; refused those turned away past max.
	dropped, refused atomic.Int64
}

func newPageHub(max int) *pageHub {
	return &pageHub{max: max, pages: map[*page]struct{}{}}
}

// open adds a page, or reports that max are open (counted as refused).
func (h *pageHub) open() (*page, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pages) >= h.max {
		h.refused.Add(1)
		return nil, false
	}
	p := &page{ch: make(chan struct{}, 1)}
	h.pages[p] = struct{}{}
	return p, true
}

// close removes a page.
func (h *pageHub) close(p *page) {
	h.mu.Lock()
	delete(h.pages, p)
	h.mu.Unlock()
}

// notify tells every page that a new State is there; it never blocks: a
// page with a notice pending keeps that one.
func (h *pageHub) notify() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for p := range h.pages {
		select {
		case p.ch <- struct{}{}:
		default:
		}
	}
}

// usage is the number of open pages and the dropped and refused counts.
func (h *pageHub) usage() (open int, dropped, refused int64) {
	h.mu.Lock()
	open = len(h.pages)
	h.mu.Unlock()
	return open, h.dropped.Load(), h.refused.Load()
}

// pending counts the notices queued for the pages (at most one each).
func (h *pageHub) pending() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for p := range h.pages {
		n += len(p.ch)
	}
	return n
}
