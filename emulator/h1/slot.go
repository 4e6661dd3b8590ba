package h1

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// reqSlot is what a fast request is made of besides its head's strings:
// the request, its context, header map, value array and URL. The handler
// that releases its writer (ResponseWriter.Release) releases the request
// too, and the slot then serves the connection's next request, emptied;
// any other request keeps its slot, and the next one takes a new one. A
// keep-alive client's requests on the forwarding lane so cost no
// allocation of their own (net/http makes a request, a cancelable
// context, a header map and a URL for each).
type reqSlot struct {
	req http.Request
	// start is req's start: only the context set (http.Request's
	// context is set by WithContext alone, which makes a new request).
	start http.Request
	// ctx is the request's context (rc, or a cancelable child of a
	// connection context that may end); cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc
	rc     reqContext
	header http.Header
	values []string
	url    url.URL
}

// reusable reports whether the slot may serve another request once
// released: its context is rc (the connection's never ends).
func (s *reqSlot) reusable() bool { return s.rc.parent != nil }

// maxSlotHeader is the most header names a slot's map keeps room for
// across requests: a larger one is left to the collector.
const maxSlotHeader = 64

// newReqSlot makes a slot for requests on a connection whose context is
// parent: its own context when parent never ends (the fast path's listeners),
// else a cancelable child, and then the slot serves one request.
func newReqSlot(parent context.Context) *reqSlot {
	s := &reqSlot{}
	if parent.Done() == nil {
		s.rc.parent = parent
		s.ctx, s.cancel = &s.rc, s.rc.end
	} else {
		s.ctx, s.cancel = context.WithCancel(parent)
	}
	s.start = *(&http.Request{}).WithContext(s.ctx)
	return s
}

// reset empties the slot of a released request for the next one.
func (s *reqSlot) reset() {
	s.rc.reset()
	if len(s.header) > maxSlotHeader {
		s.header = nil
	}
	clear(s.header)
	clear(s.values)
	s.url = url.URL{}
}

// reqContext is a fast request's context on a connection whose context
// never ends: it ends when the request does (or the client leaves), as
// net/http's request context, and a slot reuses it once its request was
// released. It is a context of the context package's own, made when first
// asked for what only such a context has: its Done channel, or its
// cancelable self, which the context package looks up as a value to
// register what context.WithCancel and context.AfterFunc derive from it
// (a pointer to an int is that key's type): those then end with it as with
// any cancelable parent, without a goroutine of their own. A request that
// asks for neither (the forwarding lane's) makes none.
type reqContext struct {
	parent context.Context
	ended  atomic.Bool
	mu     sync.Mutex
	inner  context.Context // nil: not made yet
	cancel context.CancelFunc
}

func (c *reqContext) Deadline() (time.Time, bool) { return c.parent.Deadline() }

func (c *reqContext) Done() <-chan struct{} { return c.made().Done() }

func (c *reqContext) Err() error {
	if c.ended.Load() {
		return context.Canceled
	}
	return nil
}

func (c *reqContext) Value(key any) any {
	if _, ok := key.(*int); ok {
		return c.made().Value(key)
	}
	return c.parent.Value(key)
}

// made returns the context package's context c is, made now when it was
// not yet (ended already when c has).
func (c *reqContext) made() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner == nil {
		c.inner, c.cancel = context.WithCancel(c.parent)
		if c.ended.Load() {
			c.cancel()
		}
	}
	return c.inner
}

// end ends the context (context.Canceled); later calls do nothing.
func (c *reqContext) end() {
	c.mu.Lock()
	c.ended.Store(true)
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
}

// reset makes the context new for the slot's next request.
func (c *reqContext) reset() {
	c.mu.Lock()
	c.inner, c.cancel = nil, nil
	c.ended.Store(false)
	c.mu.Unlock()
}
