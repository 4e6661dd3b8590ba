package engine_test

import (
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestFindingsTyped: findings carry the condition's type and status as
// fields (Condition() only renders them), a listener's finding points at
// its spec.listeners item, and a GatewayClass gwdev does not manage is
// judged by the status it came with (a cluster's controller wrote it).
func TestFindingsTyped(t *testing.T) {
	lr := testkit.Project(t).LoadBytes("f.yaml", []byte(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.com/other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: gwdev
  listeners:
  - {name: a, protocol: HTTP, port: 80, hostname: x.example.com}
  - {name: b, protocol: HTTPS, port: 80, hostname: x.example.com}
`))
	if len(lr.Problems) > 0 {
		t.Fatal(lr.Problems)
	}
	// Status as a cluster's controller wrote it (check --cluster reads it).
	lr.Snapshot.GatewayClasses[0].Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionFalse,
		Reason: "InvalidParameters", Message: "refused by its controller"}}
	res := engine.Translate(lr.Snapshot, engine.Options{Now: goldenNow, Classes: []string{"gwdev"}})
	var class, listener *engine.Finding
	for i, f := range res.Findings {
		switch {
		case f.Object.Kind == "GatewayClass" && f.Object.Name == "other":
			class = &res.Findings[i]
		case f.Object.Kind == "Gateway" && f.Field == "spec.listeners[1]" && listener == nil:
			listener = &res.Findings[i]
		}
	}
	if class == nil || class.Type != "Accepted" || class.Status != metav1.ConditionFalse || class.Condition() != "Accepted=False" ||
		class.Severity != engine.SeverityError {
		t.Errorf("unmanaged class finding %+v", class)
	}
	if listener == nil || listener.Type == "" || listener.Source.Line != 13 ||
		engine.ConditionSeverity(listener.Type, listener.Status) != listener.Severity {
		t.Errorf("listener finding %+v", listener)
	}
	if !engine.ConditionIsProblem("Conflicted", "True") || engine.ConditionIsProblem("Conflicted", "False") ||
		!engine.ConditionIsProblem("Accepted", "Unknown") || !engine.NegativePolarity("OverlappingTLSConfig") {
		t.Error("polarity rule")
	}
}

// TestFindingsNameConflictingListener: a listener's findings carry its name,
// and Conflicted=True names the listener it conflicts with as the message
// does, so nobody cuts the message to learn it.
func TestFindingsNameConflictingListener(t *testing.T) {
	res := translateYAML(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: gwdev
  listeners:
  - {name: a, protocol: HTTP, port: 80, hostname: x.example.com}
  - {name: b, protocol: HTTPS, port: 80, hostname: x.example.com, tls: {certificateRefs: [{name: cert}]}}
  - {name: c, protocol: HTTP, port: 8080}
  - {name: d, protocol: TCP, port: 8080}
`, engine.Options{})
	want := map[string]string{"a": `listener "b" (HTTPS)`, "b": `listener "a" (HTTP)`, "c": `listener "d" (TCP)`, "d": `listener "c" (HTTP)`}
	got := map[string]string{}
	for _, f := range res.Findings {
		if f.Type != "Conflicted" {
			if f.ConflictsWith != "" {
				t.Errorf("%s %s: ConflictsWith %q on a %s finding", f.Object, f.Listener, f.ConflictsWith, f.Type)
			}
			continue
		}
		if f.Listener == "" || f.Scope != `listener "`+f.Listener+`"` {
			t.Errorf("finding %q: Listener %q", f.Scope, f.Listener)
		}
		got[f.Listener] = f.ConflictsWith
		if !strings.HasSuffix(f.Message, " "+f.ConflictsWith) {
			t.Errorf("listener %s: message %q does not end with ConflictsWith %q", f.Listener, f.Message, f.ConflictsWith)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("ConflictsWith = %v, want %v", got, want)
	}
}
