package engine

// EnforcedField is a field subtree of the Gateway API gwdev implements, with
// the test that shows it. The field guard test (cmd/gwdev) requires every
// field path of every CRD gwdev loads to be covered by an EnforcedField or a
// ReportedField (the longest Path that is the field or one of its parents
// covers it).
type EnforcedField struct {
	// Kind is the kind the field belongs to ("HTTPRoute").
	Kind string
	// Path is the root of the subtree in the CRD schema ("spec.rules[].matches",
	// "[]" standing for list items and "{}" for map values).
	Path string
	// Paths is how many schema paths the entry covers (Path and the paths
	// below it that no longer entry covers). A new API version that adds a
	// field changes the count and fails the guard until someone decides.
	Paths int
	// Test proves it: "golden:<case>" is engine/testdata/<case>.in.yaml,
	// which must set a field of the subtree; "<dir>.<TestName>" is a Go test
	// function in that directory of the repository.
	Test string
}

// EnforcedFields lists what gwdev implements, by field subtree. Callers
// must not modify it.
func EnforcedFields() []EnforcedField { return enforcedFields }

// enforcedFields: see EnforcedFields. Sorted by kind, then path.
var enforcedFields = []EnforcedField{
	{Kind: "BackendTLSPolicy", Path: "spec", Paths: 1, Test: "golden:btlsp-ancestors"},
	{Kind: "BackendTLSPolicy", Path: "spec.options", Paths: 1, Test: "golden:btlsp-options"},
	{Kind: "BackendTLSPolicy", Path: "spec.targetRefs", Paths: 5, Test: "golden:btlsp-section-name"},
	{Kind: "BackendTLSPolicy", Path: "spec.validation", Paths: 6, Test: "golden:btlsp-configmap-ca"},
	{Kind: "BackendTLSPolicy", Path: "spec.validation.subjectAltNames", Paths: 4, Test: "golden:btlsp-subject-alt-names"},
	{Kind: "BackendTLSPolicy", Path: "spec.validation.wellKnownCACertificates", Paths: 1, Test: "golden:btlsp-system"},
	{Kind: "GatewayClass", Path: "spec", Paths: 1, Test: "golden:gatewayclass-manifest-accepted"},
	{Kind: "GatewayClass", Path: "spec.controllerName", Paths: 1, Test: "golden:gatewayclass-manifest-accepted"},
	{Kind: "GatewayClass", Path: "spec.description", Paths: 1, Test: "golden:gatewayclass-description"},
	{Kind: "GatewayClass", Path: "spec.parametersRef", Paths: 5, Test: "golden:gatewayclass-parameters-configmap"},
	{Kind: "Gateway", Path: "spec", Paths: 1, Test: "golden:gateway-basic-http"},
	{Kind: "Gateway", Path: "spec.addresses", Paths: 3, Test: "golden:gateway-address-two-requested"},
	{Kind: "Gateway", Path: "spec.addresses[].routability", Paths: 1, Test: "golden:gateway-address-routability"},
	{Kind: "Gateway", Path: "spec.allowedListeners", Paths: 9, Test: "golden:listenerset-from-selector"},
	{Kind: "Gateway", Path: "spec.gatewayClassName", Paths: 1, Test: "golden:gateway-basic-http"},
	{Kind: "Gateway", Path: "spec.infrastructure", Paths: 1, Test: "golden:gateway-infrastructure-parameters-configmap"},
	{Kind: "Gateway", Path: "spec.infrastructure.parametersRef", Paths: 4, Test: "golden:gateway-infrastructure-parameters-configmap"},
	{Kind: "Gateway", Path: "spec.listeners", Paths: 5, Test: "golden:gateway-basic-http"},
	{Kind: "Gateway", Path: "spec.listeners[].filters", Paths: 19, Test: "cmd/gwdev.TestSampleListenerFilters"},
	{Kind: "Gateway", Path: "spec.listeners[].allowedRoutes.kinds", Paths: 3, Test: "golden:listener-invalid-route-kinds"},
	{Kind: "Gateway", Path: "spec.listeners[].allowedRoutes.namespaces", Paths: 8, Test: "golden:route-namespace-selector"},
	{Kind: "Gateway", Path: "spec.listeners[].hostname", Paths: 1, Test: "golden:listener-distinct-http-hostnames"},
	{Kind: "Gateway", Path: "spec.listeners[].tls", Paths: 6, Test: "golden:tls-https-valid"},
	{Kind: "Gateway", Path: "spec.listeners[].tls.mode", Paths: 1, Test: "golden:tls-passthrough-no-certificates"},
	{Kind: "Gateway", Path: "spec.listeners[].tls.options", Paths: 1, Test: "golden:tls-options-listener"},
	{Kind: "Gateway", Path: "spec.tls", Paths: 1, Test: "golden:gateway-backend-client-cert-valid"},
	{Kind: "Gateway", Path: "spec.tls.backend", Paths: 6, Test: "golden:gateway-backend-client-cert-valid"},
	{Kind: "Gateway", Path: "spec.tls.frontend", Paths: 9, Test: "golden:tls-frontend-validation"},
	{Kind: "Gateway", Path: "spec.tls.frontend.perPort", Paths: 10, Test: "golden:tls-frontend-per-port"},
	{Kind: "Gateway", Path: "spec.defaultScope", Paths: 1, Test: "golden:defaultgw-one"},
	{Kind: "ListenerSet", Path: "spec", Paths: 1, Test: "golden:listenerset-from-same"},
	{Kind: "ListenerSet", Path: "spec.listeners", Paths: 5, Test: "golden:listenerset-from-same"},
	{Kind: "ListenerSet", Path: "spec.listeners[].filters", Paths: 19, Test: "golden:listener-filters"},
	{Kind: "ListenerSet", Path: "spec.listeners[].allowedRoutes", Paths: 12, Test: "golden:listenerset-listener-fields"},
	{Kind: "ListenerSet", Path: "spec.listeners[].tls", Paths: 7, Test: "golden:listenerset-entry-ref-not-permitted"},
	{Kind: "ListenerSet", Path: "spec.listeners[].tls.options", Paths: 1, Test: "golden:listenerset-listener-fields"},
	{Kind: "ListenerSet", Path: "spec.parentRef", Paths: 5, Test: "golden:listenerset-parent-other-namespace-same"},
	{Kind: "ReferenceGrant", Path: "spec", Paths: 9, Test: "golden:refgrant-v1-specific-name"},
	{Kind: "HTTPRoute", Path: "spec", Paths: 1, Test: "golden:gateway-basic-http"},
	{Kind: "HTTPRoute", Path: "spec.hostnames", Paths: 1, Test: "golden:route-hostname-intersection"},
	{Kind: "HTTPRoute", Path: "spec.parentRefs", Paths: 7, Test: "golden:route-parentref-port"},
	{Kind: "HTTPRoute", Path: "spec.rules", Paths: 1, Test: "golden:precedence-rule-order"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs", Paths: 7, Test: "golden:backend-weights"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs[].filters", Paths: 2, Test: "golden:filter-backend-level"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs[].filters[].cors", Paths: 7, Test: "emulator.TestBackendLevelFiltersEndToEnd"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs[].filters[].extensionRef", Paths: 4, Test: "golden:filter-extension-ref-backend"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs[].filters[].externalAuth", Paths: 16, Test: "emulator.TestExternalAuthOnBackendRef"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs[].filters[].requestHeaderModifier", Paths: 8, Test: "golden:filter-backend-level"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs[].filters[].requestMirror", Paths: 11, Test: "emulator.TestBackendLevelMirror"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs[].filters[].requestRedirect", Paths: 9, Test: "emulator.TestBackendLevelFiltersEndToEnd"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs[].filters[].responseHeaderModifier", Paths: 8, Test: "emulator.TestBackendLevelFiltersEndToEnd"},
	{Kind: "HTTPRoute", Path: "spec.rules[].backendRefs[].filters[].urlRewrite", Paths: 6, Test: "emulator.TestBackendLevelFiltersEndToEnd"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters", Paths: 2, Test: "golden:filter-all-standard"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters[].cors", Paths: 7, Test: "golden:filter-cors"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters[].extensionRef", Paths: 4, Test: "golden:filter-extension-ref"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters[].externalAuth", Paths: 16, Test: "golden:extauth-http"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters[].requestHeaderModifier", Paths: 8, Test: "golden:filter-header-modifiers"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters[].requestMirror", Paths: 8, Test: "golden:filter-request-mirror"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters[].requestMirror.fraction", Paths: 3, Test: "golden:filter-mirror-percent"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters[].requestRedirect", Paths: 9, Test: "golden:filter-redirect-scheme-host-port"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters[].responseHeaderModifier", Paths: 8, Test: "golden:filter-header-modifiers"},
	{Kind: "HTTPRoute", Path: "spec.rules[].filters[].urlRewrite", Paths: 6, Test: "golden:filter-url-rewrite"},
	{Kind: "HTTPRoute", Path: "spec.rules[].matches", Paths: 9, Test: "golden:precedence-combined"},
	{Kind: "HTTPRoute", Path: "spec.rules[].matches[].queryParams", Paths: 4, Test: "golden:precedence-query-params"},
	{Kind: "HTTPRoute", Path: "spec.rules[].name", Paths: 1, Test: "watch.TestRouteRuleNamesUnique"},
	{Kind: "HTTPRoute", Path: "spec.rules[].retry", Paths: 4, Test: "golden:filter-timeouts-retry"},
	{Kind: "HTTPRoute", Path: "spec.rules[].sessionPersistence", Paths: 9, Test: "golden:filter-session-persistence"},
	{Kind: "HTTPRoute", Path: "spec.rules[].timeouts", Paths: 3, Test: "golden:filter-timeouts-retry"},
	{Kind: "HTTPRoute", Path: "spec.useDefaultGateways", Paths: 1, Test: "golden:defaultgw-one"},
	{Kind: "GRPCRoute", Path: "spec", Paths: 1, Test: "golden:grpc-method-exact"},
	{Kind: "GRPCRoute", Path: "spec.hostnames", Paths: 1, Test: "golden:grpc-hostnames"},
	{Kind: "GRPCRoute", Path: "spec.parentRefs", Paths: 7, Test: "golden:grpc-https-listener"},
	{Kind: "GRPCRoute", Path: "spec.rules", Paths: 1, Test: "golden:grpc-method-exact"},
	{Kind: "GRPCRoute", Path: "spec.rules[].backendRefs", Paths: 40, Test: "golden:grpc-method-exact"},
	{Kind: "GRPCRoute", Path: "spec.rules[].filters", Paths: 33, Test: "golden:grpc-filters"},
	{Kind: "GRPCRoute", Path: "spec.rules[].matches", Paths: 5, Test: "golden:grpc-headers"},
	{Kind: "GRPCRoute", Path: "spec.rules[].matches[].method", Paths: 4, Test: "golden:grpc-method-regex"},
	{Kind: "GRPCRoute", Path: "spec.rules[].name", Paths: 1, Test: "watch.TestRouteRuleNamesUnique"},
	{Kind: "GRPCRoute", Path: "spec.rules[].sessionPersistence", Paths: 9, Test: "golden:grpc-session-persistence"},
	{Kind: "GRPCRoute", Path: "spec.useDefaultGateways", Paths: 1, Test: "golden:defaultgw-two"},
	{Kind: "TLSRoute", Path: "spec", Paths: 1, Test: "golden:l4-tlsroute-passthrough-sni"},
	{Kind: "TLSRoute", Path: "spec.hostnames", Paths: 1, Test: "golden:l4-tlsroute-hostnames"},
	{Kind: "TLSRoute", Path: "spec.parentRefs", Paths: 7, Test: "golden:l4-tlsroute-passthrough-sni"},
	{Kind: "TLSRoute", Path: "spec.rules", Paths: 8, Test: "golden:l4-tlsroute-passthrough-sni"},
	{Kind: "TLSRoute", Path: "spec.rules[].name", Paths: 1, Test: "watch.TestRouteRuleNamesUnique"},
	{Kind: "TLSRoute", Path: "spec.useDefaultGateways", Paths: 1, Test: "golden:defaultgw-l4"},
	{Kind: "TCPRoute", Path: "spec", Paths: 1, Test: "golden:l4-tcproute-attach"},
	{Kind: "TCPRoute", Path: "spec.parentRefs", Paths: 7, Test: "golden:l4-tcproute-section-and-port"},
	{Kind: "TCPRoute", Path: "spec.rules", Paths: 8, Test: "golden:l4-tcproute-weights"},
	{Kind: "TCPRoute", Path: "spec.rules[].name", Paths: 1, Test: "watch.TestRouteRuleNamesUnique"},
	{Kind: "TCPRoute", Path: "spec.useDefaultGateways", Paths: 1, Test: "golden:defaultgw-l4"},
	{Kind: "UDPRoute", Path: "spec", Paths: 1, Test: "golden:l4-udproute-attach"},
	{Kind: "UDPRoute", Path: "spec.parentRefs", Paths: 7, Test: "golden:l4-udproute-attach"},
	{Kind: "UDPRoute", Path: "spec.rules", Paths: 8, Test: "golden:l4-udproute-attach"},
	{Kind: "UDPRoute", Path: "spec.rules[].name", Paths: 1, Test: "watch.TestRouteRuleNamesUnique"},
	{Kind: "UDPRoute", Path: "spec.useDefaultGateways", Paths: 1, Test: "golden:defaultgw-l4"},
	// XBackend and XBackendTrafficPolicy: the xbtp branch's entries (its tests are in main).
	{Kind: "XBackend", Path: "spec", Paths: 1, Test: "golden:xbackend-hostname"},
	{Kind: "XBackend", Path: "spec.externalHostname", Paths: 2, Test: "golden:xbackend-hostname"},
	{Kind: "XBackend", Path: "spec.port", Paths: 2, Test: "golden:xbackend-hostname"},
	{Kind: "XBackend", Path: "spec.protocol", Paths: 1, Test: "emulator.TestXBackendProtocolH2C"},
	{Kind: "XBackend", Path: "spec.tls", Paths: 13, Test: "emulator.TestXBackendTargets"},
	{Kind: "XBackend", Path: "spec.tls.validation.subjectAltNames", Paths: 4, Test: "golden:xbackend-tls-subject-alt-names"},
	{Kind: "XBackend", Path: "spec.tls.validation.wellKnownCACertificates", Paths: 1, Test: "golden:xbackend-tls"},
	{Kind: "XBackend", Path: "spec.type", Paths: 1, Test: "golden:xbackend-hostname"},
	{Kind: "XBackendTrafficPolicy", Path: "spec", Paths: 1, Test: "golden:xbtp-attached"},
	{Kind: "XBackendTrafficPolicy", Path: "spec.retryConstraint", Paths: 7, Test: "emulator.TestRetryBudgetCutsRetries"},
	{Kind: "XBackendTrafficPolicy", Path: "spec.sessionPersistence", Paths: 9, Test: "emulator.TestTrafficPolicySessionPersistence"},
	{Kind: "XBackendTrafficPolicy", Path: "spec.targetRefs", Paths: 4, Test: "golden:xbtp-wrong-target-kind"},
	{Kind: "XMesh", Path: "spec", Paths: 1, Test: "golden:xmesh-status"},
	{Kind: "XMesh", Path: "spec.controllerName", Paths: 1, Test: "golden:xmesh-status"},
	{Kind: "XMesh", Path: "spec.description", Paths: 1, Test: "golden:xmesh-status"},
	{Kind: "XMesh", Path: "spec.parametersRef", Paths: 5, Test: "golden:xmesh-status"},
	// XTelemetryPolicy: xtelemetrypolicy.go, emulator/telemetry.go.
	{Kind: "XTelemetryPolicy", Path: "spec", Paths: 1, Test: "golden:telemetry-tracing-enabled"},
	{Kind: "XTelemetryPolicy", Path: "spec.targetRefs", Paths: 4, Test: "golden:telemetry-targets"},
	{Kind: "XTelemetryPolicy", Path: "spec.tracing", Paths: 2, Test: "golden:telemetry-conflict-older-wins"},
	{Kind: "XTelemetryPolicy", Path: "spec.tracing.attributes", Paths: 6, Test: "emulator.TestTelemetrySpansOverOTLP"},
	{Kind: "XTelemetryPolicy", Path: "spec.tracing.parentBasedSampling", Paths: 5, Test: "emulator.TestTelemetryParentBasedSampling"},
	{Kind: "XTelemetryPolicy", Path: "spec.tracing.provider", Paths: 4, Test: "emulator.TestTelemetrySpansOverOTLP"},
	{Kind: "XTelemetryPolicy", Path: "spec.tracing.provider.backendRef", Paths: 6, Test: "golden:telemetry-provider-refs"},
	{Kind: "XTelemetryPolicy", Path: "spec.tracing.samplingRate", Paths: 3, Test: "emulator.TestTelemetrySampling"},
	{Kind: "XTelemetryPolicy", Path: "spec.tracing.serviceName", Paths: 1, Test: "emulator.TestTelemetrySpansOverOTLP"},
	{Kind: "XTelemetryPolicy", Path: "spec.tracing.spanName", Paths: 1, Test: "emulator.TestTelemetrySpansOverOTLP"},
}
