package emulator

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// backendFilterManifests: one HTTPRoute whose rules each have a single
// backendRef carrying a filter of one type (the route level has none).
const backendFilterManifests = gatewayGW + `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: gw}]
  hostnames: [app.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /response}}]
    backendRefs:
    - name: app
      port: 80
      filters:
      - type: ResponseHeaderModifier
        responseHeaderModifier: {set: [{name: X-Backend-Level, value: "yes"}]}
  - matches: [{path: {type: PathPrefix, value: /rewrite}}]
    backendRefs:
    - name: app
      port: 80
      filters:
      - type: URLRewrite
        urlRewrite:
          hostname: rewritten.example.com
          path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}
  - matches: [{path: {type: PathPrefix, value: /redirect}}]
    backendRefs:
    - name: app
      port: 80
      filters:
      - type: RequestRedirect
        requestRedirect: {hostname: elsewhere.example.com, statusCode: 301}
  - matches: [{path: {type: PathPrefix, value: /cors}}]
    backendRefs:
    - name: app
      port: 80
      filters:
      - type: CORS
        cors: {allowOrigins: ["https://web.example.com"], allowMethods: [GET], maxAge: 60}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  ports: [{port: 80}]
`

// TestBackendLevelFiltersEndToEnd: filters on a backendRef (support is
// implementation-specific) run when that backend is chosen, for every
// filter type the data plane emulates: the field guard names this test
// for them.
func TestBackendLevelFiltersEndToEnd(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, backendFilterManifests, p, engine.Options{})
	})
	if res := h.get("app.example.com", "/response"); res.status != http.StatusOK || res.header.Get("X-Backend-Level") != "yes" {
		t.Errorf("ResponseHeaderModifier: status %d, X-Backend-Level %q", res.status, res.header.Get("X-Backend-Level"))
	}
	res := h.get("app.example.com", "/rewrite/x")
	if e := res.echo(t); e.Path != "/new/x" || e.Host != "rewritten.example.com" {
		t.Errorf("URLRewrite: the backend saw host %q path %q, want rewritten.example.com /new/x", e.Host, e.Path)
	}
	// No port in the filter: the listener's port (spec: "derived from the
	// Gateway Listener port").
	res = h.get("app.example.com", "/redirect/y")
	if want := "http://elsewhere.example.com:" + strconv.Itoa(int(h.port)) + "/redirect/y"; res.status != http.StatusMovedPermanently || res.header.Get("Location") != want {
		t.Errorf("RequestRedirect: status %d, Location %q", res.status, res.header.Get("Location"))
	}
	pre := h.do(h.request(http.MethodOptions, "app.example.com", "/cors",
		"Origin: https://web.example.com", "Access-Control-Request-Method: GET"))
	if got := pre.header.Get("Access-Control-Allow-Origin"); got != "https://web.example.com" {
		t.Errorf("CORS preflight: status %d, Access-Control-Allow-Origin %q", pre.status, got)
	}
	if got := h.get("app.example.com", "/cors", "Origin: https://web.example.com").header.Get("Access-Control-Allow-Origin"); got != "https://web.example.com" {
		t.Errorf("CORS: Access-Control-Allow-Origin %q on the actual request", got)
	}
}
