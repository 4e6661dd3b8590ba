package tui

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// TestSameObjectExperimentalBackends: an XBackendTrafficPolicy or an
// XBackend whose status differs only in lastTransitionTime (every
// translation writes a fresh one) is unchanged; another reason is a change.
func TestSameObjectExperimentalBackends(t *testing.T) {
	cond := func(at time.Time, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at)}}
	}
	t0, t1 := time.Unix(1, 0), time.Unix(2, 0)
	policy := func(at time.Time, reason string) *gwxv1a1.XBackendTrafficPolicy {
		return &gwxv1a1.XBackendTrafficPolicy{Status: gwv1.PolicyStatus{Ancestors: []gwv1.PolicyAncestorStatus{{ControllerName: "c", Conditions: cond(at, reason)}}}}
	}
	backend := func(at time.Time, reason string) *gwxv1a1.XBackend {
		return &gwxv1a1.XBackend{Status: gwxv1a1.BackendStatus{Ancestors: []gwxv1a1.BackendAncestorStatus{{ControllerName: "c", Conditions: cond(at, reason)}}}}
	}
	if !sameObject(policy(t0, "Accepted"), policy(t1, "Accepted")) || !sameObject(backend(t0, "Accepted"), backend(t1, "Accepted")) {
		t.Error("a new lastTransitionTime counts as a change")
	}
	if sameObject(policy(t0, "Accepted"), policy(t0, "Conflicted")) || sameObject(backend(t0, "Accepted"), backend(t0, "Invalid")) {
		t.Error("a new reason does not count as a change")
	}
}

// TestSameObjectAnyKind: the comparison knows no kind, so a kind added to
// the registry (XMesh here, which the per-kind comparison it replaced
// forgot) and nested conditions (a Gateway's listeners) ignore
// lastTransitionTime too, while a spec or label change still counts.
func TestSameObjectAnyKind(t *testing.T) {
	cond := func(at time.Time, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: metav1.NewTime(at)}}
	}
	t0, t1 := time.Unix(1, 0), time.Unix(2, 0)
	mesh := func(at time.Time, reason, controller string) *gwxv1a1.XMesh {
		return &gwxv1a1.XMesh{Spec: gwxv1a1.MeshSpec{ControllerName: gwv1.GatewayController(controller)},
			Status: gwxv1a1.MeshStatus{Conditions: cond(at, reason)}}
	}
	gw := func(at time.Time, reason string, labels map[string]string) *gwv1.Gateway {
		g := &gwv1.Gateway{Status: gwv1.GatewayStatus{Listeners: []gwv1.ListenerStatus{{Name: "http", Conditions: cond(at, reason)}}}}
		g.Labels = labels
		return g
	}
	if !sameObject(mesh(t0, "Accepted", "c"), mesh(t1, "Accepted", "c")) || !sameObject(gw(t0, "Accepted", nil), gw(t1, "Accepted", nil)) {
		t.Error("a new lastTransitionTime counts as a change")
	}
	if sameObject(mesh(t0, "Accepted", "c"), mesh(t0, "Accepted", "d")) || sameObject(mesh(t0, "Accepted", "c"), mesh(t0, "Invalid", "c")) ||
		sameObject(gw(t0, "Accepted", nil), gw(t0, "Accepted", map[string]string{"a": "b"})) ||
		sameObject(gw(t0, "Accepted", nil), gw(t0, "Programmed", nil)) {
		t.Error("a spec, status or label change does not count as a change")
	}
}
