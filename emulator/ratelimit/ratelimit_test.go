package ratelimit

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// TestRateLimitClientsBoundedWithRequestsInProgress: with MaxClients 100,
// the least recently seen address holding a request in progress does not
// stop eviction (issue 35: 5,001 entries); the held address keeps its
// count, and when every address held has a request in progress a new one
// is refused with a reason, never added.
func TestRateLimitClientsBoundedWithRequestsInProgress(t *testing.T) {
	l := New(&table.RateLimit{Name: "rl", PerSecond: 1000, BurstPerSecond: 1000, Connections: 1, MaxClients: 100})
	now := time.Unix(1_700_000_000, 0)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	held, refused := l.Admit(addr(0), now)
	if held == nil || refused != "" {
		t.Fatalf("first request: counted %v, refused %q", held != nil, refused)
	}
	for i := 1; i <= 5000; i++ {
		release, refused := l.Admit(addr(i), now)
		if refused != "" {
			t.Fatalf("address %d refused: %s", i, refused)
		}
		release()
		if n := len(l.clients); n > 100 {
			t.Fatalf("after %d addresses the table holds %d, want at most 100", i+1, n)
		}
	}
	if n, m := len(l.clients), l.lru.Len(); n != 100 || m != 99 {
		t.Errorf("the table holds %d addresses (%d idle), want 100 (99)", n, m)
	}
	if _, refused := l.Admit(addr(0), now); !strings.Contains(refused, "more than 1 requests in progress") {
		t.Errorf("the address with a request in progress lost its count: %q", refused)
	}
	held()
	// Every address with a request in progress: a new one is refused.
	var holds []func()
	for i := 10000; i < 10100; i++ {
		release, refused := l.Admit(addr(i), now)
		if refused != "" {
			t.Fatalf("address %d refused: %s", i, refused)
		}
		holds = append(holds, release)
	}
	_, refused = l.Admit(addr(20000), now)
	if !strings.Contains(refused, "full of addresses with requests in progress") || len(l.clients) != 100 {
		t.Errorf("a new address with the table full of requests in progress: %q, %d held", refused, len(l.clients))
	}
	holds[0]()
	if release, refused := l.Admit(addr(20000), now); refused != "" || len(l.clients) != 100 {
		t.Errorf("once a request ended, a new address: %q, %d held", refused, len(l.clients))
	} else {
		release()
	}
	for _, h := range holds[1:] {
		h()
	}
}
