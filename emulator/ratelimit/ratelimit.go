// Package ratelimit is the data plane's per-client rate limits (the
// table's RulePolicy.RateLimit, from ingress-nginx's limit-rps, limit-rpm
// and limit-connections): a Limiter per limit, shared by the rules naming
// it for the life of a routing table, says whether a client address may
// start a request. The emulator's exchange answers a refusal and traces it.
package ratelimit

import (
	"container/list"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// Per-client rate limits (the table's RulePolicy.RateLimit, from
// ingress-nginx's limit-rps, limit-rpm and limit-connections): nginx's
// limit_req with burst and nodelay, a leaky bucket per client address that
// admits burst requests above the rate at once, and limit_conn, which counts
// the requests in progress. Memory is bounded in every state: beyond
// MaxClients addresses the least recently seen one without a request in
// progress is forgotten (and starts afresh); an address with a request in
// progress is never forgotten (its count would be lost), so when every
// address the table holds has one, a new address is refused with the
// limit's status and the reason in its trace rather than tracked beyond
// the bound.

// defaultClients is MaxClients when the table leaves it 0.
const defaultClients = 10000

// Limiter holds one RateLimit's counters; the rules sharing its name
// share it, for the life of a routing table.
type Limiter struct {
	rl     *table.RateLimit
	exempt []netip.Prefix
	mu     sync.Mutex
	max    int
	// clients holds every address tracked, at most max.
	clients map[netip.Addr]*client
	// lru lists the addresses without a request in progress, most recent
	// first: the ones that may be forgotten.
	lru *list.List
}

// client is one address's state.
type client struct {
	addr netip.Addr
	// last is when the buckets were last updated; excessSec and excessMin
	// are the requests above each rate still in the bucket.
	last                 time.Time
	excessSec, excessMin float64
	seen                 bool
	// inFlight counts the address's requests in progress.
	inFlight int
	// elem is the address's element of lru (nil while it has requests in
	// progress).
	elem *list.Element
}

// New returns the Limiter of rl, with no client seen.
func New(rl *table.RateLimit) *Limiter {
	l := &Limiter{rl: rl, max: rl.MaxClients, clients: map[netip.Addr]*client{}, lru: list.New()}
	if l.max <= 0 {
		l.max = defaultClients
	}
	for _, c := range rl.Exempt {
		if p, err := netip.ParsePrefix(c); err == nil {
			l.exempt = append(l.exempt, p)
		}
	}
	return l
}

// Admit decides whether a request of addr may go on at now. It returns the
// function that ends the request's connection count (nil when refused or
// not counted) and, when refused, why.
func (l *Limiter) Admit(addr netip.Addr, now time.Time) (release func(), refused string) {
	for _, p := range l.exempt {
		if p.Contains(addr) {
			return nil, ""
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.clientOf(addr)
	if c == nil {
		return nil, "is a new client address while the limit's table of " + strconv.Itoa(l.max) +
			" addresses is full of addresses with requests in progress: refused until one of them ends (the table never grows past its bound)"
	}
	elapsed := now.Sub(c.last).Seconds()
	if !c.seen {
		elapsed = 0
	}
	// nginx's first request of an address starts an empty bucket; each
	// later one adds one request after the bucket leaked at the rate.
	leak := func(excess float64, rate int, per float64) float64 {
		return max(excess-float64(rate)*elapsed/per, 0) + 1
	}
	sec, mn := c.excessSec, c.excessMin
	if c.seen {
		if r := l.rl.PerSecond; r > 0 {
			if sec = leak(c.excessSec, r, 1); sec > float64(l.rl.BurstPerSecond) {
				return nil, "sent more than " + strconv.Itoa(r) + " requests per second (burst " + strconv.Itoa(l.rl.BurstPerSecond) + ")"
			}
		}
		if r := l.rl.PerMinute; r > 0 {
			if mn = leak(c.excessMin, r, 60); mn > float64(l.rl.BurstPerMinute) {
				return nil, "sent more than " + strconv.Itoa(r) + " requests per minute (burst " + strconv.Itoa(l.rl.BurstPerMinute) + ")"
			}
		}
	}
	if n := l.rl.Connections; n > 0 && c.inFlight >= n {
		return nil, "sent more than " + strconv.Itoa(n) + " requests in progress"
	}
	c.excessSec, c.excessMin, c.last, c.seen = sec, mn, now, true
	if l.rl.Connections == 0 {
		return nil, ""
	}
	if c.inFlight++; c.elem != nil {
		l.lru.Remove(c.elem) // not to be forgotten while counted
		c.elem = nil
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if c.inFlight--; c.inFlight == 0 {
				c.elem = l.lru.PushFront(c)
			}
			l.mu.Unlock()
		})
	}, ""
}

// clientOf returns addr's state, making it the most recent; a new address
// first makes room by forgetting the least recent addresses without
// requests in progress beyond the bound. nil: the table is full of
// addresses with requests in progress (the caller refuses the request).
func (l *Limiter) clientOf(addr netip.Addr) *client {
	if c, ok := l.clients[addr]; ok {
		if c.elem != nil {
			l.lru.MoveToFront(c.elem)
		}
		return c
	}
	for len(l.clients) >= l.max {
		e := l.lru.Back()
		if e == nil {
			return nil
		}
		old := e.Value.(*client)
		l.lru.Remove(e)
		delete(l.clients, old.addr)
	}
	c := &client{addr: addr}
	c.elem = l.lru.PushFront(c)
	l.clients[addr] = c
	return c
}

// Limit is the rate limit the Limiter counts for.
func (l *Limiter) Limit() *table.RateLimit { return l.rl }
