package watch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
)

func loadTestdata(t *testing.T, name string) *LoadResult {
	t.Helper()
	r := newTestLoader(t).LoadDir(filepath.Join("testdata", name))
	if len(r.Problems) > 0 {
		t.Fatalf("unexpected problems: %v", r.Problems)
	}
	return r
}

// TestLoadAllKinds loads one object of every kind and checks where each
// came from and the defaults the apiserver would have applied.
func TestLoadAllKinds(t *testing.T) {
	r := loadTestdata(t, "all-kinds.yaml")
	file := filepath.Join("testdata", "all-kinds.yaml")
	wantSources := map[engine.ObjectKey]engine.Source{
		{Kind: "GatewayClass", Name: "gwdev"}:                              {File: file, Line: 2, Column: 1},
		{Kind: "Gateway", Namespace: "infra", Name: "gw"}:                  {File: file, Line: 9, Column: 1},
		{Kind: "ListenerSet", Namespace: "infra", Name: "extra"}:           {File: file, Line: 28, Column: 1},
		{Kind: "HTTPRoute", Namespace: "default", Name: "web"}:             {File: file, Line: 41, Column: 1},
		{Kind: "GRPCRoute", Namespace: "default", Name: "grpc"}:            {File: file, Line: 54, Column: 1},
		{Kind: "TLSRoute", Namespace: "default", Name: "tls"}:              {File: file, Line: 70, Column: 1},
		{Kind: "TCPRoute", Namespace: "default", Name: "tcp"}:              {File: file, Line: 85, Column: 1},
		{Kind: "UDPRoute", Namespace: "default", Name: "udp"}:              {File: file, Line: 98, Column: 1},
		{Kind: "ReferenceGrant", Namespace: "infra", Name: "allow-routes"}: {File: file, Line: 111, Column: 1},
		{Kind: "BackendTLSPolicy", Namespace: "default", Name: "web-tls"}:  {File: file, Line: 125, Column: 1},
		{Kind: "Service", Namespace: "default", Name: "web"}:               {File: file, Line: 138, Column: 1},
		{Kind: "Secret", Namespace: "infra", Name: "example-tls"}:          {File: file, Line: 146, Column: 1},
		{Kind: "ConfigMap", Namespace: "default", Name: "ca"}:              {File: file, Line: 157, Column: 1},
		{Kind: "Namespace", Name: "infra"}:                                 {File: file, Line: 164, Column: 1},
		{Kind: "EndpointSlice", Namespace: "default", Name: "web-1"}:       {File: file, Line: 171, Column: 1},
	}
	if diff := cmp.Diff(wantSources, sourceMap(r.Snapshot), cmpopts.IgnoreFields(engine.Source{}, "Fields")); diff != "" {
		t.Errorf("Sources (-want +got):\n%s", diff)
	}
	// List items that findings and traces point at carry their own lines and columns.
	wantFields := map[string]engine.FieldPos{"spec.parentRefs[0]": {Line: 60, Column: 5}, "spec.rules[0]": {Line: 63, Column: 5}, "spec.rules[0].backendRefs[0]": {Line: 67, Column: 7}}
	if diff := cmp.Diff(wantFields, r.Snapshot.SourceOf(engine.ObjectKey{Kind: "GRPCRoute", Namespace: "default", Name: "grpc"}).Fields); diff != "" {
		t.Errorf("GRPCRoute field lines (-want +got):\n%s", diff)
	}
	s := r.Snapshot
	for name, n := range map[string]int{
		"GatewayClasses": len(s.GatewayClasses), "Gateways": len(s.Gateways), "ListenerSets": len(s.ListenerSets),
		"HTTPRoutes": len(s.HTTPRoutes), "GRPCRoutes": len(s.GRPCRoutes), "TLSRoutes": len(s.TLSRoutes),
		"TCPRoutes": len(s.TCPRoutes), "UDPRoutes": len(s.UDPRoutes), "ReferenceGrants": len(s.ReferenceGrants),
		"BackendTLSPolicies": len(s.BackendTLSPolicies), "Services": len(s.Services), "Secrets": len(s.Secrets),
		"ConfigMaps": len(s.ConfigMaps), "Namespaces": len(s.Namespaces), "EndpointSlices": len(s.EndpointSlices),
	} {
		if n != 1 {
			t.Errorf("%s: got %d objects, want 1", name, n)
		}
	}
	if r.Files != 1 {
		t.Errorf("Files = %d, want 1", r.Files)
	}

	// CRD defaults, as the apiserver stores them.
	gw := s.Gateways[0]
	if gw.APIVersion != "gateway.networking.k8s.io/v1" || gw.Kind != "Gateway" || gw.Generation != 1 {
		t.Errorf("Gateway type meta / generation = %q %q %d", gw.APIVersion, gw.Kind, gw.Generation)
	}
	from := gw.Spec.Listeners[0].AllowedRoutes.Namespaces.From
	if from == nil || *from != gwv1.NamespacesFromSame {
		t.Errorf("listener allowedRoutes.namespaces.from = %v, want Same", from)
	}
	if mode := gw.Spec.Listeners[1].TLS.Mode; mode == nil || *mode != gwv1.TLSModeTerminate {
		t.Errorf("listener tls.mode = %v, want Terminate", mode)
	}
	route := s.HTTPRoutes[0]
	if route.Namespace != "default" {
		t.Errorf("HTTPRoute namespace = %q, want default", route.Namespace)
	}
	m := route.Spec.Rules[0].Matches
	if len(m) != 1 || *m[0].Path.Type != gwv1.PathMatchPathPrefix || *m[0].Path.Value != "/" {
		t.Errorf("default match = %+v, want PathPrefix /", m)
	}
	ref := route.Spec.Rules[0].BackendRefs[0]
	if *ref.Weight != 1 || *ref.Group != "" || *ref.Kind != "Service" {
		t.Errorf("backendRef defaults = weight %d group %q kind %q", *ref.Weight, *ref.Group, *ref.Kind)
	}
	pref := route.Spec.ParentRefs[0]
	if *pref.Group != gwv1.GroupName || *pref.Kind != "Gateway" {
		t.Errorf("parentRef defaults = group %q kind %q", *pref.Group, *pref.Kind)
	}

	// Core defaults (hand-written, see README).
	svc := s.Services[0]
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP ||
		svc.Spec.Ports[0].TargetPort != intstr.FromInt32(80) || svc.Object().APIVersion != "v1" || svc.Object().Kind != "Service" ||
		svc.Object().Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Errorf("Service defaults: %+v", svc.Object())
	}
	sec := s.Secrets[0]
	if string(sec.Data["tls.key"]) != "key" || string(sec.Data["tls.crt"]) != "cert" || sec.StringData != nil {
		t.Errorf("Secret data = %q, stringData = %v", sec.Data, sec.StringData)
	}
	if s.EndpointSlices[0].Ports[0].Protocol == nil || *s.EndpointSlices[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("EndpointSlice port protocol not defaulted")
	}
	if s.Namespaces[0].Labels["shared-gateway"] != "true" || s.Namespaces[0].Namespace != "" {
		t.Errorf("Namespace = %+v", s.Namespaces[0].ObjectMeta)
	}
}

