package emulator

import (
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// TestShadowsAgreeWithDataPlane asks Explain, for every shadowed match the
// engine finds in its golden tables, about a request made to match it: the
// data plane must answer it with the winner or a rule before the winner,
// never with the shadowed match.
func TestShadowsAgreeWithDataPlane(t *testing.T) {
	checked := 0
	for _, out := range engineGoldenTables(t) {
		f := out.file
		rt := compile(out.Table, nil)
		for _, s := range (&engine.Result{Table: out.Table}).Shadows() {
			req, ok := requestFor(s.VirtualHost, s.Loser)
			if !ok {
				continue
			}
			checked++
			g := gatewayOf(out.Table, s.Listener)
			if pr := rt.lookup(g.Address, portOf(g, s.Listener)); pr != nil && pr.notServed != "" {
				continue // not served (test certificates that are not PEM)
			}
			tr := explainAsClient(rt, g.Address, portOf(g, s.Listener), req)
			rules := s.VirtualHost.Rules
			j := slices.IndexFunc(rules, func(x *table.RouteRule) bool { return x.Name == tr.Rule })
			w := slices.Index(rules, s.Winner)
			if j < 0 || j > w {
				t.Errorf("%s: a request for shadowed %s reached %q, want %s or earlier", filepath.Base(f), s.Loser.Name, tr.Rule, s.Winner.Name)
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d shadowed matches checked; the golden cases should have more", checked)
	}
	t.Logf("%d shadowed matches checked against the data plane", checked)
}

func gatewayOf(tab *table.Table, l *table.ListenerTable) *table.GatewayTable {
	for _, g := range tab.Gateways {
		for _, p := range g.Ports {
			if slices.Contains(p.Listeners, l) {
				return g
			}
		}
	}
	return nil
}

func portOf(g *table.GatewayTable, l *table.ListenerTable) int32 {
	for _, p := range g.Ports {
		if slices.Contains(p.Listeners, l) {
			return p.Port
		}
	}
	return 0
}

// TestShadowNoFalsePositives draws random pairs of HTTP matches from a small
// vocabulary of paths, methods, headers and query params, and random
// requests from the same vocabulary. Whenever the engine says the first
// match shadows the second, every request the second matches must match the
// first, by the data plane's own matcher.
func TestShadowNoFalsePositives(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	paths := []string{"/", "/a", "/a/", "/a/b", "/ab", "/a/b/c"}
	// Matches are drawn as the engine compiles them: PathPrefix values
	// without trailing slashes, canonical header names, one entry a name.
	randMatch := func() *table.HTTPMatch {
		m := &table.HTTPMatch{}
		typ := table.MatchType(pick("PathPrefix", "PathPrefix", "Exact", "RegularExpression"))
		v := pick(paths...)
		switch typ {
		case table.MatchRegularExpression:
			v = pick("(?s)/a/.*", "/a/.*", "/a/[a-z]+", "(?s).*", "/a", "(?s)/.*")
		case table.MatchPathPrefix:
			v = strings.TrimRight(v, "/")
		}
		m.Path = table.PathMatch{Type: typ, Value: v}
		if rng.IntN(3) == 0 {
			m.Method = pick("GET", "POST")
		}
		for range rng.IntN(3) {
			re := rng.IntN(3) == 0
			val := pick("1", "2")
			if re {
				val = pick("1|2", "1", "[0-9]")
			}
			name := pick("X-A", "X-B")
			if !slices.ContainsFunc(m.Headers, func(h table.ValueMatch) bool { return h.Name == name }) {
				m.Headers = append(m.Headers, valueMatch(name, val, re))
			}
		}
		if rng.IntN(3) == 0 {
			m.QueryParams = append(m.QueryParams, valueMatch(pick("q", "Q"), pick("1", "2"), false))
		}
		return m
	}
	randRequest := func() *http.Request {
		u := &url.URL{Path: pick(append(paths, "/a/b/\n", "/a/x", "/abc", "/a/\n")...)}
		q := url.Values{}
		for _, n := range []string{"q", "Q"} {
			if rng.IntN(2) == 0 {
				q.Set(n, pick("1", "2"))
			}
		}
		u.RawQuery = q.Encode()
		r := &http.Request{Method: pick("GET", "POST"), URL: u, Header: http.Header{}, Host: "h", ProtoMajor: 1}
		for _, n := range []string{"X-A", "X-B"} {
			if rng.IntN(3) > 0 {
				r.Header.Set(n, pick("1", "2", "3"))
			}
		}
		return r
	}
	rc := &regexCache{cur: map[string]*regexp.Regexp{}}
	matches := func(r *table.RouteRule, req *http.Request) bool {
		c, err := compileHTTPMatch(r.HTTP, rc)
		if err != nil {
			t.Fatal(err)
		}
		v := newReqView(req)
		return c.matchPath(v.path) && c.matchRest(&v)
	}
	draw := func() (*table.RouteRule, *table.RouteRule) {
		return &table.RouteRule{Name: "a/rule/0/match/0", HTTP: randMatch()}, &table.RouteRule{Name: "b/rule/0/match/0", HTTP: randMatch()}
	}
	checkShadowPairs(t, draw, randRequest, 600, matches)
}

// checkShadowPairs draws 20000 pairs of rules; whenever the engine says
// the first shadows the second, every one of n random requests that the
// second matches must match the first, by the data plane's matcher.
func checkShadowPairs(t *testing.T, draw func() (a, b *table.RouteRule), request func() *http.Request, n int,
	matches func(*table.RouteRule, *http.Request) bool) {
	t.Helper()
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = request()
	}
	shadows, witnessed := 0, 0
	for range 20000 {
		a, b := draw()
		vh := &table.VirtualHost{Name: "vh", Rules: []*table.RouteRule{a, b}}
		tab := &table.Table{Gateways: []*table.GatewayTable{{Ports: []*table.PortTable{{Listeners: []*table.ListenerTable{{VirtualHosts: []*table.VirtualHost{vh}}}}}}}}
		if len((&engine.Result{Table: tab}).Shadows()) == 0 {
			continue
		}
		shadows++
		for _, r := range reqs {
			if matches(b, r) {
				witnessed++
				if !matches(a, r) {
					t.Fatalf("engine says %s shadows %s, but %s %s?%s %v matches only the second",
						describe(a), describe(b), r.Method, r.URL.Path, r.URL.RawQuery, r.Header)
				}
			}
		}
	}
	if shadows < 50 || witnessed < 500 {
		t.Errorf("only %d shadowing pairs (%d requests) drawn: the vocabulary is too wide to test anything", shadows, witnessed)
	}
	t.Logf("%d shadowing pairs, %d requests checked", shadows, witnessed)
}

func describe(m any) string {
	b, _ := yaml.Marshal(m)
	return string(b)
}

// TestShadowNoFalsePositivesGRPC is TestShadowNoFalsePositives for
// GRPCRoute matches: services, methods, regular expressions and headers.
func TestShadowNoFalsePositivesGRPC(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	randMatch := func() *table.GRPCMatch {
		m := &table.GRPCMatch{}
		if rng.IntN(4) > 0 {
			m.Type = table.MatchExact
			m.Service, m.Method = pick("", "a.S", "b.S"), pick("", "Get", "Put")
			if rng.IntN(3) == 0 {
				m.Type = table.MatchRegularExpression
				m.Service, m.Method = pick("", `a\.S`, `(a|b)\.S`, `.*`), pick("", "Get", "Get|Put", "[A-Z].*")
			}
			if m.Service == "" && m.Method == "" {
				m.Type = ""
			}
		}
		for range rng.IntN(3) {
			re := rng.IntN(3) == 0
			val := pick("1", "2")
			if re {
				val = pick("1|2", "1")
			}
			name := pick("X-A", "X-B")
			if !slices.ContainsFunc(m.Headers, func(h table.ValueMatch) bool { return h.Name == name }) {
				m.Headers = append(m.Headers, valueMatch(name, val, re))
			}
		}
		return m
	}
	randRequest := func() *http.Request {
		r := &http.Request{Method: http.MethodPost, ProtoMajor: 2, Host: "h", Header: http.Header{},
			URL: &url.URL{Path: "/" + pick("a.S", "b.S", "c.S") + "/" + pick("Get", "Put", "get")}}
		r.Header.Set("Content-Type", "application/grpc")
		for _, n := range []string{"X-A", "X-B"} {
			if rng.IntN(3) > 0 {
				r.Header.Set(n, pick("1", "2", "3"))
			}
		}
		return r
	}
	rc := &regexCache{cur: map[string]*regexp.Regexp{}}
	matches := func(r *table.RouteRule, req *http.Request) bool {
		c, err := compileGRPCMatch(r.GRPC, rc)
		if err != nil {
			t.Fatal(err)
		}
		v := newReqView(req)
		return c.matches(&v)
	}
	draw := func() (*table.RouteRule, *table.RouteRule) {
		return &table.RouteRule{Name: "a/rule/0/match/0", GRPC: randMatch()}, &table.RouteRule{Name: "b/rule/0/match/0", GRPC: randMatch()}
	}
	checkShadowPairs(t, draw, randRequest, 300, matches)
}
