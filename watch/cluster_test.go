package watch

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
)

func TestCleanManifestDropsWhatTheClusterWrote(t *testing.T) {
	var u unstructured.Unstructured
	err := sigsyaml.Unmarshal([]byte(`apiVersion: v1
kind: Service
metadata:
  name: shop
  namespace: default
  uid: 1234
  resourceVersion: "77"
  generation: 3
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields: [{manager: kubectl}]
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}", team: shop}
spec: {clusterIP: 10.0.0.7, clusterIPs: [10.0.0.7], ports: [{port: 80}]}
status: {loadBalancer: {}}
`), &u.Object)
	if err != nil {
		t.Fatal(err)
	}
	data, err := ManifestYAML([]*unstructured.Unstructured{&u})
	if err != nil {
		t.Fatal(err)
	}
	out := string(data)
	for _, gone := range []string{"uid", "resourceVersion", "generation", "managedFields", "last-applied", "clusterIP", "status"} {
		if strings.Contains(out, gone) {
			t.Errorf("%s kept:\n%s", gone, out)
		}
	}
	for _, kept := range []string{"creationTimestamp", "team: shop", "port: 80"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%s lost:\n%s", kept, out)
		}
	}
	if _, ok := u.Object["status"]; !ok {
		t.Error("the input was modified")
	}
}

func TestEachRefDefaultsKindsAndNamespaces(t *testing.T) {
	var obj map[string]any
	_ = sigsyaml.Unmarshal([]byte(`spec:
  parentRefs: [{name: web}, {name: ls, kind: ListenerSet, namespace: infra}]
  rules:
    - backendRefs: [{name: shop, port: 80}]
      filters: [{type: RequestMirror, requestMirror: {backendRef: {name: mirror, namespace: other}}}]
  listeners: [{tls: {certificateRefs: [{name: web-tls}]}}]
`), &obj)
	var got []string
	eachRef(obj, "app", "", func(_ string, k engine.ObjectKey) { got = append(got, k.String()) })
	slices.Sort(got)
	want := []string{"Gateway/app/web", "ListenerSet/infra/ls", "Secret/app/web-tls", "Service/app/shop", "Service/other/mirror"}
	if !slices.Equal(got, want) {
		t.Errorf("refs = %v, want %v", got, want)
	}
}