// TestOldVersionsConverted loads every older apiVersion and checks that
// the v1 objects keep their fields and remember the original apiVersion.
func TestOldVersionsConverted(t *testing.T) {
	r := loadTestdata(t, "old-versions.yaml")
	s := r.Snapshot
	file := filepath.Join("testdata", "old-versions.yaml")
	wantSources := map[engine.ObjectKey]engine.Source{
		{Kind: "GatewayClass", Name: "old"}:                               {File: file, Line: 1, Column: 1, APIVersion: "gateway.networking.k8s.io/v1beta1"},
		{Kind: "Gateway", Namespace: "default", Name: "old"}:              {File: file, Line: 9, Column: 1, APIVersion: "gateway.networking.k8s.io/v1beta1"},
		{Kind: "HTTPRoute", Namespace: "default", Name: "old"}:            {File: file, Line: 21, Column: 1, APIVersion: "gateway.networking.k8s.io/v1beta1"},
		{Kind: "ReferenceGrant", Namespace: "default", Name: "old"}:       {File: file, Line: 41, Column: 1, APIVersion: "gateway.networking.k8s.io/v1beta1"},
		{Kind: "TLSRoute", Namespace: "default", Name: "alpha2"}:          {File: file, Line: 55, Column: 1, APIVersion: "gateway.networking.k8s.io/v1alpha2"},
		{Kind: "TLSRoute", Namespace: "default", Name: "alpha3"}:          {File: file, Line: 69, Column: 1, APIVersion: "gateway.networking.k8s.io/v1alpha3"},
		{Kind: "TCPRoute", Namespace: "default", Name: "alpha2"}:          {File: file, Line: 83, Column: 1, APIVersion: "gateway.networking.k8s.io/v1alpha2"},
		{Kind: "UDPRoute", Namespace: "default", Name: "alpha2"}:          {File: file, Line: 95, Column: 1, APIVersion: "gateway.networking.k8s.io/v1alpha2"},
		{Kind: "BackendTLSPolicy", Namespace: "default", Name: "alpha3"}:  {File: file, Line: 107, Column: 1, APIVersion: "gateway.networking.k8s.io/v1alpha3"},
		{Kind: "ListenerSet", Namespace: "default", Name: "experimental"}: {File: file, Line: 123, Column: 1, APIVersion: "gateway.networking.x-k8s.io/v1alpha1"},
	}
	if diff := cmp.Diff(wantSources, sourceMap(s), cmpopts.IgnoreFields(engine.Source{}, "Fields")); diff != "" {
		t.Errorf("Sources (-want +got):\n%s", diff)
	}
	if got := *s.GatewayClasses[0].Spec.Description; got != "from v1beta1" || s.GatewayClasses[0].APIVersion != "gateway.networking.k8s.io/v1" {
		t.Errorf("GatewayClass description = %q, apiVersion %q", got, s.GatewayClasses[0].APIVersion)
	}
	if l := s.Gateways[0].Spec.Listeners[0]; l.Port != 8080 || *l.Hostname != "old.example.com" {
		t.Errorf("Gateway listener = %+v", l)
	}
	hr := s.HTTPRoutes[0]
	if *hr.Spec.Rules[0].BackendRefs[0].Weight != 7 || *hr.Spec.Rules[0].Matches[0].Path.Value != "/old" ||
		*hr.Spec.ParentRefs[0].SectionName != "http" || hr.Spec.Hostnames[0] != "old.example.com" || hr.Kind != "HTTPRoute" {
		t.Errorf("HTTPRoute = %+v", hr.Spec)
	}
	if rg := s.ReferenceGrants[0]; rg.Spec.From[0].Namespace != "other" || *rg.Spec.To[0].Name != "old" {
		t.Errorf("ReferenceGrant = %+v", rg.Spec)
	}
	var tlsHosts []string
	for _, tr := range s.TLSRoutes {
		tlsHosts = append(tlsHosts, string(tr.Spec.Hostnames[0]))
		if tr.APIVersion != "gateway.networking.k8s.io/v1" {
			t.Errorf("TLSRoute apiVersion = %q", tr.APIVersion)
		}
	}
	if !slices.Equal(tlsHosts, []string{"tls.example.com", "tls3.example.com"}) {
		t.Errorf("TLSRoute hostnames = %v", tlsHosts)
	}
	if p := s.TCPRoutes[0].Spec.Rules[0].BackendRefs[0].Port; p == nil || *p != 5432 {
		t.Errorf("TCPRoute port = %v", p)
	}
	if p := s.UDPRoutes[0].Spec.Rules[0].BackendRefs[0].Port; p == nil || *p != 53 {
		t.Errorf("UDPRoute port = %v", p)
	}
	if v := s.BackendTLSPolicies[0].Spec.Validation; v.Hostname != "old.example.com" || v.CACertificateRefs[0].Name != "ca" {
		t.Errorf("BackendTLSPolicy validation = %+v", v)
	}
	ls := s.ListenerSets[0]
	if ls.APIVersion != "gateway.networking.k8s.io/v1" || ls.Kind != "ListenerSet" || ls.Spec.ParentRef.Name != "old" ||
		ls.Spec.Listeners[0].Port != 9090 || *ls.Spec.Listeners[0].Hostname != "x.example.com" {
		t.Errorf("XListenerSet converted to %+v %+v", ls.TypeMeta, ls.Spec)
	}
}

