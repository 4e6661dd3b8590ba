package emulator

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

func headerFilter(typ table.FilterType, set, add map[string]string, remove ...string) table.Filter {
	f := &table.HeaderModifier{}
	for _, n := range remove {
		f.Remove = append(f.Remove, textproto.CanonicalMIMEHeaderKey(n))
	}
	for k, v := range set {
		f.Set = append(f.Set, table.Header{Name: textproto.CanonicalMIMEHeaderKey(k), Value: v})
	}
	for k, v := range add {
		f.Add = append(f.Add, table.Header{Name: textproto.CanonicalMIMEHeaderKey(k), Value: v})
	}
	if typ == table.FilterRequestHeaderModifier {
		return table.Filter{Type: typ, RequestHeaderModifier: f}
	}
	return table.Filter{Type: typ, ResponseHeaderModifier: f}
}

func TestHeaderModifiers(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		b := echo("main", 1)
		b.Filters = []table.Filter{headerFilter(table.FilterRequestHeaderModifier, map[string]string{"X-Backend": "main"}, nil)}
		r := rule("r", prefix("/"), b)
		r.Filters = []table.Filter{
			headerFilter(table.FilterRequestHeaderModifier,
				map[string]string{"X-Env": "dev"}, map[string]string{"X-Trace": "1"}, "X-Internal"),
			headerFilter(table.FilterResponseHeaderModifier,
				map[string]string{"Cache-Control": "no-store"}, map[string]string{"X-Added": "yes"}, "X-Drop"),
		}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", r)))))
	})
	res, tr := h.traced(h.request("GET", "example.com", "/x",
		"X-Env: prod", "X-Trace: 0", "X-Internal: secret", "X-Echo-Set-Header: X-Drop:1, X-Keep:2"))
	e := res.echo(t)
	for name, want := range map[string]string{"X-Env": "dev", "X-Trace": "0,1", "X-Backend": "main", "X-Internal": ""} {
		if got := strings.Join(e.Headers[name], "|"); got != want {
			t.Errorf("request header %s = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]string{"Cache-Control": "no-store", "X-Added": "yes", "X-Drop": "", "X-Keep": "2"} {
		if got := res.header.Get(name); got != want {
			t.Errorf("response header %s = %q, want %q", name, got, want)
		}
	}
	if len(tr.Filters) != 3 {
		t.Errorf("filters %q", tr.Filters)
	}
}

func TestURLRewrite(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		pre := rule("pre", prefix("/api"), echo("pre", 1))
		pre.Filters = []table.Filter{{Type: table.FilterURLRewrite, URLRewrite: &table.URLRewrite{
			Hostname: "internal.example.com",
			Path:     &table.PathRewrite{Type: table.ReplacePrefixMatch, Value: "/v2", Prefix: "/api"},
		}}}
		full := rule("full", prefix("/full"), echo("full", 1))
		full.Filters = []table.Filter{{Type: table.FilterURLRewrite, URLRewrite: &table.URLRewrite{
			Path: &table.PathRewrite{Type: table.ReplaceFullPath, Value: "/replaced"},
		}}}
		strip := rule("strip", prefix("/strip/"), echo("strip", 1))
		strip.Filters = []table.Filter{{Type: table.FilterURLRewrite, URLRewrite: &table.URLRewrite{
			Path: &table.PathRewrite{Type: table.ReplacePrefixMatch, Value: "", Prefix: "/strip"},
		}}}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", pre, full, strip)))))
	})
	for _, c := range []struct{ path, wantPath, wantHost string }{
		{"/api/users?x=1", "/v2/users?x=1", "internal.example.com"},
		{"/api", "/v2", "internal.example.com"},
		{"/api/", "/v2/", "internal.example.com"},
		{"/full/a/b?q=1", "/replaced?q=1", "example.com"},
		{"/strip/a", "/a", "example.com"},
		{"/strip", "/", "example.com"},
	} {
		e := h.get("example.com", c.path).echo(t)
		if e.Path != c.wantPath || e.Host != c.wantHost {
			t.Errorf("%s: backend saw %s %s, want %s %s", c.path, e.Host, e.Path, c.wantHost, c.wantPath)
		}
	}
}

