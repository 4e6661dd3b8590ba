package engine

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestKeepForeignStatus: another controller's route parent entry and a
// domain-prefixed condition on a Gateway and its listener survive gwdev's
// status write; gwdev's own stale entries and spec condition types do not.
func TestKeepForeignStatus(t *testing.T) {
	parent := func(ctrl, gw string) gwv1.RouteParentStatus {
		return gwv1.RouteParentStatus{ControllerName: gwv1.GatewayController(ctrl), ParentRef: gwv1.ParentReference{Name: gwv1.ObjectName(gw)}}
	}
	computed := &gwv1.HTTPRoute{Status: gwv1.HTTPRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{parent(DefaultControllerName, "gw")}}}}
	stored := &gwv1.HTTPRoute{Status: gwv1.HTTPRouteStatus{RouteStatus: gwv1.RouteStatus{Parents: []gwv1.RouteParentStatus{
		parent(DefaultControllerName, "old"), parent("example.com/other", "theirs")}}}}
	KeepForeignStatus(computed, stored, DefaultControllerName)
	if got := computed.Status.Parents; len(got) != 2 || got[0].ParentRef.Name != "gw" || got[1].ParentRef.Name != "theirs" {
		t.Errorf("route parents: %+v", got)
	}

	cond := func(typ string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "R"}
	}
	gw := &gwv1.Gateway{Status: gwv1.GatewayStatus{Conditions: []metav1.Condition{cond("Accepted")},
		Listeners: []gwv1.ListenerStatus{{Name: "http", Conditions: []metav1.Condition{cond("Accepted")}}}}}
	old := &gwv1.Gateway{Status: gwv1.GatewayStatus{Conditions: []metav1.Condition{cond("Accepted"), cond("Programmed"), cond("example.com/Seen")},
		Listeners: []gwv1.ListenerStatus{{Name: "http", Conditions: []metav1.Condition{cond("example.com/Seen"), cond("ResolvedRefs")}}}}}
	KeepForeignStatus(gw, old, DefaultControllerName)
	if cs := gw.Status.Conditions; len(cs) != 2 || cs[1].Type != "example.com/Seen" {
		t.Errorf("gateway conditions: %+v", cs)
	}
	if cs := gw.Status.Listeners[0].Conditions; len(cs) != 2 || cs[1].Type != "example.com/Seen" {
		t.Errorf("listener conditions: %+v", cs)
	}
}
