package conformance

import (
	"context"
	"embed"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/retry"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/http"
	"sigs.k8s.io/gateway-api/conformance/utils/kubernetes"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// gwdevManifests are the manifests of gwdev's own conformance tests
// (testdata), applied by the suite next to upstream's.
//
//go:embed testdata/*.yaml
var gwdevManifests embed.FS

// gwdevFeatureTests names, for every claimed feature no upstream
// conformance test lists in its Features, the gwdev test that covers it
// (TestClaimedFeaturesCovered).
var gwdevFeatureTests = map[features.FeatureName]string{
	features.SupportGatewayListenerFilters:           GwdevGatewayListenerFilters.ShortName,
	features.SupportGatewayAddressRoutability:        GwdevGatewayAddressRoutability.ShortName,
	features.SupportGatewayAddressRoutabilityCluster: GwdevGatewayAddressRoutability.ShortName,
}

// GwdevGatewayListenerFilters checks a listener's pre-routing filters
// (GEP-5224, spec.listeners[].filters.requests) as the API describes them:
// they run on every request the listener accepts, before a route is
// selected, so they act on requests no route matches; a listener without
// filters is not affected. The filter is ExternalAuth over HTTP
// (HTTPExternalAuthFilter): the authorization server gets the client's
// path, with http.path prepended when set, and any answer but 200 is an
// authorization failure, which the client gets instead of the route's
// answer. The authorization server is echo-basic (infra-backend-v2),
// which answers /status/NNN with NNN, any other /status/ path with 400
// and every other path with 200.
var GwdevGatewayListenerFilters = suite.ConformanceTest{
	ShortName:   "GwdevGatewayListenerFilters",
	Description: "A listener's ExternalAuth pre-routing filter runs before route selection, with its http.path prefix, on that listener only",
	Manifests:   []string{"testdata/gwdev-listener-filters.yaml"},
	Features:    []features.FeatureName{features.SupportGateway, features.SupportHTTPRoute, features.SupportGatewayListenerFilters},
	Test: func(t *testing.T, s *suite.ConformanceTestSuite) {
		ns := "gateway-conformance-infra"
		gwNN := types.NamespacedName{Name: "gwdev-listener-filters", Namespace: ns}
		routeNN := types.NamespacedName{Name: "gwdev-listener-filters", Namespace: ns}
		gwAddr := kubernetes.GatewayAndHTTPRoutesMustBeAccepted(t, s.Client, s.TimeoutConfig, s.ControllerName,
			kubernetes.NewGatewayRef(gwNN, "filtered", "prefixed", "open"), routeNN)
		for _, listener := range []string{"filtered", "prefixed", "open"} {
			kubernetes.GatewayListenerMustHaveConditions(t, s.Client, s.TimeoutConfig, gwNN, listener, []metav1.Condition{
				{Type: string(gwv1.ListenerConditionAccepted), Status: metav1.ConditionTrue, Reason: string(gwv1.ListenerReasonAccepted)},
				{Type: string(gwv1.ListenerConditionResolvedRefs), Status: metav1.ConditionTrue, Reason: string(gwv1.ListenerReasonResolvedRefs)},
			})
		}
		routed := func(host, path string) http.ExpectedResponse {
			return http.ExpectedResponse{
				Request: http.Request{Host: host, Path: path},
				Backend: "infra-backend-v1", Namespace: ns,
			}
		}
		answered := func(host, path string, code int) http.ExpectedResponse {
			return http.ExpectedResponse{Request: http.Request{Host: host, Path: path}, Response: http.Response{StatusCode: code}}
		}
		cases := []struct {
			name string
			exp  http.ExpectedResponse
		}{
			{"filtered: authorized (200), then routed to the route's backend", routed("filtered.example.com", "/echo")},
			{"filtered: a refusal (403) is the client's answer", answered("filtered.example.com", "/status/403", 403)},
			{"filtered: the filter runs before route selection: a path no route matches gets the auth server's 401, not 404", answered("filtered.example.com", "/status/401", 401)},
			{"prefixed: http.path is prepended: /418 is checked as /status/418", answered("prefixed.example.com", "/418", 418)},
			// echo-basic answers /status/ and a non-numeric rest with 400.
			{"prefixed: /echo is checked as /status/echo, which the auth server refuses with 400, though the route serves /echo", answered("prefixed.example.com", "/echo", 400)},
			{"open: no filter, so a path no route matches is 404", answered("open.example.com", "/status/403", 404)},
			{"open: routed", routed("open.example.com", "/echo")},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				http.MakeRequestAndExpectEventuallyConsistentResponse(t, s.RoundTripper, s.TimeoutConfig, gwAddr, tc.exp)
			})
		}
	},
}

