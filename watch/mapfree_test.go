package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMapReuseLoadsTheSame loads the engine's golden inputs, the samples,
// watch's test data and a few hundred generated routes (documents, a List,
// objects with defaults to fill in, with and without problems) with a
// loader that reuses maps and with one that does not, and fails unless
// both load the same objects and problems: an object that kept a map
// handed out again would differ. The corpus has Services, Secrets and
// other core objects, whose maps are reused as well.
func TestMapReuseLoadsTheSame(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../engine/testdata/*.in.yaml", "../samples/*/*.yaml", "testdata/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	inputs := map[string][]byte{"generated.yaml": []byte(generatedRoutes(300))}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = data
	}
	reuse, fresh := newTestLoader(t), newTestLoader(t)
	fresh.noMapReuse = true
	objects := 0
	for round := range 2 { // the second round starts with full free lists
		for name, data := range inputs {
			got, want := reuse.LoadBytes(name, data), fresh.LoadBytes(name, data)
			if !reflect.DeepEqual(got.Snapshot, want.Snapshot) {
				t.Fatalf("round %d, %s: the loaded objects differ with maps reused", round, name)
			}
			if !reflect.DeepEqual(got.Problems, want.Problems) {
				t.Fatalf("round %d, %s: problems differ with maps reused\n got %v\nwant %v", round, name, got.Problems, want.Problems)
			}
			objects += len(got.Snapshot.HTTPRoutes) + len(got.Snapshot.Gateways)
		}
	}
	if objects < 1000 {
		t.Fatalf("loaded %d routes and gateways: the corpus is too small", objects)
	}
}

// generatedRoutes is n HTTPRoutes in every form the loader takes: plain
// documents, a HTTPRouteList's items, routes leaving defaults out, routes
// with an unknown field or an invalid value.
func generatedRoutes(n int) string {
	var b strings.Builder
	route := func(i int, indent string) string {
		extra := ""
		switch i % 7 {
		case 3:
			extra = "\n  colour: blue"
		case 5:
			extra = "\n  hostnames: [\"-bad-\"]"
		}
		return strings.ReplaceAll(fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r-%[1]d, namespace: ns-%[2]d, labels: {app: a%[2]d}}
spec:%[3]s
  parentRefs: [{name: gw, port: %[4]d}]
  rules:
  - matches: [{path: {value: /p%[1]d}}, {headers: [{name: x, value: "%[1]d"}]}]
    backendRefs: [{name: s%[1]d, port: 80, weight: %[2]d}]
  - backendRefs: [{name: s, port: 8080}]
`, i, i%5, extra, 80+i%3), "\n", "\n"+indent)
	}
	for i := range n / 2 {
		b.WriteString("---\n" + route(i, "") + "\n")
	}
	b.WriteString("---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRouteList\nitems:\n")
	for i := n / 2; i < n; i++ {
		b.WriteString("- " + strings.TrimRight(route(i, "  "), " ") + "\n")
	}
	return b.String()
}

// TestDecodeKeepsMaps: no Gateway API kind holds an interface (so their
// maps are reused), and a type that does, or one left to the library, is
// said to keep them.
func TestDecodeKeepsMaps(t *testing.T) {
	for _, k := range crdKinds() {
		if decodeKeepsMaps(k) {
			t.Errorf("%s: decodeKeepsMaps, so its maps are never reused", k.kind)
		}
	}
	type tree struct {
		Children []*tree `json:"children"`
		Value    any     `json:"value"`
	}
	type hidden struct{ x int } // unexported: left to the library
	_ = hidden{x: 1}
	type holder struct {
		H map[string]hidden `json:"h"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[tree](), reflect.TypeFor[holder]()} {
		if !planHoldsInterface(planOf(typ), map[*typePlan]bool{}) {
			t.Errorf("%v: planHoldsInterface is false", typ)
		}
	}
}
