package watch

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/gwdev/gwdev/engine"
)

// TestCompactedLoadEqualsPlainLoad loads a folder of more than one batch
// with and without the Collect hook: the batched, compacted load calls the
// hook once per batch and yields the same objects, sources (with their
// item lines) and problems.
func TestCompactedLoadEqualsPlainLoad(t *testing.T) {
	var routes, services strings.Builder
	for i := range 3 {
		fmt.Fprintf(&routes, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r%d, namespace: team}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{name: s%d, port: 80, weight: 3}]
  - backendRefs: [{name: s%d, port: 80}]
`, i, i, i)
	}
	routes.WriteString("---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: bad}\nspec: {rules: [{backendRefs: [{name: s, port: 0}]}]}\n")
	docs := 4
	for i := range compactBatchDocs + 100 {
		fmt.Fprintf(&services, "---\napiVersion: v1\nkind: Service\nmetadata: {name: s%d, namespace: team, labels: {app: a%d}}\nspec: {ports: [{name: http, port: 80}]}\n", i, i)
		docs++
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a-routes.yaml": routes.String(), "b-services.yaml": services.String(), "c-dup.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: s1, namespace: team}\n"})

	plain := newTestLoader(t).LoadDir(dir)
	l := newTestLoader(t)
	calls := 0
	l.Collect = func() { calls++ }
	compacted := l.LoadDir(dir)

	if want := (docs + 1 + compactBatchDocs - 1) / compactBatchDocs; calls != want {
		t.Errorf("Collect called %d times, want once per batch: %d", calls, want)
	}
	if len(plain.Problems) != 2 {
		t.Errorf("plain load: want the invalid route and the duplicate Service as problems, got %v", problemStrings(dir, plain.Problems))
	}
	if len(plain.Snapshot.Services) != compactBatchDocs+100 || len(plain.Snapshot.HTTPRoutes) != 3 {
		t.Fatalf("plain load: %d Services, %d HTTPRoutes", len(plain.Snapshot.Services), len(plain.Snapshot.HTTPRoutes))
	}
	if src := plain.Snapshot.SourceOf(engine.ObjectKey{Kind: "HTTPRoute", Namespace: "team", Name: "r0"}); len(src.Fields) == 0 {
		t.Fatalf("route source has no item lines: %+v", src)
	}
	if !reflect.DeepEqual(plain.Snapshot, compacted.Snapshot) {
		t.Error("the compacted load's snapshot differs from the plain load's")
	}
	if !reflect.DeepEqual(plain.Problems, compacted.Problems) {
		t.Errorf("problems differ:\nplain     %v\ncompacted %v", plain.Problems, compacted.Problems)
	}
}

// TestSmallLoadNotBatched: a load of no more than one batch never calls
// Collect.
func TestSmallLoadNotBatched(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"s.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n"})
	l := newTestLoader(t)
	l.Collect = func() { t.Error("Collect called for a one-document load") }
	if r := l.LoadDir(dir); len(r.Snapshot.Services) != 1 {
		t.Fatalf("loaded %d Services", len(r.Snapshot.Services))
	}
}

// TestReleaseValidators: after ReleaseValidators a new Loader validates as
// before, with validators compiled again.
func TestReleaseValidators(t *testing.T) {
	const bad = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec: {rules: [{backendRefs: [{name: s, port: 0}]}]}\n"
	before := newTestLoader(t)
	want := problemStrings("", before.LoadBytes("r.yaml", []byte(bad)).Problems)
	if len(want) == 0 {
		t.Fatal("the invalid route loaded")
	}
	ReleaseValidators()
	after := newTestLoader(t)
	if after.crds == before.crds {
		t.Fatal("the new Loader shares the released validators")
	}
	if got := problemStrings("", after.LoadBytes("r.yaml", []byte(bad)).Problems); !reflect.DeepEqual(got, want) {
		t.Errorf("after release: %v, want %v", got, want)
	}
	if got := problemStrings("", before.LoadBytes("r.yaml", []byte(bad)).Problems); !reflect.DeepEqual(got, want) {
		t.Errorf("a Loader made before the release: %v, want %v", got, want)
	}
}

// TestLoaderReleaseValidators: a Loader's ReleaseValidators lets go of
// the validators it compiled (none is left compiled in its set) and it
// validates as before, with validators compiled again.
func TestLoaderReleaseValidators(t *testing.T) {
	const bad = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec: {rules: [{backendRefs: [{name: s, port: 0}]}]}\n"
	l := newTestLoader(t)
	want := problemStrings("", l.LoadBytes("r.yaml", []byte(bad)).Problems)
	if len(want) == 0 {
		t.Fatal("the invalid route loaded")
	}
	l.ReleaseValidators()
	for name, f := range l.crds.files {
		if f.versions != nil {
			t.Errorf("CRD %s is still compiled after the release", name)
		}
	}
	if got := problemStrings("", l.LoadBytes("r.yaml", []byte(bad)).Problems); !reflect.DeepEqual(got, want) {
		t.Errorf("after release: %v, want %v", got, want)
	}
}

// ReleaseValidators lets go of the decoded embedded CRD bundles too (issue
// 42, part 3: 1.6 MB held while check translates), and the loader's
// channel notes decode them again.
func TestReleaseValidatorsReleasesBundles(t *testing.T) {
	std := embeddedStandardBundles()
	if len(std) == 0 {
		t.Skip("no embedded standard bundle")
	}
	first := weak.Make(std[0])
	std = nil
	ReleaseValidators()
	runtime.GC()
	if first.Value() != nil {
		t.Error("a decoded standard bundle is still held after ReleaseValidators")
	}
	if again := embeddedStandardBundles(); len(again) == 0 {
		t.Error("no standard bundles after the release")
	}
}
