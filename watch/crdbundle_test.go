package watch

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

var updateBundles = flag.Bool("update", false, "rewrite testdata/crds/*.out")

// TestCRDBundleCases loads every testdata/crds/<case>.yaml against each
// bundle its first line names ("# crds: v1.4.1-standard default …";
// default is a Loader without a bundle) and compares what was loaded,
// every problem and every note with <case>.out. The cases are written from
// the released CRDs (each case says what differs between releases).
func TestCRDBundleCases(t *testing.T) {
	files, err := filepath.Glob("testdata/crds/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(data), "\n")
			bundles, ok := strings.CutPrefix(first, "# crds: ")
			if !ok {
				t.Fatalf("%s: the first line must be # crds: BUNDLE…", file)
			}
			var out bytes.Buffer
			for _, bn := range strings.Fields(bundles) {
				out.WriteString("== " + bn + "\n")
				out.WriteString(loadAgainst(t, bn, name+".yaml", data))
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".out"
			if *updateBundles {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./watch -run TestCRDBundleCases -update)", err)
			}
			if diff := cmp.Diff(string(want), out.String()); diff != "" {
				t.Errorf("%s differs (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// loadAgainst loads data as file against the bundle named bn and renders
// the objects loaded, the problems (pruned ones marked) and the notes.
func loadAgainst(t *testing.T, bn, file string, data []byte) string {
	t.Helper()
	var b *CRDBundle
	if bn != "default" {
		var err error
		if b, err = EmbeddedCRDBundle(bn); err != nil {
			t.Fatal(err)
		}
	}
	l, err := NewLoaderFor(b)
	if err != nil {
		t.Fatal(err)
	}
	return loadAgainstLoader(l, file, data)
}

// loadAgainstLoader is loadAgainst with a Loader.
func loadAgainstLoader(l *Loader, file string, data []byte) string {
	r := l.LoadBytes(file, data)
	var out strings.Builder
	r.Snapshot.Each(func(k engine.ObjectKey, o metav1.Object) {
		out.WriteString("loaded " + k.String() + "\n")
		// What the cluster stores: the spec after pruning and defaulting.
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			panic(err)
		}
		spec, _ := json.Marshal(u["spec"])
		out.WriteString("  spec " + string(spec) + "\n")
	})
	for _, p := range r.Problems {
		tag := "rejected "
		if p.Pruned {
			tag = "pruned "
		}
		out.WriteString(tag + p.String() + "\n")
	}
	for _, n := range r.Notes {
		out.WriteString("note " + n.String() + "\n")
	}
	return out.String()
}

// TestCRDBundlePrunedObjectIsWhatTheClusterStores checks that an object
// loaded with a field its bundle lacks is loaded without it: a v1.6.3
// standard cluster stores the route of usedefaultgateways.yaml with no
// useDefaultGateways, the experimental one with it.
func TestCRDBundlePrunedObjectIsWhatTheClusterStores(t *testing.T) {
	data, err := os.ReadFile("testdata/crds/usedefaultgateways.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for bn, want := range map[string]gwv1.GatewayDefaultScope{"v1.6.3-standard": "", "v1.6.3-experimental": "All"} {
		b, err := EmbeddedCRDBundle(bn)
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewLoaderFor(b)
		if err != nil {
			t.Fatal(err)
		}
		r := l.LoadBytes("r.yaml", data)
		if len(r.Snapshot.HTTPRoutes) != 1 {
			t.Fatalf("%s: loaded %d routes, want 1 (problems %v)", bn, len(r.Snapshot.HTTPRoutes), r.Problems)
		}
		if got := r.Snapshot.HTTPRoutes[0].Spec.UseDefaultGateways; got != want {
			t.Errorf("%s: useDefaultGateways = %q, want %q", bn, got, want)
		}
	}
}

// TestCRDBundleNames checks the embedded bundles: every release crdgen
// lists, both channels, in release order.
func TestCRDBundleNames(t *testing.T) {
	want := []string{
		"v1.4.1-standard", "v1.4.1-experimental", "v1.5.1-standard", "v1.5.1-experimental",
		"v1.6.3-standard", "v1.6.3-experimental", "v1.7.0-standard", "v1.7.0-experimental",
	}
	if diff := cmp.Diff(want, CRDBundleNames()); diff != "" {
		t.Errorf("CRDBundleNames (-want +got):\n%s", diff)
	}
	if _, err := EmbeddedCRDBundle("v1.3.0-standard"); err == nil || !strings.Contains(err.Error(), "v1.4.1-standard") {
		t.Errorf("unknown bundle: err = %v, want one listing the bundles", err)
	}
}

// TestDefaultCRDsAreANamedBundle checks that gwdevRelease names the
// release of the default CRDs (watch/crds): each of them, version by
// version, is the schema of the same CRD in the embedded
// <gwdevRelease>-experimental bundle. Bumping the gateway-api module
// without updating gwdevRelease fails here.
func TestDefaultCRDsAreANamedBundle(t *testing.T) {
	b, err := EmbeddedCRDBundle(gwdevRelease + "-experimental")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range allKinds {
		if k.crd == "" {
			continue
		}
		data, err := crdFS.ReadFile(embeddedCRDPath(k.crd))
		if err != nil {
			t.Fatal(err)
		}
		var def map[string]any
		if err := json.Unmarshal(data, &def); err != nil {
			t.Fatal(err)
		}
		c := b.crd(k.group, k.kind)
		if c == nil {
			t.Errorf("%s has no %s", b.Name, k.kind)
			continue
		}
		got := map[string]any{}
		for v, raw := range c.schemas {
			var s any
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			got[v] = s
		}
		if diff := cmp.Diff(def, got); diff != "" {
			t.Errorf("%s: watch/crds differs from %s (is gwdevRelease the module's version?):\n%.2000s", k.kind, b.Name, diff)
		}
	}
}

// clusterFile is a small `kubectl get crd -o yaml` output: a Gateway API
// CRD, another project's CRD and, when gwin is set, gwin's GatewayPolicy
// CRD (served v1).
func clusterFile(gwin bool) string {
	s := `apiVersion: v1
kind: List
items:
- apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: gatewayclasses.gateway.networking.k8s.io, resourceVersion: "7"}
  spec:
    group: gateway.networking.k8s.io
    names: {kind: GatewayClass, plural: gatewayclasses, listKind: GatewayClassList}
    scope: Cluster
    versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [controllerName]
              properties: {controllerName: {type: string}}
    - {name: v1beta1, served: false, storage: false}
  status: {storedVersions: [v1]}
- apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: widgets.example.com}
  spec:
    group: example.com
    names: {kind: Widget, plural: widgets}
    scope: Namespaced
    versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`
	if gwin {
		s += `- apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: gatewaypolicies.gwin.yandex.cloud}
  spec:
    group: gwin.yandex.cloud
    names: {kind: GatewayPolicy, plural: gatewaypolicies}
    scope: Namespaced
    versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`
	}
	return s
}

// TestReadCRDBundle reads a cluster's CRDs: its Gateway API CRDs decide
// what is served and how it validates (here, GatewayClass v1 with one
// field, v1beta1 not served), another project's CRD is ignored, and gwin's
// policy kinds are served only when the file has their CRD.
func TestReadCRDBundle(t *testing.T) {
	manifests := `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gwdev}
spec: {controllerName: gwdev.io/gateway-controller, description: not in this cluster's schema}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: GatewayClass
metadata: {name: old}
spec: {controllerName: gwdev.io/gateway-controller}
---
apiVersion: gwin.yandex.cloud/v1
kind: GatewayPolicy
metadata: {name: p}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: shop}]
  policy: {}
`
	for _, gwin := range []bool{true, false} {
		b, err := ReadCRDBundle("/tmp/cluster.yaml", []byte(clusterFile(gwin)))
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Kinds(); len(got) != 1 || got[0] != "GatewayClass gateway.networking.k8s.io v1" {
			t.Errorf("Kinds() = %q, want only GatewayClass v1", got)
		}
		l, err := NewLoaderFor(b)
		if err != nil {
			t.Fatal(err)
		}
		got := loadAgainstLoader(l, "m.yaml", []byte(manifests))
		want := `loaded GatewayClass/gwdev
  spec {"controllerName":"gwdev.io/gateway-controller"}
loaded GatewayPolicy/default/p
  spec {"policy":{},"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"shop"}]}
pruned m.yaml:4:53: GatewayClass/gwdev: unknown field "spec.description" in cluster.yaml: rejected by kubectl's strict field validation; dropped without a word when validation is off; the field is in the standard channel from v1.4 (v1.4.1-standard and newer)
rejected m.yaml:6:1: GatewayClass/old: apiVersion: no matches for kind "GatewayClass" in version "gateway.networking.k8s.io/v1beta1" (cluster.yaml does not serve it; it is served in the standard channel from v1.4 (v1.4.1-standard and newer))
`
		if !gwin {
			want = `loaded GatewayClass/gwdev
  spec {"controllerName":"gwdev.io/gateway-controller"}
pruned m.yaml:4:53: GatewayClass/gwdev: unknown field "spec.description" in cluster.yaml: rejected by kubectl's strict field validation; dropped without a word when validation is off; the field is in the standard channel from v1.4 (v1.4.1-standard and newer)
rejected m.yaml:6:1: GatewayClass/old: apiVersion: no matches for kind "GatewayClass" in version "gateway.networking.k8s.io/v1beta1" (cluster.yaml does not serve it; it is served in the standard channel from v1.4 (v1.4.1-standard and newer))
rejected m.yaml:11:1: GatewayPolicy/default/p: apiVersion: no matches for kind "GatewayPolicy" in version "gwin.yandex.cloud/v1" (cluster.yaml does not serve it)
`
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("gwin CRD %v (-want +got):\n%s", gwin, diff)
		}
	}
	if _, err := ReadCRDBundle("other.yaml", []byte(clusterFile(false)[:strings.Index(clusterFile(false), "- apiVersion")]+
		"- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, spec: {group: example.com, names: {kind: W, plural: ws}}}\n")); err == nil ||
		!strings.Contains(err.Error(), "other.yaml holds no Gateway API CustomResourceDefinition") {
		t.Errorf("a file without Gateway API CRDs: err = %v", err)
	}
}

// TestMisfitIsDeterministic: an object with several misfits (an unknown
// field and a value an enum refuses, under different keys) is judged by
// the same one every time, whatever the maps' iteration order.
func TestMisfitIsDeterministic(t *testing.T) {
	b, err := EmbeddedCRDBundle("v1.4.1-standard")
	if err != nil {
		t.Fatal(err)
	}
	g := gvk{group: "gateway.networking.k8s.io", version: "v1", kind: "HTTPRoute"}
	u := map[string]any{"spec": map[string]any{
		"rules": []any{map[string]any{"filters": []any{map[string]any{"type": "ExternalAuth", "externalAuth": map[string]any{}}}}},
		"zzz":   "unknown",
		"aaa":   "unknown",
	}}
	first := b.misfit(g, u)
	if first == "" {
		t.Fatal("no misfit found")
	}
	for range 50 {
		if got := b.misfit(g, u); got != first {
			t.Fatalf("misfit = %q, then %q", first, got)
		}
	}
}

// channelNote decodes the newer standard bundles only for an object the
// oldest does not take (issue 42, session 19: decoding all of them was a
// tenth of a check of one route), and its notes are the same either way.
func TestChannelNoteDecodesNewerBundlesOnlyWhenNeeded(t *testing.T) {
	names := standardBundleSet().names
	if len(names) < 2 {
		t.Skip("fewer than two embedded standard bundles")
	}
	decoded := func() []string {
		embeddedBundlesMu.Lock()
		defer embeddedBundlesMu.Unlock()
		var got []string
		for _, n := range names {
			if embeddedBundles[n] != nil {
				got = append(got, n)
			}
		}
		return got
	}
	releaseEmbeddedBundles()
	defer releaseEmbeddedBundles()
	route := gvk{group: "gateway.networking.k8s.io", version: "v1", kind: "HTTPRoute"}
	fits := map[string]any{"spec": map[string]any{"hostnames": []any{"a.example.com"}}}
	if note := channelNote(route, fits); note != "" {
		t.Fatalf("a route every standard release takes: note %q", note)
	}
	if got := decoded(); len(got) != 1 || got[0] != names[0] {
		t.Errorf("after a route the oldest bundle takes, decoded %v, want only %s", got, names[0])
	}
	// A field no standard release has: every bundle is looked at.
	odd := map[string]any{"spec": map[string]any{"noSuchField": "x"}}
	note := channelNote(route, odd)
	if !strings.HasPrefix(note, "experimental channel only: ") {
		t.Errorf("a field of no standard release: note %q", note)
	}
	if got := decoded(); len(got) != len(names) {
		t.Errorf("after a route the oldest bundle refuses, decoded %v, want all of %v", got, names)
	}
	releaseEmbeddedBundles()
	if again := channelNote(route, odd); again != note {
		t.Errorf("decoded again: note %q, want %q", again, note)
	}
}
