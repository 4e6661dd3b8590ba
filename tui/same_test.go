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