func TestReplacePrefixTable(t *testing.T) {
	// The table from the HTTPPathModifier documentation.
	for _, c := range []struct{ path, prefix, repl, want string }{
		{"/foo/bar", "/foo", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo", "/xyz/", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz/", "/xyz/bar"},
		{"/foo", "/foo", "/xyz", "/xyz"},
		{"/foo/", "/foo", "/xyz", "/xyz/"},
		{"/foo/bar", "/foo", "", "/bar"},
		{"/foo/", "/foo", "", "/"},
		{"/foo", "/foo", "", "/"},
		{"/foo/", "/foo", "/", "/"},
		{"/foo", "/foo", "/", "/"},
	} {
		// The engine drops the trailing slashes of both (compileFilters).
		if got := replacePrefix(c.path, strings.TrimRight(c.prefix, "/"), strings.TrimRight(c.repl, "/")); got != c.want {
			t.Errorf("%s with prefix %s → %q: got %s, want %s", c.path, c.prefix, c.repl, got, c.want)
		}
	}
}

// redirectRule makes a redirect rule; f is as the engine resolves it
// (status, and the port of a given scheme, decided).
func redirectRule(name, path string, f table.Redirect) *table.RouteRule {
	r := rule(name, prefix(path))
	r.Filters = []table.Filter{{Type: table.FilterRequestRedirect, RequestRedirect: &f}}
	return r
}

func TestRedirects(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			redirectRule("plain", "/plain", table.Redirect{StatusCode: 302}),
			redirectRule("https", "/https", table.Redirect{Scheme: "https", Port: 443, StatusCode: 302}),
			redirectRule("http", "/http", table.Redirect{Scheme: "http", Port: 80, StatusCode: 302}),
			redirectRule("full", "/full", table.Redirect{Hostname: "other.example.com", Port: 8443, StatusCode: 301,
				Path: &table.PathRewrite{Type: table.ReplaceFullPath, Value: "/new"}}),
			redirectRule("prefix", "/old", table.Redirect{Scheme: "https", Port: 443, StatusCode: 302,
				Path: &table.PathRewrite{Type: table.ReplacePrefixMatch, Value: "/new", Prefix: "/old"}}),
		)))))
	})
	ps := h.url("")[len("http://127.0.0.1:"):]
	for _, c := range []struct {
		path, loc string
		code      int
	}{
		{"/plain/x?a=1", "http://redirect.example.com:" + ps + "/plain/x?a=1", 302},
		{"/https", "https://redirect.example.com/https", 302},
		{"/http", "http://redirect.example.com/http", 302},
		{"/full/x", "http://other.example.com:8443/new", 301},
		{"/old/a/b", "https://redirect.example.com/new/a/b", 302},
	} {
		req := h.request("GET", "redirect.example.com:"+ps, c.path)
		res, tr := h.traced(req)
		if res.status != c.code || res.header.Get("Location") != c.loc {
			t.Errorf("%s: %d %s, want %d %s", c.path, res.status, res.header.Get("Location"), c.code, c.loc)
		}
		ex := h.explain(h.request("GET", "redirect.example.com:"+ps, c.path))
		if ex.Status != c.code || ex.Location != c.loc || tr.Location != c.loc {
			t.Errorf("%s: Explain %d %s, trace %s", c.path, ex.Status, ex.Location, tr.Location)
		}
	}
}

// corsRule makes a CORS rule; f is as the engine resolves it.
func corsRule(name, path string, f table.CORS) *table.RouteRule {
	r := rule(name, prefix(path), echo(name, 1))
	r.Filters = []table.Filter{{Type: table.FilterCORS, CORS: &f}}
	return r
}

