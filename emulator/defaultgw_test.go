package emulator

import (
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// defaultGatewayManifests: two default Gateways (a-blue on 127.0.0.1,
// b-green on 127.0.0.2, both defaultScope All) and one that is not
// (c-plain, 127.0.0.3), all on PORT. Route "web" asks for the default
// Gateways; route "opt-out" says None; route "direct" names c-plain.
const defaultGatewayManifests = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: a-blue}
spec:
  gatewayClassName: gwdev
  defaultScope: All
  listeners: [{name: http, protocol: HTTP, port: PORT}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: b-green}
spec:
  gatewayClassName: gwdev
  defaultScope: All
  listeners: [{name: http, protocol: HTTP, port: PORT}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: c-plain}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: PORT}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  useDefaultGateways: All
  hostnames: [web.example.com]
  rules:
  - backendRefs: [{name: web, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: opt-out}
spec:
  useDefaultGateways: None
  parentRefs: [{name: c-plain}]
  hostnames: [opt-out.example.com]
  rules:
  - backendRefs: [{name: opt-out, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: opt-out}
spec:
  ports: [{port: 80}]
`

// TestDefaultGatewaysServeDefaultedRoutes: traffic follows GEP-3793
// attachment. The defaulted route answers on both default Gateways'
// addresses and not on the Gateway without defaultScope; the route that
// opts out answers only where its parentRef points.
func TestDefaultGatewaysServeDefaultedRoutes(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, defaultGatewayManifests, p, engine.Options{})
	})
	get := func(ip, host string) result {
		t.Helper()
		req := h.request(http.MethodGet, host, "/")
		req.URL.Host = net.JoinHostPort(ip, strconv.Itoa(int(h.port)))
		return h.do(req)
	}
	for _, ip := range []string{"127.0.0.1", "127.0.0.2"} {
		res := get(ip, "web.example.com")
		if res.status != http.StatusOK {
			t.Fatalf("default Gateway at %s: status %d, want 200: %s", ip, res.status, res.body)
		}
		if e := res.echo(t); e.Service != "web" {
			t.Errorf("default Gateway at %s: answered by Service %q, want web", ip, e.Service)
		}
		if res := get(ip, "opt-out.example.com"); res.status != http.StatusNotFound {
			t.Errorf("default Gateway at %s: the route with useDefaultGateways None answered %d, want 404", ip, res.status)
		}
	}
	if res := get("127.0.0.3", "web.example.com"); res.status != http.StatusNotFound {
		t.Errorf("Gateway without defaultScope: the defaulted route answered %d, want 404: %s", res.status, res.body)
	}
	res := get("127.0.0.3", "opt-out.example.com")
	if res.status != http.StatusOK || res.echo(t).Service != "opt-out" {
		t.Errorf("the explicit parentRef: status %d: %s", res.status, res.body)
	}
}
