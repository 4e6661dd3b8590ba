package engine

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// strictProfile refuses what gwin only warns about, to test the refusal
// paths of profile.go: listener UnsupportedProtocol and route
// UnsupportedValue, with messages naming the profile.
type strictProfile struct{}

func (strictProfile) Name() string                  { return "strict" }
func (strictProfile) Class() string                 { return "" }
func (strictProfile) Summary() string               { return "refuses more" }
func (strictProfile) Start(*Translation) ProfileRun { return genericRun{} }
func (strictProfile) Features() *FeatureSet {
	return &FeatureSet{
		Protocols:     map[gwv1.ProtocolType]Support{gwv1.TCPProtocolType: Refused},
		TLSModes:      map[gwv1.TLSModeType]Support{gwv1.TLSModePassthrough: Refused},
		PathMatches:   map[gwv1.PathMatchType]Support{gwv1.PathMatchRegularExpression: Refused},
		SupportedText: map[string]string{"protocols": "HTTP only"},
	}
}

func TestProfileRefusals(t *testing.T) {
	profiles["strict"] = strictProfile{}
	t.Cleanup(func() { delete(profiles, "strict") })
	passthrough := gwv1.TLSModePassthrough
	re, prefix := gwv1.PathMatchRegularExpression, gwv1.PathMatchPathPrefix
	reValue, slash := "/a/.*", "/"
	gw := &gwv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw", Namespace: "default", Generation: 1},
		Spec: gwv1.GatewaySpec{GatewayClassName: "c", Listeners: []gwv1.Listener{
			{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80},
			{Name: "tcp", Protocol: gwv1.TCPProtocolType, Port: 5432},
			{Name: "pass", Protocol: gwv1.TLSProtocolType, Port: 443, TLS: &gwv1.ListenerTLSConfig{Mode: &passthrough}},
		}}}
	route := func(name string, typ *gwv1.PathMatchType, value *string) *gwv1.HTTPRoute {
		section := gwv1.SectionName("http")
		return &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Generation: 1},
			Spec: gwv1.HTTPRouteSpec{CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "gw", SectionName: &section}}},
				Rules: []gwv1.HTTPRouteRule{{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: typ, Value: value}}}}}}}
	}
	res := Translate(&Snapshot{Gateways: []*gwv1.Gateway{gw}, HTTPRoutes: []*gwv1.HTTPRoute{route("re", &re, &reValue), route("ok", &prefix, &slash)}},
		Options{Profiles: map[string]string{"c": "strict"}})
	var got []string
	for _, f := range res.Findings {
		if f.Severity == SeverityError {
			got = append(got, f.Object.Name+" "+f.Scope+" "+f.Condition()+" "+f.Reason+": "+f.Message)
		}
	}
	want := []string{
		`gw listener "tcp" Accepted=False UnsupportedProtocol: protocol TCP is not supported by the strict profile (strict supports HTTP only)`,
		`gw listener "pass" Accepted=False UnsupportedProtocol: TLS mode Passthrough is not supported by the strict profile`,
		`re parentRefs[0]: Gateway default/gw sectionName "http" Accepted=False UnsupportedValue: spec.rules[0].matches[0].path: RegularExpression path match is not supported by the strict profile`,
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing finding %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
	for _, g := range got {
		if strings.HasPrefix(g, "ok ") {
			t.Errorf("route ok refused: %s", g)
		}
	}
}
