package tui

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
)

// eachObject calls fn for every object of s in the order of
// engine.Snapshot.Each (`gwdev check -o yaml`), with its apiVersion, but
// without writing to the objects: Each sets their TypeMeta, and the Result
// is read concurrently by others (the admin API) while the dashboard looks
// at it.
func eachObject(s *engine.Snapshot, fn func(k engine.ObjectKey, apiVersion string, o metav1.Object)) {
	gw := engine.Group + "/v1"
	eachOf(s.GatewayClasses, gw, "GatewayClass", fn)
	eachOf(s.Gateways, gw, "Gateway", fn)
	eachOf(s.ListenerSets, gw, "ListenerSet", fn)
	eachOf(s.HTTPRoutes, gw, "HTTPRoute", fn)
	eachOf(s.GRPCRoutes, gw, "GRPCRoute", fn)
	eachOf(s.TLSRoutes, gw, "TLSRoute", fn)
	eachOf(s.TCPRoutes, gw, "TCPRoute", fn)
	eachOf(s.UDPRoutes, gw, "UDPRoute", fn)
	eachOf(s.ReferenceGrants, gw, "ReferenceGrant", fn)
	eachOf(s.BackendTLSPolicies, gw, "BackendTLSPolicy", fn)
	eachOf(s.Namespaces, "v1", "Namespace", fn)
	eachOf(s.Services, "v1", "Service", fn)
	eachOf(s.EndpointSlices, "discovery.k8s.io/v1", "EndpointSlice", fn)
	eachOf(s.Secrets, "v1", "Secret", fn)
	eachOf(s.ConfigMaps, "v1", "ConfigMap", fn)
}

func eachOf[T metav1.Object](objs []T, apiVersion, kind string, fn func(engine.ObjectKey, string, metav1.Object)) {
	for _, o := range objs {
		fn(engine.ObjectKey{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}, apiVersion, o)
	}
}

// withTypeMeta puts apiVersion and kind at the top of an object's YAML,
// replacing what the object carried (possibly an older apiVersion it was
// converted from, or nothing).
func withTypeMeta(y, apiVersion, kind string) string {
	lines := strings.Split(y, "\n")
	out := make([]string, 0, len(lines)+2)
	out = append(out, "apiVersion: "+apiVersion, "kind: "+kind)
	for _, l := range lines {
		if strings.HasPrefix(l, "apiVersion: ") || strings.HasPrefix(l, "kind: ") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
