package table

import (
	"strings"
	"testing"
)

// TestValidateTracing: a Gateway's Tracing has fractions in range, a known
// protocol, an address or a reason not to export, and one source per
// attribute.
func TestValidateTracing(t *testing.T) {
	all := Fraction{Numerator: 1, Denominator: 1}
	ok := func() *Tracing {
		return &Tracing{Policy: "ns/p", Sampling: all, ParentSampling: all,
			Exporter:   TracingExporter{Protocol: OTLPGRPC, Target: &Target{Kind: TargetMapped, Addresses: []string{"127.0.0.1:4317"}}},
			Attributes: []TracingAttribute{{Name: "env", Literal: "dev"}}}
	}
	for _, c := range []struct {
		name string
		mod  func(*Tracing)
		want string
	}{
		{"fine", func(*Tracing) {}, ""},
		{"not exported, said why", func(tr *Tracing) { tr.Exporter.Target, tr.Exporter.NotExported = nil, "no address" }, ""},
		{"rate over 1", func(tr *Tracing) { tr.Sampling = Fraction{Numerator: 2, Denominator: 1} }, "2/1 out of range"},
		{"zero denominator", func(tr *Tracing) { tr.ParentSampling = Fraction{} }, "0/0 out of range"},
		{"protocol", func(tr *Tracing) { tr.Exporter.Protocol = "zipkin" }, `protocol "zipkin"`},
		{"no address", func(tr *Tracing) { tr.Exporter.Target = nil }, "without an address or a reason"},
		{"two sources", func(tr *Tracing) { tr.Attributes[0].Header = "X-A" }, `attribute "env"`},
	} {
		tr := ok()
		c.mod(tr)
		tab := &Table{Gateways: []*GatewayTable{{Name: "g", Tracing: tr}}}
		err := tab.Validate()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