// GwdevGatewayAddressRoutability checks spec.addresses[].routability
// (GEP-5093) as the API describes it: a Gateway asking for an IPAddress of
// routability Cluster (an address reachable inside the cluster, which for
// gwdev is this machine) gets one and status.addresses reports its
// routability as Cluster; one asking for the default routability gets an
// address whose routability is the implementation's default (unset); an
// implementation-specific (domain-prefixed) value the implementation does
// not define cannot be honoured, so that Gateway is not Accepted, with the
// reason for an address it cannot support (UnsupportedAddress), and gets
// no address. Both served Gateways route requests.
var GwdevGatewayAddressRoutability = suite.ConformanceTest{
	ShortName:   "GwdevGatewayAddressRoutability",
	Description: "spec.addresses[].routability: Cluster is assigned and reported, the default is reported unset, an unknown implementation-specific value is refused",
	Manifests:   []string{"testdata/gwdev-address-routability.yaml"},
	Features: []features.FeatureName{features.SupportGateway, features.SupportHTTPRoute,
		features.SupportGatewayAddressRoutability, features.SupportGatewayAddressRoutabilityCluster},
	Test: func(t *testing.T, s *suite.ConformanceTestSuite) {
		ns := "gateway-conformance-infra"
		// The manifest's Gateways have no spec.addresses (upstream's
		// applier would drop them); they are asked for here, as a user
		// editing the Gateway would.
		for name, r := range map[string]gwv1.GatewayAddressRoutabilityType{
			"gwdev-routability-cluster": gwv1.GatewayAddressRoutabilityCluster,
			"gwdev-routability-default": gwv1.GatewayAddressRoutabilityDefault,
			"gwdev-routability-unknown": "example.com/private",
		} {
			setAddress(t, s, types.NamespacedName{Name: name, Namespace: ns}, gwv1.GatewaySpecAddress{Type: new(gwv1.IPAddressType), Routability: r})
		}
		for _, tc := range []struct {
			gateway string
			want    *gwv1.GatewayAddressRoutabilityType
		}{
			{"gwdev-routability-cluster", new(gwv1.GatewayAddressRoutabilityCluster)},
			{"gwdev-routability-default", nil},
		} {
			t.Run(tc.gateway, func(t *testing.T) {
				gwNN := types.NamespacedName{Name: tc.gateway, Namespace: ns}
				gwAddr := kubernetes.GatewayAndHTTPRoutesMustBeAccepted(t, s.Client, s.TimeoutConfig, s.ControllerName,
					kubernetes.NewGatewayRef(gwNN), types.NamespacedName{Name: tc.gateway, Namespace: ns})
				gw := &gwv1.Gateway{}
				if err := s.Client.Get(context.Background(), gwNN, gw); err != nil {
					t.Fatal(err)
				}
				if len(gw.Status.Addresses) != 1 {
					t.Fatalf("status.addresses = %+v, want one IPAddress", gw.Status.Addresses)
				}
				a := gw.Status.Addresses[0]
				if a.Type == nil || *a.Type != gwv1.IPAddressType {
					t.Errorf("status.addresses[0].type = %v, want IPAddress", a.Type)
				}
				if got := a.Routability; (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
					t.Errorf("status.addresses[0].routability = %v, want %v", deref(got), deref(tc.want))
				}
				http.MakeRequestAndExpectEventuallyConsistentResponse(t, s.RoundTripper, s.TimeoutConfig, gwAddr, http.ExpectedResponse{
					Request: http.Request{Path: "/"}, Backend: "infra-backend-v1", Namespace: ns,
				})
			})
		}
		t.Run("gwdev-routability-unknown", func(t *testing.T) {
			gwNN := types.NamespacedName{Name: "gwdev-routability-unknown", Namespace: ns}
			kubernetes.GatewayMustHaveCondition(t, s.Client, s.TimeoutConfig, gwNN, metav1.Condition{
				Type: string(gwv1.GatewayConditionAccepted), Status: metav1.ConditionFalse, Reason: string(gwv1.GatewayReasonUnsupportedAddress),
			})
			// gwdev writes the conditions and the addresses together.
			gw := &gwv1.Gateway{}
			if err := s.Client.Get(context.Background(), gwNN, gw); err != nil {
				t.Fatal(err)
			}
			if len(gw.Status.Addresses) != 0 {
				t.Errorf("the refused Gateway reports status.addresses %+v, want none", gw.Status.Addresses)
			}
		})
	},
}

