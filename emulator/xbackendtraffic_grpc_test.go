package emulator

import (
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// TestTrafficPolicySessionPersistenceGRPC: a GRPCRoute rule splits calls
// over Services echo-a and echo-b, both targeted by an
// XBackendTrafficPolicy with header session persistence. A grpc-go client
// that sends back the session metadata it got stays on one Service; one
// that does not is spread over both.
func TestTrafficPolicySessionPersistenceGRPC(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, gatewayGW+`apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: rpc}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: echo-a, port: 80}, {name: echo-b, port: 80}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: sticky}
spec:
  targetRefs:
  - {group: "", kind: Service, name: echo-a}
  - {group: "", kind: Service, name: echo-b}
  sessionPersistence: {type: Header, header: {name: x-session}}
---
apiVersion: v1
kind: Service
metadata: {name: echo-a}
spec:
  ports: [{port: 80, appProtocol: kubernetes.io/h2c}]
---
apiVersion: v1
kind: Service
metadata: {name: echo-b}
spec:
  ports: [{port: 80, appProtocol: kubernetes.io/h2c}]
`, p, engine.Options{})
	})
	echo := grpcSessionCall(t, echoClient(t, h, "grpc.example.com"), "x-session") // xbackend_pods_test.go
	call := func(kv ...string) (string, string) {
		ctx, session := echo(kv...)
		return ctx.GetServiceName(), session
	}
	seen := map[string]bool{}
	session := ""
	for range 20 {
		svc, s := call()
		seen[svc] = true
		if s != "" {
			session = s
		}
	}
	if len(seen) != 2 || session == "" {
		t.Fatalf("without the session metadata: services %v, session %q; want both and an x-session value", seen, session)
	}
	first, _ := call("x-session", session)
	for i := range 10 {
		if svc, _ := call("x-session", session); svc != first {
			t.Fatalf("call %d with the session went to %q, the session is on %q", i, svc, first)
		}
	}
}