func TestCORS(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			corsRule("cors1", "/cors-1", table.CORS{
				AllowOrigins: []table.CORSOrigin{{Scheme: "https", Host: "www.foo.com", Port: "443"},
					{Scheme: "https", Host: "*.bar.com", Port: "443"}},
				AllowCredentials: true,
				AllowMethods:     []string{"GET", "OPTIONS"},
				AllowHeaders:     []string{"x-header-1", "x-header-2"},
				ExposeHeaders:    []string{"x-header-3", "x-header-4"},
				MaxAge:           3600,
			}),
			corsRule("cors2", "/cors-2", table.CORS{AnyOrigin: true, AnyMethod: true, MaxAge: 5}),
		)))))
	})
	preflight := func(path, origin, method string) result {
		return h.do(h.request("OPTIONS", "example.com", path, "Origin: "+origin,
			"Access-Control-Request-Method: "+method, "Access-Control-Request-Headers: x-header-1, x-header-2"))
	}
	res := preflight("/cors-1", "https://www.foo.com", "GET")
	for k, v := range map[string]string{
		"Access-Control-Allow-Origin":      "https://www.foo.com",
		"Access-Control-Allow-Methods":     "GET, OPTIONS",
		"Access-Control-Allow-Headers":     "x-header-1, x-header-2",
		"Access-Control-Expose-Headers":    "x-header-3, x-header-4",
		"Access-Control-Max-Age":           "3600",
		"Access-Control-Allow-Credentials": "true",
	} {
		if got := res.header.Get(k); got != v {
			t.Errorf("preflight %s = %q, want %q", k, got, v)
		}
	}
	if res.status != 200 || len(res.body) != 0 {
		t.Errorf("preflight answered %d %q", res.status, res.body)
	}
	if res := preflight("/cors-1", "https://xpto.www.bar.com", "GET"); res.header.Get("Access-Control-Allow-Origin") != "https://xpto.www.bar.com" {
		t.Errorf("wildcard origin not allowed: %v", res.header)
	}
	res = preflight("/cors-1", "https://foobar.com", "GET")
	if res.status != http.StatusForbidden || res.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("foreign origin: %d %v", res.status, res.header)
	}
	res = preflight("/cors-2", "https://foobar.com:12345", "PUT")
	if res.header.Get("Access-Control-Allow-Origin") != "https://foobar.com:12345" ||
		res.header.Get("Access-Control-Allow-Methods") != "PUT" || res.header.Get("Access-Control-Allow-Credentials") != "" ||
		res.header.Get("Access-Control-Max-Age") != "5" {
		t.Errorf("wildcard preflight: %v", res.header)
	}
	// Actual requests reach the backend and get the CORS headers.
	res = h.get("example.com", "/cors-1", "Origin: https://www.foo.com")
	if res.status != 200 || res.header.Get("Access-Control-Allow-Origin") != "https://www.foo.com" ||
		res.header.Get("Access-Control-Expose-Headers") == "" {
		t.Errorf("actual request: %d %v", res.status, res.header)
	}
	res = h.get("example.com", "/cors-1", "Origin: https://foobar.com")
	if res.status != 200 || res.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("actual request from a foreign origin: %d %v", res.status, res.header)
	}
	// Explain agrees on the preflight.
	ex := h.explain(h.request("OPTIONS", "example.com", "/cors-1", "Origin: https://www.foo.com", "Access-Control-Request-Method: GET"))
	if ex.Status != 200 {
		t.Errorf("Explain preflight status %d", ex.Status)
	}
}

