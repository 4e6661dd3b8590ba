package engine

import (
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// TestValidateExternalAuth: the table refuses ExternalAuth entries the data
// plane could not enforce.
func TestValidateExternalAuth(t *testing.T) {
	backend := &Backend{Name: "b", Target: &Target{Kind: TargetEcho}}
	for _, c := range []struct {
		a    *ExternalAuth
		want string
	}{
		{&ExternalAuth{Name: "a", Protocol: "HTTP", Backend: backend}, ""},
		{&ExternalAuth{Name: "a", Protocol: "HTTP", Backend: &Backend{Name: "b", Invalid: "not found"}}, ""},
		{&ExternalAuth{Name: "a", Protocol: "HTTP"}, "no backend target"},
		{&ExternalAuth{Name: "a", Protocol: "SOAP", Backend: backend}, `protocol "SOAP"`},
		{nil, "without a name"},
	} {
		rule := &RouteRule{Name: "r", HTTP: &table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix}},
			ExternalAuth: []*ExternalAuth{c.a}}
		tab := &Table{Gateways: []*GatewayTable{{Name: "g", Ports: []*PortTable{{Port: 80, Transport: "TCP",
			Listeners: []*ListenerTable{{Name: "l", Protocol: table.HTTPProtocolType,
				VirtualHosts: []*VirtualHost{{Name: "vh", Rules: []*RouteRule{rule}}}}}}}}}}
		err := tab.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.a, err, c.want)
		}
	}
}
