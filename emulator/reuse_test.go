package emulator

import (
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

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
	first := compile(base, pool).lookup("127.0.0.1", 80)
	next := reloadedTable(base, vhost("new.example.com", benchRules("new.example.com", 4)...))
	reused := compile(next, pool).lookup("127.0.0.1", 80)
	fresh := compile(next, nil).lookup("127.0.0.1", 80)
	if reused.listeners[0].vhosts[1] != first.listeners[0].vhosts[0] {
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

// TestCompileReuseOverEditsRoutesAsFresh: over random reloads (virtual
// hosts kept, removed, added, their rules replaced or shared with another
// host, rules with a rate limit, retry budgets and mirrors, a TCP port
// whose backend comes and goes), a router
// compiled reusing the last one's rules and virtual hosts routes every
// request as one compiled from nothing; the pool then holds exactly what
// the router uses (so an upstream no longer used is dropped, its idle
// connections closed by Apply), and unchanged virtual hosts are the last
// router's.
func TestCompileReuseOverEditsRoutesAsFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 3))
	n := 0
	newRule := func(host string) *table.RouteRule {
		n++
		r := rule(fmt.Sprintf("r%d", n), prefix(fmt.Sprintf("/p%d", rng.IntN(4))), echo(fmt.Sprintf("svc-%d", rng.IntN(30)), 1))
		if host == "h25.example.com" { // one host, now and then: it is never reused
			r.Policy = &table.RulePolicy{RateLimit: &table.RateLimit{Name: fmt.Sprintf("limit-%d", n), PerMinute: 100}}
		}
		switch rng.IntN(8) {
		case 1:
			r.Backends[0].RetryBudget = &table.RetryBudget{Percent: 20 + rng.IntN(2), Interval: 10 * time.Second}
		case 2:
			r.Mirrors = []*table.Backend{echo(fmt.Sprintf("mirror-%d", rng.IntN(5)), 1)}
		}
		return r
	}
	hosts := map[string][]*table.RouteRule{}
	for i := range 20 {
		h := fmt.Sprintf("h%d.example.com", i)
		hosts[h] = []*table.RouteRule{newRule(h), newRule(h)}
	}
	// The engine hands on an unchanged host as a new value holding the
	// same rules, or as the same value.
	values := map[string]*table.VirtualHost{}
	tcpSvc := ""
	tableOf := func() *table.Table {
		var vhs []*table.VirtualHost
		for _, h := range slices.Sorted(maps.Keys(hosts)) {
			v := values[h]
			if v == nil || !slices.Equal(v.Rules, hosts[h]) || rng.IntN(2) == 0 {
				v = vhost(h, hosts[h]...)
				values[h] = v
			}
			vhs = append(vhs, v)
		}
		ports := []*table.PortTable{port(80, listener("http", "", vhs...))}
		if tcpSvc != "" { // a backend outside virtual hosts, compiled every time
			ports = append(ports, port(81, tcpListener("tcp", streamRoute("TCPRoute", "t", echo(tcpSvc, 1)))))
		}
		return newTable(gateway("gw", "127.0.0.1", ports...))
	}
	pool := newUpstreamPool(nil)
	last := compile(tableOf(), pool).lookup("127.0.0.1", 80)
	reusedAny := false
	for step := range 60 {
		changed := map[string]bool{}
		edits := 1 + rng.IntN(3)
		switch rng.IntN(3) {
		case 0:
			edits = 0 // hosts as they were
		case 1: // hosts added only: nothing the last router used is left
			for range edits {
				n++
				h := fmt.Sprintf("new%d.example.com", n)
				hosts[h], changed[h] = []*table.RouteRule{newRule(h)}, true
			}
			edits = 0
		}
		for range edits {
			h := fmt.Sprintf("h%d.example.com", rng.IntN(30))
			changed[h] = true
			switch op := rng.IntN(4); {
			case op == 0:
				delete(hosts, h)
			case op == 1 && len(hosts) > 0:
				other := slices.Sorted(maps.Keys(hosts))[rng.IntN(len(hosts))]
				hosts[h] = append(slices.Clone(hosts[h]), hosts[other][0]) // a rule shared by two hosts
			default:
				hosts[h] = []*table.RouteRule{newRule(h), newRule(h)}
			}
		}
		if rng.IntN(2) == 0 {
			tcpSvc = []string{"", "tcp-0", "tcp-1"}[rng.IntN(3)]
		}
		next := tableOf()
		rt := compile(next, pool)
		pr, fresh := rt.lookup("127.0.0.1", 80), compile(next, nil).lookup("127.0.0.1", 80)
		for h := range hosts {
			for p := range 5 {
				req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/p%d/x", h, p), nil)
				v1, v2 := newReqView(req), newReqView(req)
				_, _, a, why1 := pr.route(&v1, h)
				_, _, b, why2 := fresh.route(&v2, h)
				if name(a) != name(b) || why1 != why2 {
					t.Fatalf("step %d: %s /p%d/x: reused router gives %s (%s), a fresh one %s (%s)", step, h, p, name(a), why1, name(b), why2)
				}
			}
		}
		lastByName := map[string]*vhostRoutes{}
		for _, v := range last.listeners[0].vhosts {
			lastByName[v.vh.Name] = v
		}
		for _, v := range pr.listeners[0].vhosts {
			was := lastByName[v.vh.Name]
			limited := slices.ContainsFunc(v.rules, func(rr *ruleRoutes) bool { return rr.limiter != nil })
			switch {
			case was == nil || changed[v.vh.Hostname] || limited:
			case was != v:
				t.Errorf("step %d: %s did not change but was compiled again", step, v.vh.Hostname)
			default:
				reusedAny = true
			}
		}
		requirePoolHolds(t, step, pool, rt)
		last = pr
	}
	if !reusedAny {
		t.Fatal("no virtual host was ever reused")
	}
}

