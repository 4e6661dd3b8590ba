package emulator

import (
	"fmt"
	"sync"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// retryBudget is the shared count of one table.RetryBudget (an
// XBackendTrafficPolicy's retryConstraint, GEP-3388): every backend with
// the same key counts its requests and retries here. The counts survive a
// table reload while the budget's settings do not change.
type retryBudget struct {
	// gen is the last compile that used it (reuse.go).
	gen  uint64
	spec table.RetryBudget
	mu   sync.Mutex
	// requests counts first tries and retries, retries the retries, over
	// spec.Interval; minRetries counts the retries over spec.MinInterval.
	requests, retries, minRetries slidingCount
}

// retryBudgetError is a retry the budget did not allow: the client gets
// 503 ("After the retry budget has been exceeded, additional retries to
// the backend MUST return a 503 response to the client").
type retryBudgetError struct {
	spec              table.RetryBudget
	requests, retries int64
}

func (e *retryBudgetError) Error() string {
	s := fmt.Sprintf("retry not made: retry budget of XBackendTrafficPolicy %s for %s exhausted (%d retries of %d requests in the last %s; %d%% allowed",
		e.spec.Policy, e.spec.Key, e.retries, e.requests, e.spec.Interval, e.spec.Percent)
	if e.spec.MinRetries > 0 {
		s += fmt.Sprintf(", and the minimum of %d retries per %s is used up", e.spec.MinRetries, e.spec.MinInterval)
	}
	return s + ")"
}

// budgetKey identifies a budget and its settings.
func budgetKey(rb *table.RetryBudget) string {
	return fmt.Sprintf("%s|%s|%d|%s|%d|%s", rb.Key, rb.Policy, rb.Percent, rb.Interval, rb.MinRetries, rb.MinInterval)
}

// retryBudget returns the shared budget for rb, keeping the counts of the
// previous table's budget with the same settings (nil: no budget).
func (c *compiler) retryBudget(rb *table.RetryBudget) *retryBudget {
	if rb == nil {
		return nil
	}
	k := budgetKey(rb)
	b, ok := c.pool.budgets[k]
	if !ok {
		b = &retryBudget{spec: *rb}
		// A zero window counts nothing (no budget, or no minimum).
		b.requests.span, b.retries.span, b.minRetries.span = rb.Interval, rb.Interval, rb.MinInterval
		c.pool.budgets[k] = b
	}
	c.markBudget(b) // reuse.go
	return b
}

// request counts a first try to the backend.
func (b *retryBudget) request(now time.Time) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.requests.add(now)
	b.mu.Unlock()
}

// allowRetry decides whether one more retry may be made now and, if so,
// counts it as a request and a retry. It is allowed while the retries,
// this one included, stay within Percent of the requests of the interval
// (this one included), or while the minimum rate is not used up.
func (b *retryBudget) allowRetry(now time.Time) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	req, ret := b.requests.sum(now), b.retries.sum(now)
	inBudget := (ret+1)*100 <= int64(b.spec.Percent)*(req+1)
	inMinimum := b.spec.MinRetries > 0 && b.minRetries.sum(now) < int64(b.spec.MinRetries)
	if !inBudget && !inMinimum {
		return &retryBudgetError{spec: b.spec, requests: req, retries: ret}
	}
	b.requests.add(now)
	b.retries.add(now)
	b.minRetries.add(now)
	return nil
}

// budgetSlots is the resolution of a sliding count: events are counted in
// span/budgetSlots slots, so the window's edge is exact to 1/64 of it.
const budgetSlots = 64

// slidingCount counts events over the last span, in budgetSlots slots. Its
// memory is fixed whatever the rate. The zero span counts nothing.
type slidingCount struct {
	span   time.Duration
	counts [budgetSlots]int64
	// last is the slot number (time / slot length) of the newest count.
	last int64
}

// slot returns the slot number of now, after clearing the slots that fell
// out of the window since the last count.
func (w *slidingCount) slot(now time.Time) int64 {
	size := w.span / budgetSlots
	if size <= 0 {
		size = 1
	}
	cur := now.UnixNano() / int64(size)
	if cur <= w.last {
		return w.last // the same slot, or the clock stepped back
	}
	if cur-w.last >= budgetSlots {
		w.counts = [budgetSlots]int64{}
	} else {
		for s := w.last + 1; s <= cur; s++ {
			w.counts[s%budgetSlots] = 0
		}
	}
	w.last = cur
	return cur
}

func (w *slidingCount) add(now time.Time) {
	if w.span <= 0 {
		return
	}
	w.counts[w.slot(now)%budgetSlots]++
}

func (w *slidingCount) sum(now time.Time) int64 {
	if w.span <= 0 {
		return 0
	}
	w.slot(now)
	var n int64
	for _, c := range w.counts {
		n += c
	}
	return n
}
