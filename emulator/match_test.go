package emulator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// routeCase is a request and the echo service that must answer it ("" : a
// 404 from the gateway).
type routeCase struct {
	method, host, path string
	hdr                []string
	want               string
}

// check sends the request, checks who answered, and checks that Explain
// reaches the same listener, virtual host and rule as the data plane.
func (h *harness) check(t *testing.T, c routeCase) {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodGet
	}
	req := h.request(method, c.host, c.path, c.hdr...)
	res, tr := h.traced(req)
	if c.want == "" {
		if res.status != http.StatusNotFound {
			t.Errorf("%s %s%s: status %d, want 404 (rule %s)", method, c.host, c.path, res.status, tr.Rule)
		}
		if tr.Reason == "" {
			t.Errorf("%s %s%s: 404 without a trace reason", method, c.host, c.path)
		}
	} else {
		if res.status != http.StatusOK {
			t.Fatalf("%s %s%s: status %d: %s", method, c.host, c.path, res.status, res.body)
		}
		if got := res.echo(t).Service; got != c.want {
			t.Errorf("%s %s%s: answered by %q, want %q (rule %s)", method, c.host, c.path, got, c.want, tr.Rule)
		}
	}
	ex := h.explain(h.request(method, c.host, c.path, c.hdr...))
	if ex.Listener != tr.Listener || ex.VirtualHost != tr.VirtualHost || ex.Rule != tr.Rule || ex.Backend != tr.Backend {
		t.Errorf("%s %s%s: Explain says %s | %s | %s | %s, data plane %s | %s | %s | %s", method, c.host, c.path,
			ex.Listener, ex.VirtualHost, ex.Rule, ex.Backend, tr.Listener, tr.VirtualHost, tr.Rule, tr.Backend)
	}
	if c.want == "" && ex.Status != http.StatusNotFound {
		t.Errorf("%s %s%s: Explain status %d, want 404", method, c.host, c.path, ex.Status)
	}
}

func TestHTTPMatching(t *testing.T) {
	r := func(name string, m *table.HTTPMatch) *table.RouteRule { return rule(name, m, echo(name, 1)) }
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			// In the engine's precedence order.
			r("exact", exact("/exact")),
			r("regex", regex("/re/[0-9]+")),
			r("ci", regex("(?i)/case/[a-z]+")),
			r("nolit", regex(`.*\.png`)),
			r("foobar", prefix("/foo/bar")),
			r("foo-post", withMethod(prefix("/foo"), "POST")),
			r("foo-two-headers", withHeader(withHeader(prefix("/foo"), "X-Env", "dev", false), "X-Team", "a", false)),
			r("foo-header", withHeader(prefix("/foo/"), "x-env", "dev", false)),
			r("foo-query", withQuery(prefix("/foo"), "v", "[0-9]+", true)),
			r("foo", prefix("/foo")),
			r("hre", withHeader(prefix("/h"), "X-Ver", "v[0-9]", true)),
			r("qexact", withQuery(prefix("/q"), "mode", "fast", false)),
			r("multi", withHeader(prefix("/multi"), "X-Multi", "a,b", false)),
			r("root", prefix("/")),
		)))))
	})
	for _, c := range []routeCase{
		{path: "/exact", want: "exact"},
		{path: "/exact/", want: "root"},
		{path: "/Exact", want: "root"},
		{path: "/re/123", want: "regex"},
		{path: "/re/12a", want: "root"},
		{path: "/re/123/x", want: "root"},
		{path: "/CASE/abc", want: "ci"},
		{path: "/case/ab1", want: "root"},
		{path: "/img/a.png", want: "nolit"},
		{path: "/foo/a.png", want: "nolit"},
		{path: "/foo", want: "foo"},
		{path: "/foo/", want: "foo"},
		{path: "/foo/baz", want: "foo"},
		{path: "/foobar", want: "root"},
		{path: "/foo/bar", want: "foobar"},
		{path: "/foo/bar/", want: "foobar"},
		{path: "/foo/bar/x", want: "foobar"},
		{path: "/foo/barx", want: "foo"},
		{method: "POST", path: "/foo", want: "foo-post"},
		{method: "PUT", path: "/foo", want: "foo"},
		{path: "/foo", hdr: []string{"X-Env: dev"}, want: "foo-header"},
		{path: "/foo/x", hdr: []string{"x-env: dev"}, want: "foo-header"},
		{path: "/foo", hdr: []string{"X-Env: DEV"}, want: "foo"},
		{path: "/foo", hdr: []string{"X-Env: dev", "X-Team: a"}, want: "foo-two-headers"},
		{path: "/foo?v=42", want: "foo-query"},
		{path: "/foo?v=4x2", want: "foo"},
		{path: "/foo?V=42", want: "foo"},
		{path: "/foo?v=42&v=x", want: "foo-query"},
		{path: "/h", hdr: []string{"X-Ver: v2"}, want: "hre"},
		{path: "/h", hdr: []string{"X-Ver: v22"}, want: "root"},
		{path: "/q?mode=fast", want: "qexact"},
		{path: "/q?mode=fastest", want: "root"},
		{path: "/multi", hdr: []string{"X-Multi: a", "X-Multi: b"}, want: "multi"},
		{path: "/anything/else", want: "root"},
	} {
		h.check(t, c)
	}
}

