package emulator

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// TestV17RuleSettingsEndToEnd loads v1.7.0-shaped manifests, translates
// them and serves the table on a real listener: retry.attempts 0 makes one
// attempt ("An explicit zero value MUST disable retries"), a cookie
// session's Set-Cookie carries cookie.name and cookie.path, and a header
// session pins requests by header.name.
func TestV17RuleSettingsEndToEnd(t *testing.T) {
	var calls atomic.Int32
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	a, b := countingBackend(t, "a"), countingBackend(t, "b")
	m := gatewayGW + `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /noretry}}]
    retry: {codes: [503], attempts: 0}
    backendRefs: [{name: failing, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cart}}]
    sessionPersistence: {type: Cookie, cookie: {name: cart, path: /cart}}
    backendRefs: [{name: pool, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /api}}]
    sessionPersistence: {type: Header, header: {name: X-Api-Session}}
    backendRefs: [{name: pool, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: failing}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: pool}
spec:
  ports: [{port: 80}]
`
	opts := engine.Options{BackendMappings: map[string]string{
		"default/failing:80": failing.Listener.Addr().String(),
	}}
	h := serve(t, func(p int32) *table.Table {
		tab := gwinTable(t, m, p, opts)
		// pool has two endpoints: the session must pin one of them.
		for _, b2 := range tableBackends(tab, "default", "pool") {
			b2.Target = &table.Target{Kind: table.TargetMapped, Addresses: []string{a.Listener.Addr().String(), b.Listener.Addr().String()}, Why: "two endpoints"}
		}
		return tab
	})
	res, tr := h.traced(h.request("GET", "x", "/noretry"))
	if res.status != http.StatusServiceUnavailable || tr.Attempts != 1 || calls.Load() != 1 {
		t.Errorf("attempts 0: %d after %d attempts, %d backend calls", res.status, tr.Attempts, calls.Load())
	}

	res = h.get("x", "/cart")
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: res.header}).Cookies() {
		if c.Name == "cart" {
			cookie = c
		}
	}
	if cookie == nil || cookie.Path != "/cart" {
		t.Fatalf("cookie session: Set-Cookie %q", res.header.Values("Set-Cookie"))
	}
	first := res.header.Get("X-Served-By")
	for range 6 {
		if got := h.get("x", "/cart", "Cookie: cart="+cookie.Value).header.Get("X-Served-By"); got != first {
			t.Fatalf("cookie session not pinned: %s then %s", first, got)
		}
	}

	res = h.get("x", "/api")
	session := res.header.Get("X-Api-Session")
	if session == "" {
		t.Fatalf("header session: no X-Api-Session in %v", res.header)
	}
	first = res.header.Get("X-Served-By")
	for range 6 {
		if got := h.get("x", "/api", "X-Api-Session: "+session).header.Get("X-Served-By"); got != first {
			t.Fatalf("header session not pinned: %s then %s", first, got)
		}
	}
}

// tableBackends lists the backends of every rule that send to Service
// ns/name.
func tableBackends(tab *table.Table, ns, name string) []*table.Backend {
	var out []*table.Backend
	for _, g := range tab.Gateways {
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				for _, vh := range l.VirtualHosts {
					for _, r := range vh.Rules {
						for _, b := range r.Backends {
							if b.Service.Namespace == ns && b.Service.Name == name && !strings.HasPrefix(b.Service.Kind, "X") {
								out = append(out, b)
							}
						}
					}
				}
			}
		}
	}
	return out
}