// requirePoolHolds fails unless the pool's rules, virtual hosts, upstreams
// and retry budgets are exactly those rt uses.
func requirePoolHolds(t *testing.T, step int, pool *upstreamPool, rt *router) {
	t.Helper()
	rules, vhosts, ups, budgets := map[*table.RouteRule]*ruleRoutes{}, map[string]*vhostRoutes{}, map[string]*upstream{}, map[string]*retryBudget{}
	var backend func(*backendRoutes)
	backend = func(b *backendRoutes) {
		if b == nil {
			return
		}
		if b.up != nil {
			ups[b.up.key] = b.up
		}
		if b.budget != nil {
			budgets[budgetKey(&b.budget.spec)] = b.budget
		}
		for _, m := range b.mirrors {
			backend(m)
		}
	}
	for _, pr := range rt.order {
		if pr.stream != nil {
			for _, b := range pr.stream.backends {
				backend(b)
			}
		}
		for _, l := range pr.listeners {
			for _, v := range l.vhosts {
				vhosts[v.vh.Name] = v
				for _, rr := range v.rules {
					rules[rr.r] = rr
					for _, b := range rr.backends {
						backend(b)
					}
					for _, b := range rr.mirrors {
						backend(b)
					}
				}
			}
		}
	}
	if !maps.Equal(pool.rules, rules) || !maps.Equal(pool.vhosts, vhosts) || !maps.Equal(pool.upstreams, ups) || !maps.Equal(pool.budgets, budgets) {
		t.Fatalf("step %d: the pool holds %d rules, %d virtual hosts, %d upstreams, %d budgets; the router uses %d, %d, %d, %d",
			step, len(pool.rules), len(pool.vhosts), len(pool.upstreams), len(pool.budgets), len(rules), len(vhosts), len(ups), len(budgets))
	}
	for _, u := range pool.dropped {
		if ups[u.key] == u {
			t.Fatalf("step %d: upstream %s is dropped but used", step, u.key)
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
