package engine

import (
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// APIVersion is the Gateway API release gwdev implements: the version of
// sigs.k8s.io/gateway-api in go.mod, whose experimental-channel CRDs watch
// validates against (TestAPIVersionIsGoMod keeps the two equal).
const APIVersion = "v1.7.0"

// coreFeatures are the core features of the conformance profiles gwdev
// implements (GATEWAY-HTTP, GATEWAY-TLS, GATEWAY-GRPC, GATEWAY-TCP,
// GATEWAY-UDP).
var coreFeatures = []features.FeatureName{
	features.SupportGateway,
	features.SupportReferenceGrant,
	features.SupportHTTPRoute,
	features.SupportTLSRoute,
	features.SupportGRPCRoute,
	features.SupportTCPRoute,
	features.SupportUDPRoute,
}

// extendedFeatures are the extended features gwdev implements: what its
// engine and data plane do, each proven by the conformance test that needs
// it. A failing test of one of them is a gwdev bug, not a reason to drop it.
var extendedFeatures = []features.FeatureName{
	// Gateway
	features.SupportGatewayPort8080,
	features.SupportGatewayHTTPListenerIsolation,
	features.SupportGatewayAddressEmpty,
	features.SupportGatewayStaticAddresses,
	features.SupportListenerSet,
	// HTTPRoute
	features.SupportHTTPRouteDestinationPortMatching,
	features.SupportHTTPRouteParentRefPort,
	features.SupportHTTPRouteQueryParamMatching,
	features.SupportHTTPRouteMethodMatching,
	features.SupportHTTPRouteNamedRouteRule,
	features.SupportHTTPRouteBackendRequestHeaderModification,
	features.SupportHTTPRouteResponseHeaderModification,
	features.SupportHTTPRoutePortRedirect,
	features.SupportHTTPRouteSchemeRedirect,
	features.SupportHTTPRoutePathRedirect,
	features.SupportHTTPRoute303RedirectStatusCode,
	features.SupportHTTPRoute307RedirectStatusCode,
	features.SupportHTTPRoute308RedirectStatusCode,
	features.SupportHTTPRouteHostRewrite,
	features.SupportHTTPRoutePathRewrite,
	features.SupportHTTPRouteRequestMirror,
	features.SupportHTTPRouteRequestMultipleMirrors,
	features.SupportHTTPRouteRequestPercentageMirror,
	features.SupportHTTPRouteRequestTimeout,
	features.SupportHTTPRouteBackendTimeout,
	features.SupportHTTPRouteRetryCodes,
	features.SupportHTTPRouteRetryConnectionError,
	features.SupportHTTPRouteCORS,
	features.SupportHTTPRouteBackendProtocolH2C,
	features.SupportHTTPRouteBackendProtocolWebSocket,
	features.SupportGatewayHTTPSListenerDetectMisdirectedRequests,
	features.SupportGatewayFrontendClientCertificateValidation,
	features.SupportGatewayFrontendClientCertificateValidationInsecureFallback,
	features.SupportBackendTLSPolicy,
	features.SupportBackendTLSPolicySANValidation,
	features.SupportGatewayBackendClientCertificate,
	features.SupportTLSRouteModeTerminate,
	features.SupportTLSRouteModeMixed,
	// GRPCRoute
	features.SupportGRPCRouteNamedRouteRule,
	features.SupportGRPCRouteRequestHeaderModifier,
	// v1.7.0
	features.SupportHTTPRouteBackendURLRewrite,
	features.SupportGatewayRouteHostnameIntersectionPrecedence,
	features.SupportGatewayListenerFilters,
	features.SupportGatewayAddressRoutability,
	features.SupportGatewayAddressRoutabilityCluster,
}

// ExtendedFeatures returns the extended features gwdev implements; the
// conformance run claims exactly these.
func ExtendedFeatures() []features.FeatureName { return slices.Clone(extendedFeatures) }

// SupportedFeatures returns every feature gwdev implements, core and
// extended, sorted by name: what GatewayClass status.supportedFeatures says
// (GEP-2162) and what the conformance run is told.
func SupportedFeatures() []features.FeatureName {
	out := append(slices.Clone(coreFeatures), extendedFeatures...)
	slices.Sort(out)
	return slices.Compact(out)
}

// supportedFeatureStatus is SupportedFeatures as GatewayClass status, in
// ascending order of name as the API requires.
func supportedFeatureStatus() []gwv1.SupportedFeature {
	fs := SupportedFeatures()
	out := make([]gwv1.SupportedFeature, len(fs))
	for i, f := range fs {
		out[i] = gwv1.SupportedFeature{Name: gwv1.FeatureName(f)}
	}
	return out
}