func TestRequestMirror(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	got := make(chan struct{}, 10)
	shadow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Method+" "+r.Host+" "+r.URL.Path+" "+string(b))
		mu.Unlock()
		got <- struct{}{}
	}))
	defer shadow.Close()
	mirror := func(index int, fraction float64) table.Filter {
		return table.Filter{Type: table.FilterRequestMirror, RequestMirror: &table.Mirror{Index: index, Fraction: fraction}}
	}
	h := serve(t, func(p int32) *table.Table {
		r := rule("r", prefix("/m"), echo("main", 1))
		r.Filters = []table.Filter{mirror(0, 1), mirror(1, 1), mirror(2, 0)}
		r.Mirrors = []*table.Backend{echo("shadow-echo", 1), mapped("shadow-http", 1, shadow.Listener.Addr().String()), echo("never", 1)}
		for i, m := range r.Mirrors {
			m.Name = r.Name + "/filter/" + string(rune('0'+i)) + "/mirror"
		}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", r)))))
	})
	req := h.request("POST", "example.com", "/m/1")
	req.Body = io.NopCloser(strings.NewReader("payload"))
	res, tr := h.traced(req)
	if res.status != 200 || res.echo(t).Service != "main" {
		t.Fatalf("main answer %d %s", res.status, res.body)
	}
	select {
	case <-got:
	case <-time.After(3 * time.Second):
		t.Fatal("mirror never arrived")
	}
	mu.Lock()
	if len(bodies) != 1 || bodies[0] != "POST example.com /m/1 payload" {
		t.Errorf("mirror saw %q", bodies)
	}
	mu.Unlock()
	deadline := time.Now().Add(3 * time.Second)
	for len(h.s.EchoLog("default/shadow-echo")) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if l := h.s.EchoLog("default/shadow-echo"); len(l) != 1 || !strings.Contains(l[0], "Echoing back request made to /m/1 to client") {
		t.Errorf("echo mirror log %q", l)
	}
	if l := h.s.EchoLog("default/never"); len(l) != 0 {
		t.Errorf("a 0%% mirror was sent: %q", l)
	}
	if want := "RequestMirror: default/never:80 not sampled"; !strings.Contains(strings.Join(tr.Filters, "\n"), want) {
		t.Errorf("filters %q", tr.Filters)
	}
}

func TestDirectStatusAndUnsupportedFilters(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		direct := rule("direct", prefix("/direct"))
		direct.DirectStatus, direct.DirectReason = 500, "the rule has no backendRefs"
		b := echo("ext", 1)
		b.Filters = []table.Filter{{Type: table.FilterExtensionRef,
			Unsupported: "extensionRef RateLimit strict is not supported by gwdev"}}
		ext := rule("ext", prefix("/ext"), b)
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", direct, ext)))))
	})
	for _, path := range []string{"/direct", "/ext"} {
		res, tr := h.traced(h.request("GET", "example.com", path))
		if res.status != 500 || tr.Reason == "" || tr.Status != 500 {
			t.Errorf("%s: %d, trace %d %q", path, res.status, tr.Status, tr.Reason)
		}
		if ex := h.explain(h.request("GET", "example.com", path)); ex.Status != 500 || ex.Reason != tr.Reason {
			t.Errorf("%s: Explain %d %q, trace %q", path, ex.Status, ex.Reason, tr.Reason)
		}
	}
}

func TestBackendLevelMirror(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		b := echo("main", 1)
		b.Filters = []table.Filter{{Type: table.FilterRequestMirror, RequestMirror: &table.Mirror{Index: 0, Fraction: 1}}}
		b.Mirrors = []*table.Backend{echo("bshadow", 1)}
		r := rule("r", prefix("/"), b)
		b.Mirrors[0].Name = b.Name + "/filter/0/mirror"
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", r)))))
	})
	if res := h.get("x", "/bm"); res.status != 200 {
		t.Fatal(res.status)
	}
	deadline := time.Now().Add(3 * time.Second)
	for len(h.s.EchoLog("default/bshadow")) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if len(h.s.EchoLog("default/bshadow")) != 1 {
		t.Error("backendRef-level mirror not sent")
	}
}
