package emulator

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// benchRules makes n rules for one virtual host, in precedence order like
// the engine's: Exact paths, regular expressions, then prefixes (longest
// first), some with header or method conditions.
func benchRules(host string, n int) []*table.RouteRule {
	var exacts, regexes, prefixes []*table.RouteRule
	for i := range n {
		name := fmt.Sprintf("%s-r%d", host, i)
		var m *table.HTTPMatch
		switch i % 10 {
		case 0, 1:
			m = exact(fmt.Sprintf("/api/v1/items/%d", i))
			exacts = append(exacts, rule(name, m, echo(name, 1)))
			continue
		case 2:
			m = regex(fmt.Sprintf("/re/%d/[a-z]+", i))
			regexes = append(regexes, rule(name, m, echo(name, 1)))
			continue
		case 3, 4:
			m = withHeader(prefix(fmt.Sprintf("/svc-%d/v2", i)), "X-Version", "2", false)
		case 5:
			m = withMethod(prefix(fmt.Sprintf("/svc-%d/v2", i)), "POST")
		default:
			m = prefix(fmt.Sprintf("/svc-%d", i))
		}
		prefixes = append(prefixes, rule(name, m, echo(name, 1), echo(name+"-b", 1)))
	}
	return append(append(exacts, regexes...), prefixes...)
}

// benchTable spreads rules over hosts virtual hosts on one listener.
func benchTable(p int32, hosts, rules int) *table.Table {
	var vhs []*table.VirtualHost
	for h := range hosts {
		host := fmt.Sprintf("host-%d.example.com", h)
		vhs = append(vhs, vhost(host, benchRules(host, rules/hosts)...))
	}
	vhs = append(vhs, vhost("", rule("fallback", prefix("/"), echo("fallback", 1))))
	return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhs...))))
}

func benchRequests(hosts, perHost int) []*http.Request {
	rng := rand.New(rand.NewPCG(1, 2))
	reqs := make([]*http.Request, 1024)
	for i := range reqs {
		h := rng.IntN(hosts)
		k := rng.IntN(perHost)
		var path string
		switch k % 4 {
		case 0:
			path = fmt.Sprintf("/api/v1/items/%d", k-k%10)
		case 1:
			path = fmt.Sprintf("/svc-%d/v2/orders/42", k-k%10+3)
		case 2:
			path = fmt.Sprintf("/svc-%d/a/b", k-k%10+7)
		default:
			path = "/nothing/here"
		}
		r, _ := http.NewRequest("GET", "http://x"+path, nil)
		r.Host = fmt.Sprintf("host-%d.example.com:80", h)
		r.Header.Set("X-Version", "2")
		reqs[i] = r
	}
	return reqs
}

func benchRoute(b *testing.B, hosts int) {
	const rules = 10000
	rt := compile(benchTable(80, hosts, rules), nil)
	pr := rt.lookup("127.0.0.1", 80)
	reqs := benchRequests(hosts, rules/hosts)
	b.ReportAllocs()
	b.ResetTimer()
	matched := 0
	for i := 0; b.Loop(); i++ {
		r := reqs[i&1023]
		v := newReqView(r)
		if _, _, rr, _ := pr.route(&v, requestHost(r.Host)); rr != nil {
			matched++
		}
	}
	if matched == 0 {
		b.Fatal("nothing matched")
	}
}

// BenchmarkRouteMatch10000Routes routes requests through 10,000 HTTPRoute
// rules spread over 1,000 hostnames (10 rules each).
func BenchmarkRouteMatch10000Routes(b *testing.B) { benchRoute(b, 1000) }

// BenchmarkRouteMatch10000RoutesOneHost is the worst case: 10,000 rules on
// one hostname.
func BenchmarkRouteMatch10000RoutesOneHost(b *testing.B) { benchRoute(b, 1) }

// BenchmarkExplain10000Routes is the whole decision (filters, backend
// choice, trace) as Explain and the data plane run it.
func BenchmarkExplain10000Routes(b *testing.B) {
	tab := benchTable(80, 1000, 10000)
	reqs := benchRequests(1000, 10)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Explain(tab, "127.0.0.1", 80, reqs[i&1023])
	}
}

// BenchmarkApply1000Routes is a full reload of a 1,000-rule table on a
// running server (listeners kept, everything else recompiled).
func BenchmarkApply1000Routes(b *testing.B) {
	p := freePort(b, "127.0.0.1")
	s := New(Config{})
	defer s.Close(context.Background())
	tabs := []*table.Table{benchTable(p, 100, 1000), benchTable(p, 100, 1000)}
	if err := s.Apply(tabs[0]).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if rep := s.Apply(tabs[i&1]); !rep.Ports[0].Reused {
			b.Fatal("listener re-bound")
		}
	}
}

