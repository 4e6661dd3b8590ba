package watch

import (
	"fmt"
	"strings"
	"testing"
)

// routeWithFilters is an HTTPRoute whose one rule has the given filters
// (YAML flow items) and a backend of its own name.
func routeWithFilters(name string, filters ...string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %[1]s, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules:
  - filters: [%[2]s]
    backendRefs: [{name: %[1]s, port: 80}]
`, name, strings.Join(filters, ", "))
}

const setHeader = `{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-a, value: b}]}}`

// filtersNode is the rule node of HTTPRoute's spec.rules[].filters, whose
// rules read the filters' types only.
func filtersNode(t *testing.T, l *Loader) *celNode {
	t.Helper()
	s, err := l.crds.schema("gateway.networking.k8s.io_httproutes.yaml", "v1")
	if err != nil {
		t.Fatal(err)
	}
	n := s.cel.properties["spec"].properties["rules"].items.properties["filters"]
	if n == nil || len(n.rules) == 0 {
		t.Fatal("no rules on spec.rules[].filters")
	}
	return n
}

// Objects that differ only where a node's rules do not read pass by the
// trace of the first: the whole-value memo never hits for them (each
// route's filters list is the same, but the rule node above it differs by
// backend; here the filters node itself is checked).
func TestCELTraceHitsWhereWholeValuesDiffer(t *testing.T) {
	l := newTestLoader(t)
	n := filtersNode(t, l)
	var docs []string
	for i := range 20 {
		// The header value differs; the rules read only the types.
		docs = append(docs, routeWithFilters(fmt.Sprint("r", i),
			fmt.Sprintf(`{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-a, value: v%d}]}}`, i)))
	}
	// The first route alone, so its trace is remembered before the others
	// are validated: LoadBytes validates documents side by side, and two
	// evaluated at the same time would both miss.
	if r := l.LoadBytes("first.yaml", []byte(docs[0])); len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	hits := n.trace.hits.Load()
	r := l.LoadBytes("routes.yaml", []byte(strings.Join(docs[1:], "---\n")))
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	if got := n.trace.hits.Load() - hits; got != 19 {
		t.Errorf("%d trace hits for 19 routes whose filters have the same types as a remembered one, want 19", got)
	}
}

// A remembered trace never hides a failure: a route that differs where
// the rules read (a repeated filter type) is evaluated and rejected.
func TestCELTraceStillRejects(t *testing.T) {
	l := newTestLoader(t)
	docs := []string{routeWithFilters("ok-1", setHeader), routeWithFilters("ok-2", setHeader),
		routeWithFilters("twice", setHeader, setHeader), routeWithFilters("ok-3", setHeader)}
	for range 2 { // the second time with every trace remembered
		r := l.LoadBytes("routes.yaml", []byte(strings.Join(docs, "---\n")))
		var msgs []string
		for _, p := range r.Problems {
			msgs = append(msgs, p.String())
		}
		if len(msgs) != 1 || !strings.Contains(msgs[0], "RequestHeaderModifier filter cannot be repeated") || !strings.Contains(msgs[0], "twice") {
			t.Fatalf("problems %q, want only the repeated filter of HTTPRoute default/twice", msgs)
		}
	}
}

func TestCELTraceObservationsAreUnambiguous(t *testing.T) {
	field := celStep{op: obsField, key: "a"}
	pairs := [][2]any{
		{map[string]any{}, map[string]any{"a": nil}},                      // both absent: same
		{map[string]any{"a": map[string]any{}}, map[string]any{"a": "x"}}, // an object against a value
		{map[string]any{"a": []any{}}, map[string]any{"a": map[string]any{}}},
	}
	for i, p := range pairs {
		k1, ok1 := appendObservation(nil, field, p[0])
		k2, ok2 := appendObservation(nil, field, p[1])
		if !ok1 || !ok2 {
			t.Fatalf("pair %d not encodable", i)
		}
		if same := string(k1) == string(k2); same != (i == 0) {
			t.Errorf("pair %d: %v and %v observed as %q and %q", i, p[0], p[1], k1, k2)
		}
	}
}
