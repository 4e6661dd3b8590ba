package emulator

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
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
	l := newRateLimiter(&table.RateLimit{Name: "rl", PerSecond: 1000, BurstPerSecond: 1000, Connections: 1, MaxClients: 100})
	now := time.Unix(1_700_000_000, 0)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	held, refused := l.admit(addr(0), now)
	if held == nil || refused != "" {
		t.Fatalf("first request: counted %v, refused %q", held != nil, refused)
	}
	for i := 1; i <= 5000; i++ {
		release, refused := l.admit(addr(i), now)
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
	if _, refused := l.admit(addr(0), now); !strings.Contains(refused, "more than 1 requests in progress") {
		t.Errorf("the address with a request in progress lost its count: %q", refused)
	}
	held()
	// Every address with a request in progress: a new one is refused.
	var holds []func()
	for i := 10000; i < 10100; i++ {
		release, refused := l.admit(addr(i), now)
		if refused != "" {
			t.Fatalf("address %d refused: %s", i, refused)
		}
		holds = append(holds, release)
	}
	_, refused = l.admit(addr(20000), now)
	if !strings.Contains(refused, "full of addresses with requests in progress") || len(l.clients) != 100 {
		t.Errorf("a new address with the table full of requests in progress: %q, %d held", refused, len(l.clients))
	}
	holds[0]()
	if release, refused := l.admit(addr(20000), now); refused != "" || len(l.clients) != 100 {
		t.Errorf("once a request ended, a new address: %q, %d held", refused, len(l.clients))
	} else {
		release()
	}
	for _, h := range holds[1:] {
		h()
	}
}

// TestRateLimitFullTableRefusalTraced: end to end with MaxClients 1, a
// request from 127.0.0.2 in progress and one from 127.0.0.3: the second
// is answered 503 and its trace says why.
func TestRateLimitFullTableRefusalTraced(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	h := serve(t, func(p int32) *table.Table {
		r := rule("r", prefix("/"), mapped("slow", 1, slow.Listener.Addr().String()))
		r.Policy = &table.RulePolicy{RateLimit: &table.RateLimit{Name: "rl", Connections: 1, MaxClients: 1}}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", r)))))
	})
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DialContext: func(ctx context.Context, n, a string) (net.Conn, error) { return d.DialContext(ctx, n, a) }}}
	}
	first := make(chan error, 1)
	go func() {
		resp, err := from("127.0.0.2").Get(h.url("/held"))
		if err == nil {
			resp.Body.Close()
		}
		first <- err
	}()
	<-arrived
	resp, err := from("127.0.0.3").Get(h.url("/new"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == "/new" })
	if resp.StatusCode != http.StatusServiceUnavailable || tr.Status != http.StatusServiceUnavailable ||
		!strings.Contains(tr.Reason, "rate limit rl: 127.0.0.3 is a new client address while the limit's table of 1 addresses is full") {
		t.Errorf("the new address got %d, trace %d %q", resp.StatusCode, tr.Status, tr.Reason)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the held request: %v", err)
	}
}
