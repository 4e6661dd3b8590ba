package conformance

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/utils/grpc"
	"sigs.k8s.io/gateway-api/conformance/utils/kubernetes"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"

	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"
)

// gwdevTests are gwdev's own checks of claimed features that upstream's
// tests do not check, run by TestConformance after upstream's tests with
// the same suite, manifests and backends, and reported apart from them
// (the report's gwdevTests): a failing one fails the run like a failing
// conformance test.
var gwdevTests = []suite.ConformanceTest{
	GwdevGRPCRouteRequestHeaderModifierHeaders,
	GwdevGatewayListenerFilters,
	GwdevGatewayAddressRoutability,
}

func isGwdevTest(name string) bool {
	return slices.ContainsFunc(gwdevTests, func(t suite.ConformanceTest) bool { return t.ShortName == name })
}

// GwdevGRPCRouteRequestHeaderModifierHeaders sends upstream's
// GRPCRouteRequestHeaderModifier requests to the same manifest and
// compares the metadata the backend (echo-basic's gRPC server) received,
// which upstream's test does not: its grpc.ExpectedResponse.Response.Headers
// are never compared (compareResponse checks the code, method, namespace
// and pod only).
//
// The expectations follow the manifest, not upstream's table: its first
// three rules have the same match (GrpcEcho/Echo), so the first one wins
// (rules of equal precedence go by their order) and Echo only gets
// X-Header-Set set; the add and remove rules for Echo never match, and
// their headers pass unchanged. EchoTwo gets rule 4's set, add and remove;
// an added value is appended to an existing one with a comma, as
// HTTPHeaderFilter's documentation shows ("my-header: foo,bar").
var GwdevGRPCRouteRequestHeaderModifierHeaders = suite.ConformanceTest{
	ShortName:   "GwdevGRPCRouteRequestHeaderModifierHeaders",
	Description: "GRPCRoute RequestHeaderModifier: the backend receives the metadata the filter sets, adds and removes",
	Manifests:   []string{"tests/grpcroute-request-header-modifier.yaml"},
	Features:    []features.FeatureName{features.SupportGateway, features.SupportGRPCRoute, features.SupportGRPCRouteRequestHeaderModifier},
	Test: func(t *testing.T, s *suite.ConformanceTestSuite) {
		ns := "gateway-conformance-infra"
		routeNN := types.NamespacedName{Name: "grpc-request-header-modifier", Namespace: ns}
		gwNN := types.NamespacedName{Name: "same-namespace", Namespace: ns}
		gwAddr := kubernetes.GatewayAndRoutesMustBeAccepted(t, s.Client, s.TimeoutConfig, s.ControllerName, kubernetes.NewGatewayRef(gwNN), &gwv1.GRPCRoute{}, true, routeNN)
		const authority = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho"
		cases := []struct {
			name string
			two  bool
			sent map[string]string
			// want is every x-header-* and some-other-header field the
			// backend must receive, with its values in order.
			want map[string][]string
		}{
			{name: "Echo: set overwrites X-Header-Set, other headers pass",
				sent: map[string]string{"x-header-set": "original", "some-other-header": "other"},
				want: map[string][]string{"x-header-set": {"set-overwrites-values"}, "some-other-header": {"other"}}},
			{name: "Echo: set adds X-Header-Set when absent",
				sent: map[string]string{"some-other-header": "other"},
				want: map[string][]string{"x-header-set": {"set-overwrites-values"}, "some-other-header": {"other"}}},
			{name: "Echo: the add and remove rules are shadowed by the first rule",
				sent: map[string]string{"x-header-add": "kept", "x-header-remove": "kept-too"},
				want: map[string][]string{"x-header-set": {"set-overwrites-values"}, "x-header-add": {"kept"}, "x-header-remove": {"kept-too"}}},
			{name: "EchoTwo: set, add and remove together", two: true,
				sent: map[string]string{"x-header-set-2": "original-2", "x-header-add-2": "existing-2",
					"x-header-remove-1": "gone-1", "x-header-remove-2": "gone-2", "some-other-header": "other"},
				want: map[string][]string{"x-header-set-1": {"header-set-1"}, "x-header-set-2": {"header-set-2"},
					"x-header-add-1": {"header-add-1"}, "x-header-add-2": {"existing-2,header-add-2"}, "some-other-header": {"other"}}},
		}
		// The suite's GRPCClient is nil unless an implementation sets one
		// (upstream's helpers then make their own); this test makes its own.
		client := &grpc.DefaultClient{}
		defer client.Close()
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				exp := grpc.ExpectedResponse{
					RequestMetadata: &grpc.RequestMetadata{Authority: authority, Metadata: tc.sent},
					Backend:         "grpc-infra-backend-v1", Namespace: ns,
				}
				if tc.two {
					exp.EchoTwoRequest, exp.Backend = &pb.EchoRequest{}, "grpc-infra-backend-v2"
				} else {
					exp.EchoRequest = &pb.EchoRequest{}
				}
				// Upstream's wait: the route answers from the right backend.
				grpc.MakeRequestAndExpectEventuallyConsistentResponse(t, client, s.TimeoutConfig, gwAddr, exp)
				resp, err := client.SendRPC(t, gwAddr, exp, s.TimeoutConfig.RequestTimeout)
				if err != nil || resp == nil || resp.Response == nil {
					t.Fatalf("RPC: %v (answer %+v)", err, resp)
				}
				got := receivedHeaders(resp.Response)
				if !maps.EqualFunc(got, tc.want, slices.Equal) {
					t.Errorf("the backend received %v, want %v", got, tc.want)
				}
			})
		}
	},
}

// receivedHeaders is the x-header-* and some-other-header metadata the
// echo reports it received, names lowercased, values in order.
func receivedHeaders(r *pb.EchoResponse) map[string][]string {
	md := metadata.MD{}
	for _, h := range r.GetAssertions().GetHeaders() {
		md.Append(h.GetKey(), h.GetValue())
	}
	out := map[string][]string{}
	for k, vs := range md {
		if strings.HasPrefix(k, "x-header-") || k == "some-other-header" {
			out[k] = vs
		}
	}
	return out
}
