package gwin

import (
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

// TestRegistryAnswersGwinPolicies: once the profile is registered, the
// engine's registry answers for gwin's policy kinds from policyKinds.
func TestRegistryAnswersGwinPolicies(t *testing.T) {
	n := 0
	for _, pk := range engine.ProfilePolicyKinds() {
		if pk.Group == Group {
			n++
		}
	}
	if n != len(policyKinds) {
		t.Errorf("engine.ProfilePolicyKinds has %d gwin kinds, want %d", n, len(policyKinds))
	}
	for _, c := range []struct {
		kind, group, target string
		allowed             bool
	}{
		{"GatewayPolicy", gwv1.GroupName, "Gateway", true},
		{"ListenerSetPolicy", gwv1.GroupName, "ListenerSet", true},
		{"RoutePolicy", gwv1.GroupName, "GRPCRoute", true},
		{"RoutePolicy", gwv1.GroupName, "TCPRoute", false},
		{"ServicePolicy", "", "Service", true},
		{"ServicePolicy", gwv1.GroupName, "Service", false},
	} {
		p := engine.PolicyOf(Group, c.kind)
		if p == nil || p.Allows(c.group, c.target) != c.allowed || p.SectionName {
			t.Errorf("PolicyOf(%s, %s) = %+v: Allows(%q, %s) want %v", Group, c.kind, p, c.group, c.target, c.allowed)
		}
	}
	if engine.PolicyOf("example.com", "GatewayPolicy") != nil {
		t.Error("a GatewayPolicy of another group is a policy")
	}
}