// BenchmarkServeEcho is a full HTTP/1.1 round trip through the gateway to
// the echo backend.
func BenchmarkServeEcho(b *testing.B) {
	h := serve(b, func(p int32) *table.Table { return benchTable(p, 100, 1000) })
	req := h.request("GET", "host-7.example.com", "/svc-7/a")
	b.ReportAllocs()
	for b.Loop() {
		resp, err := h.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// benchProxy is a full round trip through the gateway to a real HTTP/1.1
// backend on loopback, as `bench/proxy.sh` drives it: a PathPrefix match,
// a request header set, a 256-byte answer. Allocations count the client
// and the backend too.
func benchProxy(b *testing.B, h2c bool, mods ...func(*table.Table)) {
	body := make([]byte, 256)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(body)
	}))
	defer backend.Close()
	h := serve(b, func(p int32) *table.Table {
		r := rule("api", prefix("/api"), mapped("api", 1, backend.Listener.Addr().String()))
		r.Filters = []table.Filter{{Type: table.FilterRequestHeaderModifier,
			RequestHeaderModifier: &table.HeaderModifier{Set: []table.Header{{Name: "X-Route", Value: "api"}}}}}
		tab := newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("api.example.com", r)))))
		for _, m := range mods {
			m(tab)
		}
		return tab
	})
	if h2c {
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		h.client.Transport = tr
	}
	req := h.request("GET", "api.example.com", "/api/users")
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := h.client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}

// BenchmarkProxyHTTP1 proxies HTTP/1.1 keep-alive requests to a backend.
func BenchmarkProxyHTTP1(b *testing.B) { benchProxy(b, false) }

// BenchmarkProxyH2C proxies HTTP/2 (prior knowledge) requests to an
// HTTP/1.1 backend.
func BenchmarkProxyH2C(b *testing.B) { benchProxy(b, true) }

// reloadedTable is tab as the engine's next translation gives it when one
// virtual host was added: new gateway, port, listener and virtual host
// values holding the same rules (engine/incremental.go), plus vh.
func reloadedTable(tab *table.Table, vh *table.VirtualHost) *table.Table {
	out := &table.Table{}
	for _, g := range tab.Gateways {
		gc := *g
		gc.Ports = nil
		for _, p := range g.Ports {
			pc := *p
			pc.Listeners = nil
			for _, l := range p.Listeners {
				lc := *l
				lc.VirtualHosts = nil
				for _, v := range l.VirtualHosts {
					vc := *v
					lc.VirtualHosts = append(lc.VirtualHosts, &vc)
				}
				if vh != nil {
					lc.VirtualHosts = append([]*table.VirtualHost{vh}, lc.VirtualHosts...)
				}
				pc.Listeners = append(pc.Listeners, &lc)
			}
			gc.Ports = append(gc.Ports, &pc)
		}
		out.Gateways = append(out.Gateways, &gc)
	}
	return out
}

// BenchmarkApplyReload10000Routes is a reload that adds one virtual host
// to a 10,000-rule table whose other rules are unchanged (the same
// pointers, as the engine's incremental translation gives them): compile
// reuses the last router's rules and virtual hosts.
func BenchmarkApplyReload10000Routes(b *testing.B) { benchApplyReload(b, false) }

// BenchmarkApplyReload10000RoutesAdded is BenchmarkApplyReload10000Routes
// with the virtual hosts added kept, as saves that each add a route file
// give them (bench/reloadprobe): nothing the last router used is left, so
// compile neither marks nor sweeps what it reused (reuse.go).
func BenchmarkApplyReload10000RoutesAdded(b *testing.B) { benchApplyReload(b, true) }

// benchApplyReload applies a table with one virtual host more than the
// first (keep false) or than the last (keep true) per iteration.
func benchApplyReload(b *testing.B, keep bool) {
	p := freePort(b, "127.0.0.1")
	s := New(Config{})
	defer s.Close(context.Background())
	base := benchTable(p, 5000, 10000)
	if err := s.Apply(base).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	tab := base
	for i := 0; b.Loop(); i++ {
		host := fmt.Sprintf("new-%d.example.com", i)
		if !keep {
			tab = base
		}
		tab = reloadedTable(tab, vhost(host, benchRules(host, 2)...))
		if rep := s.Apply(tab); !rep.Ports[0].Reused {
			b.Fatal("listener re-bound")
		}
	}
}
