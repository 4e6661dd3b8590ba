package engine_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// manyRoutesYAML is two Gateways and n HTTPRoutes on the first, each with
// its own hostname app-<i>.example.com and two rules.
func manyRoutesYAML(n int) []byte {
	var b strings.Builder
	b.WriteString(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw2}
spec:
  gatewayClassName: gwdev
  listeners:
  - {name: http, protocol: HTTP, port: 8080}
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec:
  ports: [{name: http, port: 80}]
`)
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app-%03d, creationTimestamp: "2025-01-01T00:00:%02dZ"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [app-%d.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: svc, port: 80}]
  - backendRefs: [{name: svc, port: 80}]
`, i, i%60, i)
	}
	return []byte(b.String())
}

// TestPatchedTableRebuildsOnlyChangedHosts: on a Gateway with 120 routes of
// their own hostnames, each edit of one route rebuilds exactly the virtual
// hosts it names (before or after), keeps every other one and the other
// Gateway's table by pointer, and gives the same result as a full
// translation; an edit of anything but a route builds the table in full.
func TestPatchedTableRebuildsOnlyChangedHosts(t *testing.T) {
	snap := testkit.Load(t, "routes.yaml", manyRoutesYAML(120))
	e := newEditor(snap, nil)
	opts := engine.Options{Now: goldenNow}
	prev, finish := engine.TranslateTableFirst(nil, e.snapshot(), opts)
	finish()
	full := engine.TranslateNext(nil, e.snapshot(), opts)
	compareResults(t, "start", full, prev)
	route := func(name string) int {
		for i, o := range e.objs {
			if _, ok := o.(*gwv1.HTTPRoute); ok && o.GetName() == name {
				return i
			}
		}
		t.Fatalf("no route %s", name)
		return -1
	}
	vhost := func(r *engine.Result, host string) *engine.VirtualHost {
		for _, vh := range virtualHosts(r.Table) {
			if vh.Hostname == host {
				return vh
			}
		}
		return nil
	}
	original := vhost(prev, "app-3.example.com")
	steps := []struct {
		what    string
		edit    func()
		patched bool
		rebuilt int // virtual hosts
		check   func(r *engine.Result) string
	}{
		{"a route changes its hostname", func() {
			r := e.objs[route("app-007")].(*gwv1.HTTPRoute).DeepCopy()
			r.Spec.Hostnames = []gwv1.Hostname{"app-7b.example.com"}
			e.objs[route("app-007")] = r
		}, true, 2, func(r *engine.Result) string {
			if vhost(r, "app-7.example.com") != nil || vhost(r, "app-7b.example.com") == nil {
				return "app-7 still served, or app-7b not"
			}
			return ""
		}},
		{"an older route takes app-3's hostname and paths", func() {
			r := e.objs[route("app-003")].(*gwv1.HTTPRoute).DeepCopy()
			r.Name, r.CreationTimestamp = "older", metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
			e.objs = append(e.objs, r)
		}, true, 1, func(r *engine.Result) string {
			vh := vhost(r, "app-3.example.com")
			if len(vh.Rules) != 4 || vh.Rules[0].Route.Name != "older" || vh.Rules[1].Route.Name != "app-003" {
				return fmt.Sprintf("app-3's rules are not the older route's first: %v", ruleRoutes(vh))
			}
			return ""
		}},
		{"the older route is removed", func() {
			i := route("older")
			e.objs = append(e.objs[:i:i], e.objs[i+1:]...)
		}, true, 1, func(r *engine.Result) string {
			if vh := vhost(r, "app-3.example.com"); vh == original || !reflect.DeepEqual(vh, original) {
				return "app-3 is not rebuilt as it was"
			}
			return ""
		}},
		{"a route moves to the other Gateway", func() {
			r := e.objs[route("app-005")].(*gwv1.HTTPRoute).DeepCopy()
			r.Spec.ParentRefs[0].Name = "gw2"
			e.objs[route("app-005")] = r
		}, true, 2, func(r *engine.Result) string {
			if n := len(r.Table.Gateways[1].Ports[0].Listeners[0].VirtualHosts); n != 1 {
				return fmt.Sprintf("gw2 has %d virtual hosts, want 1", n)
			}
			return ""
		}},
		{"a Service changes", func() {
			for i, o := range e.objs {
				if s, ok := o.(*engine.Service); ok {
					s = s.DeepCopy()
					s.SetLabels(map[string]string{"edit": "1"})
					e.objs[i] = s
				}
			}
		}, false, 0, nil},
	}
	for i, s := range steps {
		s.edit()
		opts.Now = metav1.NewTime(goldenNow.Add(time.Duration(i+1) * time.Second))
		next, finish := engine.TranslateTableFirst(prev, e.snapshot(), opts)
		finish()
		full = engine.TranslateNext(full, e.snapshot(), opts)
		compareResults(t, s.what, full, next)
		if next.Reuse.Patched != s.patched || next.Reuse.VirtualHosts != s.rebuilt {
			t.Fatalf("%s: reuse %+v, want patched %v with %d virtual hosts rebuilt", s.what, next.Reuse, s.patched, s.rebuilt)
		}
		if s.patched {
			all := virtualHosts(next.Table)
			if kept := checkPatched(t, s.what, prev, next); kept < len(all)-s.rebuilt {
				t.Fatalf("%s: kept %d of %d virtual hosts", s.what, kept, len(all))
			}
			if gw2 := prev.Table.Gateways[1]; s.what != "a route moves to the other Gateway" && next.Table.Gateways[1] != gw2 {
				t.Fatalf("%s: the other Gateway's table was copied", s.what)
			}
		}
		if s.check != nil {
			if why := s.check(next); why != "" {
				t.Fatalf("%s: %s", s.what, why)
			}
		}
		prev = next
	}
}

// ruleRoutes lists the routes of a virtual host's rules, in order.
func ruleRoutes(vh *engine.VirtualHost) []string {
	var out []string
	for _, r := range vh.Rules {
		out = append(out, r.Route.Name)
	}
	return out
}

// TestPatchedResultCopiesEveryField: a patched translation's finish copies
// the full translation's Result field by field (all but Table, which the
// data plane reads meanwhile); a new field must be added there
// (engine/translate.go patchedResult) and counted here.
func TestPatchedResultCopiesEveryField(t *testing.T) {
	if n := reflect.TypeFor[engine.Result]().NumField(); n != 9 {
		t.Fatalf("Result has %d fields; patchedResult copies 8 besides Table", n)
	}
}
