package table

import (
	"strings"
	"testing"
)

// TestValidateRuleIR: a mirror or ExternalAuth filter must point into its
// rule's (or backend's) lists, and match types must be ones the data plane
// knows.
func TestValidateRuleIR(t *testing.T) {
	one := 0
	two := 2
	prefix := &HTTPMatch{Path: PathMatch{Type: MatchPathPrefix}}
	echo := &Target{Kind: TargetEcho}
	for _, c := range []struct {
		name string
		rule RouteRule
		want string
	}{
		{"fine", RouteRule{HTTP: prefix, Filters: []Filter{{Type: FilterRequestMirror, RequestMirror: &Mirror{Index: 0, Fraction: 1}}},
			Mirrors: []*Backend{{Name: "m", Target: echo}}}, ""},
		{"mirror out of range", RouteRule{HTTP: prefix, Filters: []Filter{{Type: FilterRequestMirror, RequestMirror: &Mirror{Index: 1}}},
			Mirrors: []*Backend{{Name: "m", Target: echo}}}, "mirror 1 of 1"},
		{"auth out of range", RouteRule{HTTP: prefix, Backends: []*Backend{{Name: "b", Target: echo,
			Filters: []Filter{{Type: FilterExternalAuth, ExternalAuth: &two}}}}}, "ExternalAuth 2 of 0"},
		{"auth without list", RouteRule{HTTP: prefix, Filters: []Filter{{Type: FilterExternalAuth, ExternalAuth: &one}}}, "ExternalAuth 0 of 0"},
		{"unknown path type", RouteRule{HTTP: &HTTPMatch{Path: PathMatch{Type: "Glob"}}}, `path match type "Glob"`},
		{"unknown header type", RouteRule{GRPC: &GRPCMatch{Headers: []ValueMatch{{Name: "X", Type: MatchPathPrefix}}}}, `X match type "PathPrefix"`},
	} {
		r := c.rule
		r.Name = "r"
		tab := &Table{Gateways: []*GatewayTable{{Name: "g", Ports: []*PortTable{{Port: 80, Transport: "TCP",
			Listeners: []*ListenerTable{{Name: "l", Protocol: HTTPProtocolType,
				VirtualHosts: []*VirtualHost{{Name: "vh", Rules: []*RouteRule{&r}}}}}}}}}}
		err := tab.Validate()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
