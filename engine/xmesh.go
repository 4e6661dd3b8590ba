package engine

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// meshFeatures are the mesh features gwdev's mesh implements (GEP-1426 on
// loopback, mesh.go): what an accepted XMesh's status.supportedFeatures
// lists, each proven by the MESH-HTTP/MESH-GRPC conformance test that needs
// it.
var meshFeatures = []features.FeatureName{
	features.SupportMesh,
	features.SupportMeshClusterIPMatching,
	features.SupportMeshConsumerRoute,
	features.SupportMeshHTTPRouteRewritePath,
	features.SupportMeshHTTPRouteSchemeRedirect,
	features.SupportMeshHTTPRouteRedirectPort,
	features.SupportMeshHTTPRouteRedirectPath,
	features.SupportMeshHTTPRouteBackendRequestHeaderModification,
	features.SupportMeshHTTPRouteQueryParamMatching,
	features.SupportMeshHTTPRouteNamedRouteRule,
}

// MeshFeatures returns the mesh features gwdev implements, sorted by name:
// an accepted XMesh's status.supportedFeatures and what the conformance run
// claims for the MESH-HTTP and MESH-GRPC profiles.
func MeshFeatures() []features.FeatureName {
	out := slices.Clone(meshFeatures)
	slices.Sort(out)
	return out
}

// processXMeshes writes the status of every XMesh whose spec.controllerName
// is gwdev's mesh (GEP-3949): Accepted, or Accepted=False InvalidParameters
// when it sets parametersRef (gwdev's mesh takes no parameters), and the
// supported features. An XMesh of another controller is left alone, with a
// note, as the GEP requires.
func (t *translator) processXMeshes() {
	for _, m := range t.out.XMeshes {
		key := ObjectKey{Kind: "XMesh", Name: m.Name}
		if string(m.Spec.ControllerName) != MeshControllerName {
			t.note(SeverityInfo, key, "spec.controllerName", "names controller "+quote(string(m.Spec.ControllerName))+
				"; gwdev's mesh is "+quote(MeshControllerName)+", so gwdev leaves this XMesh alone")
			continue
		}
		cs := newConditionSet(m.Generation, &t.opts.Now)
		acc := string(gwxv1a1.MeshConditionAccepted)
		if ref := m.Spec.ParametersRef; ref != nil {
			cs.fail(acc, string(gwxv1a1.MeshReasonInvalidParameters),
				"spec.parametersRef ("+groupKind(string(ref.Group), string(ref.Kind))+" "+ref.Name+
					"): gwdev's mesh takes no parameters, so it supports no parametersRef")
		}
		cs.setDefault(acc, metav1.ConditionTrue, string(gwxv1a1.MeshReasonAccepted),
			"accepted by gwdev's mesh ("+MeshControllerName+"): routes whose parentRef is a Service are served on a loopback address per Service")
		m.Status.Conditions = cs.list()
		m.Status.SupportedFeatures = nil
		if !cs.isFalse(acc) {
			for _, f := range MeshFeatures() {
				m.Status.SupportedFeatures = append(m.Status.SupportedFeatures, gwv1.SupportedFeature{Name: gwv1.FeatureName(f)})
			}
		}
	}
}
