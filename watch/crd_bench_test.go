package watch

import (
	"testing"

	yaml "go.yaml.in/yaml/v4"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
)

// newCRDSet returns a crdSet of its own, with nothing compiled yet.
func newCRDSet() *crdSet {
	s := &crdSet{files: map[string]*crdFile{}}
	for _, k := range allKinds {
		if k.crd != "" {
			s.files[k.crd] = &crdFile{name: k.crd}
		}
	}
	return s
}

// BenchmarkCRDSetupHTTPRoute measures the one-time cost of the biggest
// CRD: decoding the embedded schema and compiling it, CEL rules included
// (the shared CEL base environment is built once, before the timer).
func BenchmarkCRDSetupHTTPRoute(b *testing.B) {
	if _, err := celBaseEnv(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := newCRDSet().schema(kindHTTPRoute.crd, "v1"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRoute is one of bench/genroutes' HTTPRoutes.
const benchRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app-7, namespace: team-7}
spec:
  parentRefs: [{name: shared, namespace: infra}]
  hostnames: [app-7.example.com]
  rules:
  - matches:
    - path: {type: PathPrefix, value: /api/v1}
      headers: [{name: x-canary, value: "true"}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: x-route, value: app-7}]}
    backendRefs:
    - {name: app-7, port: 8080, weight: 90}
    - {name: app-7-canary, port: 8080, weight: 10}
  - matches:
    - path: {type: PathPrefix, value: /}
    backendRefs:
    - {name: app-7, port: 8080}
`

// BenchmarkCRDObjectStages measures the steps of loadCRDObject on one of
// bench/genroutes' HTTPRoutes, gwdev's way and the library's it replaces
// side by side (each op copies the object first: "copy" is that alone).
func BenchmarkCRDObjectStages(b *testing.B) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(benchRoute), &n); err != nil {
		b.Fatal(err)
	}
	v, nerr := toUnstructured(&n, nil)
	if nerr != nil {
		b.Fatal(nerr.msg)
	}
	written := v.(map[string]any)
	s, err := newCRDSet().schema(kindHTTPRoute.crd, "v1")
	if err != nil {
		b.Fatal(err)
	}
	admitted := runtime.DeepCopyJSON(written)
	s.quick.pruneWithNulls(admitted, s.structural)
	s.admit(admitted)
	stage := func(name string, u map[string]any, f func(map[string]any)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f(runtime.DeepCopyJSON(u))
			}
		})
	}
	stage("copy", written, func(map[string]any) {})
	stage("prune", written, func(u map[string]any) { s.quick.pruneWithNulls(u, s.structural) })
	stage("prune-library", written, func(u map[string]any) {
		pruning.PruneWithOptions(u, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	})
	stage("admit", written, func(u map[string]any) { s.admit(u) })
	stage("decode", admitted, func(u map[string]any) {
		if _, err := decodeTyped(u, kindHTTPRoute.newObject); err != nil {
			b.Fatal(err)
		}
	})
	stage("decode-library", admitted, func(u map[string]any) {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, kindHTTPRoute.newObject()); err != nil {
			b.Fatal(err)
		}
	})
}
