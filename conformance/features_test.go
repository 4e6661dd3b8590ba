package conformance

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"

	"github.com/gwdev/gwdev/engine"
)

// profiles are the conformance profiles gwdev reports: every profile of
// the suite, the mesh ones included (gwdev's mesh: engine/mesh.go).
var profiles = []suite.ConformanceProfile{
	suite.GatewayHTTPConformanceProfile,
	suite.GatewayTLSConformanceProfile,
	suite.GatewayGRPCConformanceProfile,
	suite.GatewayTCPConformanceProfile,
	suite.GatewayUDPConformanceProfile,
	suite.MeshHTTPConformanceProfile,
	suite.MeshGRPCConformanceProfile,
}

// claimedFeatures are the extended features gwdev claims: the lists in
// gwdev's engine, which GatewayClass status.supportedFeatures (Gateway
// features) and XMesh status.supportedFeatures (mesh features) also
// report. The profiles' core features are claimed implicitly.
var claimedFeatures = append(engine.ExtendedFeatures(), engine.MeshFeatures()...)

// unclaimedReasons says why gwdev does not claim an extended feature of its
// profiles; the report repeats it for every test that needs the feature.
var unclaimedReasons = map[features.FeatureName]string{
	features.SupportGatewayInfrastructure: "gwdev creates no Pods, Services or ServiceAccounts per Gateway that could carry spec.infrastructure labels and annotations " +
		"(GatewayInfrastructureMetadata checks them); GatewayInvalidParametersRef needs the same feature, so it does not run either, " +
		"although gwdev does set Accepted=False/InvalidParameters for an unresolvable parametersRef (engine golden gateway-infrastructure-parameters-invalid)",
	features.SupportClusterTrustBundle: "gwdev loads ClusterTrustBundles (certificates.k8s.io/v1) and accepts them as BackendTLSPolicy and frontend caCertificateRefs " +
		"(engine goldens btlsp-clustertrustbundle-ca, btlsp-missing-clustertrustbundle, tls-frontend-ca-clustertrustbundle; emulator TestBackendTLSPolicyClusterTrustBundle), " +
		"but this harness does not serve or read certificates.k8s.io objects, so the feature's tests are not run and it is not claimed",
}

// skippedFeatures are core features of a reported profile whose tests are
// skipped for now, with the reason.
var skippedFeatures = map[features.FeatureName]string{}

// supportedFeatures is what the suite is told gwdev supports: the claimed
// extended features and the core features of every reported profile.
func supportedFeatures() sets.Set[features.FeatureName] {
	s := sets.New(claimedFeatures...)
	for _, p := range profiles {
		s = s.Union(p.CoreFeatures)
	}
	return s
}

// TestSupportedFeaturesFromEngine: what the run claims is what gwdev's
// GatewayClass status.supportedFeatures says (engine.SupportedFeatures)
// plus what an XMesh's says (engine.MeshFeatures), the two lists; a
// profile added here needs its core features there.
func TestSupportedFeaturesFromEngine(t *testing.T) {
	want := sets.List(sets.New(engine.SupportedFeatures()...).Insert(engine.MeshFeatures()...))
	if got := sets.List(supportedFeatures()); !slices.Equal(got, want) {
		t.Errorf("the conformance run claims %v, GatewayClass and XMesh status say %v", got, want)
	}
}

// testProfiles returns the reported profiles a test belongs to: those
// whose core and extended features cover all of its features (the suite's
// own rule).
func testProfiles(test suite.ConformanceTest) []suite.ConformanceProfile {
	var out []suite.ConformanceProfile
	for _, p := range profiles {
		if !slices.ContainsFunc(test.Features, func(f features.FeatureName) bool {
			return !p.CoreFeatures.Has(f) && !p.ExtendedFeatures.Has(f)
		}) {
			out = append(out, p)
		}
	}
	return out
}

// isExtended reports whether a test counts as extended in a profile: it
// needs a feature that is not core there (the suite's own rule).
func isExtended(p suite.ConformanceProfile, test suite.ConformanceTest) bool {
	return slices.ContainsFunc(test.Features, func(f features.FeatureName) bool { return !p.CoreFeatures.Has(f) })
}

// notSupportedReason says why a test is not run because gwdev does not
// claim one of its features ("" : every feature is claimed).
func notSupportedReason(test suite.ConformanceTest, supported sets.Set[features.FeatureName]) string {
	var why []string
	for _, f := range test.Features {
		if supported.Has(f) {
			continue
		}
		r := unclaimedReasons[f]
		if r == "" {
			r = "not claimed"
		}
		why = append(why, string(f)+": "+r)
	}
	return strings.Join(why, "; ")
}

// skippedTests are tests of claimed features that the harness cannot run
// as a cluster would, with the reason.
var skippedTests = map[string]string{}

// skipReason says why a test of a claimed feature is skipped for now
// ("" : it runs).
func skipReason(test suite.ConformanceTest) string {
	if r, ok := skippedTests[test.ShortName]; ok {
		return r
	}
	for _, f := range test.Features {
		if r, ok := skippedFeatures[f]; ok {
			return r
		}
	}
	return ""
}