// setAddress sets a Gateway's spec.addresses to the one address a.
func setAddress(t *testing.T, s *suite.ConformanceTestSuite, nn types.NamespacedName, a gwv1.GatewaySpecAddress) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		gw := &gwv1.Gateway{}
		if err := s.Client.Get(context.Background(), nn, gw); err != nil {
			return err
		}
		gw.Spec.Addresses = []gwv1.GatewaySpecAddress{a}
		return s.Client.Update(context.Background(), gw)
	})
	if err != nil {
		t.Fatalf("setting %s spec.addresses: %v", nn, err)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "<unset>"
	}
	return *p
}

// untestedClaims are the claimed features that no upstream conformance
// test (sigs.k8s.io/gateway-api/conformance/tests, the pinned version)
// lists in its Features: upstream's run says nothing about them.
func untestedClaims() []features.FeatureName {
	tested := sets.New[features.FeatureName]()
	for _, test := range tests.ConformanceTests {
		tested.Insert(test.Features...)
	}
	var out []features.FeatureName
	for _, f := range claimedFeatures {
		if !tested.Has(f) {
			out = append(out, f)
		}
	}
	return out
}

// TestClaimedFeaturesCovered: every claimed feature upstream does not test
// has a gwdev test in gwdevFeatureTests that runs (it is in gwdevTests)
// and needs the feature (so it counts toward it); a new claim without a
// test fails here, as does an entry for a feature that is no longer
// claimed or that upstream now tests (its test then replaces gwdev's).
func TestClaimedFeaturesCovered(t *testing.T) {
	untested := untestedClaims()
	if len(untested) == 0 {
		t.Fatal("no claimed feature lacks an upstream test; the computation is wrong or gwdevFeatureTests is obsolete")
	}
	for _, f := range untested {
		name, ok := gwdevFeatureTests[f]
		if !ok {
			t.Errorf("gwdev claims %s, which no upstream conformance test covers, and no gwdev test covers it: add one to gwdevTests and gwdevFeatureTests", f)
			continue
		}
		i := slices.IndexFunc(gwdevTests, func(test suite.ConformanceTest) bool { return test.ShortName == name })
		if i < 0 {
			t.Errorf("%s: gwdev test %s is not in gwdevTests, so it never runs", f, name)
			continue
		}
		if !slices.Contains(gwdevTests[i].Features, f) {
			t.Errorf("%s: gwdev test %s does not list the feature in its Features", f, name)
		}
	}
	for f := range gwdevFeatureTests {
		if !slices.Contains(untested, f) {
			t.Errorf("gwdevFeatureTests lists %s, which is not claimed or which upstream now tests: remove it", f)
		}
	}
	t.Logf("claimed features upstream does not test, covered by gwdev's tests: %v", untested)
}