// TestServedVersionsMatchCRDs keeps crdServedVersions equal to what the
// embedded CRDs serve.
func TestServedVersionsMatchCRDs(t *testing.T) {
	for spec, want := range crdServedVersions {
		data, err := os.ReadFile(filepath.Join("crds", spec.crd))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range crd.Spec.Versions {
			if v.Served {
				got = append(got, v.Name)
			}
		}
		if crd.Spec.Names.Kind != spec.kind || !slices.Equal(got, want) {
			t.Errorf("%s: CRD serves %s %v, table says %s %v", spec.crd, crd.Spec.Names.Kind, got, spec.kind, want)
		}
	}
}

// TestCELRulesCompile compiles every x-kubernetes-validations rule of every
// served version with gwdev's CEL environment.
func TestCELRulesCompile(t *testing.T) {
	crds := processCRDs()
	count := 0
	for spec, versions := range crdServedVersions {
		for _, v := range versions {
			s, err := crds.schema(spec.crd, v)
			if err != nil {
				t.Fatalf("%s %s: %v", spec.kind, v, err)
			}
			eachCELNode(s.cel, func(n *celNode) {
				if n.lazy != nil {
					n.lazy.compile() // what a value reaching the node does first
				}
				for _, r := range n.rules {
					count++
					if r.compileErr != nil || (r.program == nil && r.rule.Rule != "") {
						t.Errorf("%s %s: rule %q: %v", spec.kind, v, r.rule.Rule, r.compileErr)
					}
					if r.rule.MessageExpression != "" && r.message == nil {
						t.Errorf("%s %s: messageExpression %q does not compile", spec.kind, v, r.rule.MessageExpression)
					}
				}
			})
		}
	}
	if count < 100 {
		t.Errorf("only %d rules compiled; expected the Gateway API CRDs to have many more", count)
	}
}

