package emulator

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// TestApplyReusesUnchangedRules: a reload whose table holds some of the
// last table's rules (the same pointers, as the engine's incremental
// translation hands them on) reuses their compiled rules and virtual hosts
// and keeps their upstreams; changed and new rules are compiled and served;
// a rule with a rate limit is compiled afresh; requests answer as before.
func TestApplyReusesUnchangedRules(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "from-a")
	}))
	t.Cleanup(backend.Close)
	addr := strings.TrimPrefix(backend.URL, "http://")
	ra := rule("a", prefix("/"), mapped("a", 1, addr))
	rb := rule("b", prefix("/"), echo("b", 1))
	rl := rule("limited", prefix("/"), echo("l", 1))
	rl.Policy = &table.RulePolicy{RateLimit: &table.RateLimit{Name: "limited", PerMinute: 1000}}
	var p int32
	h := serve(t, func(n int32) *table.Table {
		p = n
		return newTable(gateway("gw", "127.0.0.1", port(n, listener("http", "",
			vhost("a.example.com", ra), vhost("b.example.com", rb), vhost("l.example.com", rl)))))
	})
	if r := h.get("a.example.com", "/"); r.status != 200 || string(r.body) != "from-a" {
		t.Fatalf("a before the reload: %d %q", r.status, r.body)
	}
	before := h.s.current.Load().lookup("127.0.0.1", p).listeners[0]
	upA := h.s.pool.upstreams[before.vhosts[0].rules[0].backends[0].up.key]

	rb2 := rule("b", prefix("/"), echo("b2", 1))
	rc := rule("c", prefix("/"), echo("c", 1))
	h.apply(newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "",
		vhost("a.example.com", ra), vhost("b.example.com", rb2), vhost("c.example.com", rc), vhost("l.example.com", rl))))))
	after := h.s.current.Load().lookup("127.0.0.1", p).listeners[0]

	if after.vhosts[0] != before.vhosts[0] {
		t.Error("the unchanged virtual host a.example.com was compiled again")
	}
	if after.vhosts[1].rules[0] == before.vhosts[1].rules[0] || after.vhosts[1].rules[0].r != rb2 {
		t.Error("the changed rule of b.example.com was not compiled")
	}
	if after.vhosts[3].rules[0] == before.vhosts[2].rules[0] {
		t.Error("a rule with a rate limit was reused (its counters start afresh with every table)")
	}
	if u := h.s.pool.upstreams[upA.key]; u != upA {
		t.Error("the reused rule's upstream left the pool")
	}
	for host, want := range map[string]string{"b.example.com": "b2", "c.example.com": "c", "l.example.com": "l"} {
		r := h.get(host, "/")
		if r.status != 200 || r.echo(t).Service != want {
			t.Errorf("%s after the reload: %d %s, want the echo of %s", host, r.status, r.body, want)
		}
	}
	if r := h.get("a.example.com", "/"); r.status != 200 || string(r.body) != "from-a" {
		t.Errorf("a after the reload: %d %q", r.status, r.body)
	}
}

// TestCompileReuseRoutesAsFresh: a router compiled reusing the last one's
// rules routes every request as one compiled from nothing.
func TestCompileReuseRoutesAsFresh(t *testing.T) {
	base := benchTable(80, 50, 500)
	pool := newUpstreamPool(nil)
	compile(base, pool)
	next := reloadedTable(base, vhost("new.example.com", benchRules("new.example.com", 4)...))
	reused := compile(next, pool).lookup("127.0.0.1", 80)
	fresh := compile(next, nil).lookup("127.0.0.1", 80)
	if reused.listeners[0].vhosts[1] != pool.vhosts[next.Gateways[0].Ports[0].Listeners[0].VirtualHosts[1].Name] {
		t.Fatal("no virtual host was reused")
	}
	reqs := benchRequests(50, 10)
	for i := range 8 {
		r, _ := http.NewRequest("GET", fmt.Sprintf("http://x/svc-%d/v2/orders/42", i), nil)
		r.Host = "new.example.com"
		reqs = append(reqs, r)
	}
	for _, req := range reqs {
		v1, v2 := newReqView(req), newReqView(req)
		_, _, a, why1 := reused.route(&v1, hostOnly(req.Host))
		_, _, b, why2 := fresh.route(&v2, hostOnly(req.Host))
		if name(a) != name(b) || why1 != why2 {
			t.Errorf("%s %s: reused router gives %s (%s), a fresh one %s (%s)", req.Host, req.URL.Path, name(a), why1, name(b), why2)
		}
	}
}

func name(r *ruleRoutes) string {
	if r == nil {
		return "no rule"
	}
	return r.r.Name
}

func hostOnly(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		return h[:i]
	}
	return h
}
