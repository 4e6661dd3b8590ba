package watch

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gwdev/gwdev/engine"
)

func TestLoadImplementationPolicies(t *testing.T) {
	const file = `apiVersion: gwin.yandex.cloud/v1
kind: RoutePolicy
metadata: {name: web}
spec:
  selector:
    matchLabels: {tier: web}
    matchExpressions: [{key: env, operator: In, values: [prod]}]
  policy:
    rules: {timeout: 30s}
---
apiVersion: gwin.yandex.cloud/v1
kind: GatewayPolicy
metadata: {name: gw, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: edge}]
  policy: {subnets: [a, b]}
status:
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: gwin.yandex.cloud/v1
kind: YCCertificate
metadata: {name: cert}
spec: {certificateRef: {certificateID: abc}}
`
	r := newTestLoader(t).LoadBytes("p.yaml", []byte(file))
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	ps := r.Snapshot.ImplementationPolicies
	if len(ps) != 2 || ps[0].Kind != "GatewayPolicy" || ps[1].Kind != "RoutePolicy" {
		t.Fatalf("policies %+v", ps)
	}
	gp := ps[0]
	if gp.APIVersion != "gwin.yandex.cloud/v1" || gp.Namespace != "infra" || gp.Status != nil {
		t.Errorf("GatewayPolicy %+v (status must be dropped: the engine writes it)", gp)
	}
	if d := cmp.Diff(map[string]any{"subnets": []any{"a", "b"}}, gp.Spec["policy"]); d != "" {
		t.Errorf("spec.policy (-want +got):\n%s", d)
	}
	if src := r.Snapshot.SourceOf(engine.ObjectKey{Kind: "RoutePolicy", Namespace: "default", Name: "web"}); src.File != "p.yaml" || src.Line != 1 {
		t.Errorf("RoutePolicy source %+v", src)
	}
	if len(r.Skipped) != 1 || r.Skipped[0].Kind != "YCCertificate" {
		t.Errorf("skipped %v: other gwin kinds are not gwdev's", r.Skipped)
	}
	// Merging per-file results keeps the policies and finds duplicates.
	m := Merge(r, newTestLoader(t).LoadBytes("q.yaml", []byte(file)))
	if len(m.Snapshot.ImplementationPolicies) != 2 || len(m.Problems) != 2 {
		t.Errorf("merge: %d policies, problems %v", len(m.Snapshot.ImplementationPolicies), m.Problems)
	}
}

func TestImplementationPolicyStructure(t *testing.T) {
	const file = `apiVersion: gwin.yandex.cloud/v1
kind: RoutePolicy
metadata: {name: bad}
spec:
  targetRefs:
  - {kind: Gateway, name: gw}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, namespace: other}
  - {kind: HTTPRoute}
  - {kind: HTTPRoute, name: r, port: 80}
  selector: {matchLabels: {a: b}, matchExpressions: [{key: x, operator: Maybe}], other: 1}
  policy: [rules]
  extra: true
---
apiVersion: gwin.yandex.cloud/v1
kind: ServicePolicy
metadata: {name: nospec}
---
apiVersion: gwin.yandex.cloud/v1
kind: ListenerSetPolicy
metadata: {name: sel}
spec:
  targetRefs: {kind: ListenerSet, name: a}
  selector: {matchExpressions: [{key: x, operator: Maybe}]}
---
apiVersion: gwin.yandex.cloud/v2
kind: GatewayPolicy
metadata: {name: future}
spec: {}
`
	r := newTestLoader(t).LoadBytes("p.yaml", []byte(file))
	want := []string{
		`p.yaml:6:5: RoutePolicy/default/bad: spec.targetRefs[0]: Unsupported value: "Gateway": supported values: "gateway.networking.k8s.io/HTTPRoute", "gateway.networking.k8s.io/GRPCRoute", "gateway.networking.k8s.io/TLSRoute"`,
		`p.yaml:7:66: RoutePolicy/default/bad: spec.targetRefs[1].namespace: Forbidden: a policy applies only to objects in its own namespace`,
		`p.yaml:8:5: RoutePolicy/default/bad: spec.targetRefs[2].name: Required value`,
		`p.yaml:9:32: RoutePolicy/default/bad: unknown field "spec.targetRefs[3].port"`,
		`p.yaml:10:82: RoutePolicy/default/bad: unknown field "spec.selector.other"`,
		`p.yaml:11:3: RoutePolicy/default/bad: spec.policy: Invalid value: ["rules"]: must be an object`,
		`p.yaml:12:3: RoutePolicy/default/bad: unknown field "spec.extra"`,
		`p.yaml:14:1: ServicePolicy/default/nospec: spec: Required value`,
		`p.yaml:22:3: ListenerSetPolicy/default/sel: spec.targetRefs: Invalid value: {"kind":"ListenerSet","name":"a"}: must be a list`,
		`p.yaml:23:42: ListenerSetPolicy/default/sel: spec.selector.matchExpressions[0].operator: Invalid value: "Maybe": not a valid selector operator`,
		`p.yaml:25:1: GatewayPolicy/future: apiVersion: no kind "GatewayPolicy" is registered for version "gwin.yandex.cloud/v2"; gwdev knows gwin.yandex.cloud/v1`,
	}
	if d := cmp.Diff(want, problemStrings("", r.Problems)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if n := len(r.Snapshot.ImplementationPolicies); n != 0 {
		t.Errorf("%d invalid policies loaded", n)
	}
}

func TestGwdevYAMLIsNotAManifest(t *testing.T) {
	_, r := loadTree(t, map[string]string{
		"gwdev.yaml":    "backends: {api:80: localhost:3000}\nprofiles: {cloud: gwin}\n",
		"sub/gwdev.yml": "profiles: {}\n",
	})
	if len(r.Problems) > 0 || r.Files != 0 {
		t.Errorf("gwdev.yaml loaded as a manifest: %d files, %v", r.Files, r.Problems)
	}
	if IsManifestName("gwdev.yaml") {
		t.Error("IsManifestName(gwdev.yaml)")
	}
}