// TestLookupGroupVersions checks the versions each known group has, as
// derived from engine's registry: an unknown kind in a known version is
// Skipped, an unknown version of a known group is a Problem.
func TestLookupGroupVersions(t *testing.T) {
	for _, c := range []struct {
		g    gvk
		want lookupResult
	}{
		{gvk{"gateway.networking.k8s.io", "v1alpha2", "TLSRoute"}, lookupServed},
		{gvk{"gateway.networking.k8s.io", "v1alpha2", "BackendLBPolicy"}, lookupUnknownKind},
		{gvk{"gateway.networking.k8s.io", "v1alpha3", "SomethingNew"}, lookupUnknownKind},
		{gvk{"gateway.networking.k8s.io", "v1alpha9", "SomethingNew"}, lookupUnknownVersion},
		{gvk{"gateway.networking.x-k8s.io", "v1alpha1", "XListenerSet"}, lookupServed},
		{gvk{"gateway.networking.x-k8s.io", "v1alpha1", "XBackendTrafficPolicy"}, lookupServed},
		{gvk{"gateway.networking.x-k8s.io", "v1alpha1", "XBackend"}, lookupServed},
		{gvk{"gateway.networking.x-k8s.io", "v1alpha1", "XFuture"}, lookupUnknownKind},
		{gvk{"gateway.networking.x-k8s.io", "v1beta1", "XMesh"}, lookupUnknownVersion},
		{gvk{"discovery.k8s.io", "v1", "EndpointSlice"}, lookupServed},
		{gvk{"discovery.k8s.io", "v1beta1", "EndpointSlice"}, lookupUnknownVersion},
		{gvk{"", "v1", "Pod"}, lookupServed}, // XBackend EndpointSelector reads Pods
		{gvk{"", "v1", "PersistentVolumeClaim"}, lookupUnknownKind},
		{gvk{"gwin.yandex.cloud", "v1", "YCCertificate"}, lookupUnknownKind},
		{gvk{"example.com", "v1", "Widget"}, lookupUnknownKind},
	} {
		if _, got := lookup(c.g); got != c.want {
			t.Errorf("lookup(%v) = %d, want %d", c.g, got, c.want)
		}
	}
}

// Every loaded object of a kind shares one apiVersion string (issue 42,
// part 3): asking a kind for it allocates nothing.
func TestKindAPIVersionShared(t *testing.T) {
	for _, k := range allKinds {
		want := k.version
		if k.group != "" {
			want = k.group + "/" + k.version
		}
		if got := k.apiVersion(); got != want {
			t.Errorf("%s: apiVersion %q, want %q", k.kind, got, want)
		}
		if n := testing.AllocsPerRun(10, func() { _ = k.apiVersion() }); n != 0 {
			t.Errorf("%s: apiVersion allocates %v times", k.kind, n)
		}
	}
	for _, pk := range implementationPolicyKinds {
		if n := testing.AllocsPerRun(10, func() { _ = pk.spec.apiVersion() }); n != 0 {
			t.Errorf("%s: apiVersion allocates %v times", pk.spec.kind, n)
		}
	}
}