func TestFirstMatchWinsInTableOrder(t *testing.T) {
	// The table's order decides, even when indexes would find a rule of
	// another kind first: here a regex rule comes before an Exact one.
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("re", regex("/a.*"), echo("re", 1)),
			rule("ex", exact("/abc"), echo("ex", 1)),
			rule("pre", prefix("/abc"), echo("pre", 1)),
		)))))
	})
	h.check(t, routeCase{path: "/abc", want: "re"})
	h.check(t, routeCase{path: "/b", want: ""})
}

func TestListenerIsolation(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			listener("exact", "foo.example.com", vhost("foo.example.com", rule("l-exact", prefix("/only"), echo("l-exact", 1)))),
			listener("wild-long", "*.b.example.com", vhost("*.b.example.com", rule("l-wild-long", prefix("/"), echo("l-wild-long", 1)))),
			listener("wild", "*.example.com", vhost("*.example.com", rule("l-wild", prefix("/"), echo("l-wild", 1)))),
			listener("any", "", vhost("", rule("l-any", prefix("/"), echo("l-any", 1)))),
		)))
	})
	for _, c := range []routeCase{
		{host: "foo.example.com", path: "/only", want: "l-exact"},
		// A request for the exact listener's host never falls back.
		{host: "foo.example.com", path: "/other", want: ""},
		{host: "FOO.Example.COM:1234", path: "/only/x", want: "l-exact"},
		{host: "x.b.example.com", path: "/", want: "l-wild-long"},
		{host: "y.x.b.example.com", path: "/", want: "l-wild-long"},
		{host: "b.example.com", path: "/", want: "l-wild"},
		{host: "x.example.com", path: "/", want: "l-wild"},
		{host: "example.com", path: "/", want: "l-any"},
		{host: "other.org", path: "/", want: "l-any"},
		{host: "127.0.0.1", path: "/", want: "l-any"},
	} {
		h.check(t, c)
	}
}

func TestNoListenerForHost(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			listener("a", "a.example.com", vhost("a.example.com", rule("a", prefix("/"), echo("a", 1)))),
			listener("b", "b.example.com"), // no routes attached
		)))
	})
	h.check(t, routeCase{host: "a.example.com", path: "/", want: "a"})
	_, tr := h.traced(h.request("GET", "c.example.com", "/"))
	if !strings.Contains(tr.Reason, "no listener") || tr.Listener != "" {
		t.Errorf("reason %q, listener %q", tr.Reason, tr.Listener)
	}
	_, tr = h.traced(h.request("GET", "b.example.com", "/"))
	if !strings.Contains(tr.Reason, "no routes attached") || tr.Listener == "" {
		t.Errorf("reason %q, listener %q", tr.Reason, tr.Listener)
	}
}

func TestVirtualHostPrecedence(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "",
			vhost("foo.example.com", rule("v-exact", prefix("/x"), echo("v-exact", 1))),
			vhost("*.example.com", rule("v-wild", prefix("/"), echo("v-wild", 1))),
			vhost("", rule("v-any", prefix("/"), echo("v-any", 1))),
		))))
	})
	for _, c := range []routeCase{
		{host: "foo.example.com", path: "/x", want: "v-exact"},
		{host: "foo.example.com", path: "/y", want: ""}, // no fallback to *.example.com
		{host: "bar.example.com", path: "/y", want: "v-wild"},
		{host: "example.org", path: "/y", want: "v-any"},
	} {
		h.check(t, c)
	}
}

func TestPrefixMatches(t *testing.T) {
	for _, c := range []struct {
		prefix, path string
		want         bool
	}{
		{"/foo", "/foo", true},
		{"/foo", "/foo/", true},
		{"/foo", "/foo/bar", true},
		{"/foo", "/foobar", false},
		{"/foo/", "/foo", true},
		{"/", "/anything", true},
		{"/", "/", true},
	} {
		if got := prefixMatches(strings.TrimRight(c.prefix, "/"), c.path); got != c.want {
			t.Errorf("prefix %q path %q: %v", c.prefix, c.path, got)
		}
	}
}

func TestRequestHost(t *testing.T) {
	for in, want := range map[string]string{
		"Foo.Example.com:8080": "foo.example.com",
		"foo.example.com.":     "foo.example.com",
		"[::1]:80":             "::1",
		"::1":                  "::1",
		"a.b":                  "a.b",
	} {
		if got := requestHost(in); got != want {
			t.Errorf("requestHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBrokenRegexNeverMatches(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("bad", regex("/(unclosed"), echo("bad", 1)),
			rule("root", prefix("/"), echo("root", 1)),
		)))))
	})
	h.check(t, routeCase{path: "/(unclosed", want: "root"})
}
