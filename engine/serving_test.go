package engine_test

import (
	"reflect"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestRouteServing checks the per-route record of what the table serves:
// entries in rule and match order with the virtual hosts serving them, the
// places in table order, the dropped rules, and nothing for a route no
// parent accepted.
func TestRouteServing(t *testing.T) {
	const manifests = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - {name: a, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: b, protocol: HTTP, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: gw}]
  hostnames: [a.example.com]
  rules:
  - matches: [{path: {type: RegularExpression, value: "/(?=x)"}}]
    backendRefs: [{name: svc, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /b}}, {path: {type: Exact, value: /}}]
    backendRefs: [{name: svc, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /aaaaaaaaaaaaaaaaaaaaaaaaaaaa}}]
    backendRefs: [{name: svc, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: lost}
spec:
  parentRefs: [{name: nowhere}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec:
  ports: [{name: http, port: 80}]
`
	snap := testkit.Load(t, "routes.yaml", []byte(manifests))
	res := engine.Translate(snap, engine.Options{})
	rs := res.Routes[engine.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: "r"}]
	if rs == nil {
		t.Fatal("no record for the route")
	}
	type entry struct {
		name        string
		rule, match int
		on          []string
	}
	var got []entry
	for _, e := range rs.Entries {
		if e.HTTP == nil || e.HTTP.Name != e.Name {
			t.Errorf("%s: HTTP entry %+v", e.Name, e.HTTP)
		}
		got = append(got, entry{e.Name, e.Rule, e.Match, e.ServedOn})
	}
	a, b := "gateway/default/gw/listener/a/vhost/a.example.com", "gateway/default/gw/listener/b/vhost/a.example.com"
	want := []entry{
		{"httproute/default/r/rule/1/match/0", 1, 0, []string{a, b}},
		{"httproute/default/r/rule/1/match/1", 1, 1, []string{a, b}},
		{"httproute/default/r/rule/2/match/0", 2, 0, []string{a, b}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries\n got %v\nwant %v", got, want)
	}
	wantPlaces := []engine.Place{
		{Listener: "gateway/default/gw/listener/a", Port: 80, VirtualHost: a, Hostname: "a.example.com"},
		{Listener: "gateway/default/gw/listener/b", Port: 8080, VirtualHost: b, Hostname: "a.example.com"},
	}
	if !reflect.DeepEqual(rs.Places, wantPlaces) {
		t.Errorf("places\n got %+v\nwant %+v", rs.Places, wantPlaces)
	}
	if len(rs.Dropped) != 1 || rs.Dropped[0].Rule != 0 || rs.Dropped[0].Why == "" {
		t.Errorf("dropped %+v, want rule 0 with why", rs.Dropped)
	}
	lost := res.Routes[engine.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: "lost"}]
	if lost == nil || len(lost.Entries)+len(lost.Places)+len(lost.Dropped) != 0 {
		t.Errorf("unattached route: %+v", lost)
	}

	// NoServing leaves out Routes and changes nothing else.
	lean := engine.Translate(snap, engine.Options{NoServing: true})
	if lean.Routes != nil {
		t.Errorf("NoServing: Routes = %v, want nil", lean.Routes)
	}
	if !reflect.DeepEqual(lean.Objects, res.Objects) || !reflect.DeepEqual(lean.Table, res.Table) || !reflect.DeepEqual(lean.Findings, res.Findings) {
		t.Error("NoServing changed the objects, the table or the findings")
	}
}
