package emulator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// TestPathNormalizedBeforeMatching: the data plane applies the Gateway's
// path policy before any rule: dot segments reach the /admin rule and the
// backend gets the normalised path; an escaped slash redirects an HTTP
// client (307, query kept) and refuses a gRPC one (it cannot follow); the
// trace and Explain show the normalised path.
func TestPathNormalizedBeforeMatching(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "",
			vhost("*", rule("admin", prefix("/admin"), echo("admin", 1)), rule("public", prefix("/"), echo("public", 1)))))))
	})
	res, tr := h.traced(h.request("GET", "x", "/public/%2e%2e//admin/./users"))
	if e := res.echo(t); res.status != 200 || e.Service != "admin" || e.Path != "/admin/users" {
		t.Errorf("dot segments: %d service %s path %s", res.status, e.Service, e.Path)
	}
	if tr.Path != "/admin/users" || len(tr.Filters) == 0 || !strings.Contains(tr.Filters[0], "path normalised: /public/%2e%2e//admin/./users → /admin/users") {
		t.Errorf("trace path %q filters %q", tr.Path, tr.Filters)
	}
	if ex := h.explain(h.request("GET", "x", "/public/../admin")); ex.Path != "/admin" || !strings.Contains(ex.Rule, "admin") {
		t.Errorf("explain path %q rule %q", ex.Path, ex.Rule)
	}
	res, tr = h.traced(h.request("GET", "x", "/public%2F..%2Fadmin?q=1"))
	if res.status != http.StatusTemporaryRedirect || res.header.Get("Location") != "/admin?q=1" || tr.Backend != "" {
		t.Errorf("escaped slashes: %d Location %q backend %q", res.status, res.header.Get("Location"), tr.Backend)
	}
	req := h.request("POST", "x", "/pkg.Svc%2FMethod")
	req.Header.Set("Content-Type", "application/grpc")
	resp, err := h2cClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Grpc-Status") != "13" {
		t.Errorf("gRPC with an escaped slash: %d grpc-status %q, want 200 with INTERNAL (13)", resp.StatusCode, resp.Header.Get("Grpc-Status"))
	}
}
