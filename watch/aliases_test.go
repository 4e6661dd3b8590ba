package watch

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v4"
)

// aliasBomb is a "billion laughs" manifest: nine levels of mappings of nine
// aliases to the level below, 9^9 (387 million) leaves once expanded, in
// under 1 KB. Before alias limits it took 7 s and 1 GB to reject (the
// converter's node limit), 23 s and 910 MB in the variant.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: bomb}\nspec:\n  parentRefs: [{name: gw}]\nx:\n")
	b.WriteString("  a: &a {k1: lol, k2: lol, k3: lol, k4: lol, k5: lol, k6: lol, k7: lol, k8: lol, k9: lol}\n")
	prev := "a"
	for _, n := range "bcdefghi" {
		keys := make([]string, 9)
		for j := range keys {
			keys[j] = fmt.Sprintf("k%d: *%s", j+1, prev)
		}
		fmt.Fprintf(&b, "  %c: &%c {%s}\n", n, n, strings.Join(keys, ", "))
		prev = string(n)
	}
	return b.String()
}

// TestAliasBombRejectedEarly loads the bomb through the Loader (the fast
// parser gives it up, the reference parser parses it) and wants it
// refused at the alias that crosses the apiserver's limit, in well under a
// second and a few MB.
func TestAliasBombRejectedEarly(t *testing.T) {
	l := newTestLoader(t)
	bomb := aliasBomb()
	if _, ok := fastParse([]byte(bomb)); ok {
		t.Fatal("the fast parser accepted anchors and aliases; its subset leaves them out")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	res := l.LoadBytes("bomb.yaml", []byte(bomb))
	took := cpuTime() - cpu0 // CPU time: a loaded machine does not stretch it
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("bomb of %d bytes rejected in %s of CPU, %d KB allocated", len(bomb), took, allocated>>10)
	if len(res.Problems) != 1 {
		t.Fatalf("problems = %v", problemStrings("", res.Problems))
	}
	p := res.Problems[0]
	// *c on line 10 is the alias where over 100 nodes have come from
	// aliases and more than 1,000 were decoded.
	if p.Line != 10 || p.Column != 46 || p.Object.Name != "bomb" || !strings.Contains(p.Message, "excessive aliasing: *c expands to") {
		t.Errorf("problem = %s, want bomb.yaml:10:46 about excessive aliasing at *c", p)
	}
	if took > 2*time.Second {
		t.Errorf("rejecting the bomb took %s of CPU", took)
	}
	if allocated > 64<<20 {
		t.Errorf("rejecting the bomb allocated %d MB", allocated>>20)
	}
	if n := len(res.Snapshot.HTTPRoutes); n != 0 {
		t.Errorf("%d routes loaded from the bomb", n)
	}
}

// TestAliasesWithinLimits: anchors and aliases used as people use them
// (a shared list of backendRefs, a merge key) load as before.
func TestAliasesWithinLimits(t *testing.T) {
	l := newTestLoader(t)
	res := l.LoadBytes("ok.yaml", []byte(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shared}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: &backends [{name: svc, port: 80}, {name: svc2, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /b}}]
    backendRefs: *backends
`))
	if !res.OK() || len(res.Snapshot.HTTPRoutes) != 1 || len(res.Snapshot.HTTPRoutes[0].Spec.Rules[1].BackendRefs) != 2 {
		t.Fatalf("problems %v, routes %d", problemStrings("", res.Problems), len(res.Snapshot.HTTPRoutes))
	}
}

// TestAliasCycle: an alias inside the node its anchor names is refused
// with its position instead of being expanded until a depth limit.
func TestAliasCycle(t *testing.T) {
	res := newTestLoader(t).LoadBytes("cycle.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: &a {k: *a}\n"))
	want := "cycle.yaml:4:14: ConfigMap/x: yaml: alias *a refers to a node that contains it; not expanded"
	if got := problemStrings("", res.Problems); len(got) != 1 || got[0] != want {
		t.Errorf("problems = %q, want %q", got, want)
	}
}

func TestAllowedAliasRatio(t *testing.T) {
	for _, c := range []struct {
		decoded int64
		want    float64
	}{{1000, 0.99}, {400_000, 0.99}, {2_200_000, 0.545}, {4_000_000, 0.10}, {1 << 40, 0.10}} {
		if got := allowedAliasRatio(c.decoded); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("allowedAliasRatio(%d) = %v, want %v", c.decoded, got, c.want)
		}
	}
}

// TestCheckAliases is the check for YAML files other than manifests.
func TestCheckAliases(t *testing.T) {
	cpu0 := cpuTime()
	err := CheckAliases("gwdev.yaml", []byte("backends: {}\n---\n"+aliasBomb()))
	if err == nil || !strings.HasPrefix(err.Error(), "gwdev.yaml:12:46: yaml: excessive aliasing") {
		t.Errorf("err = %v", err)
	}
	if took := cpuTime() - cpu0; took > 2*time.Second {
		t.Errorf("took %s of CPU", took)
	}
	if err := CheckAliases("gwdev.yaml", []byte("a: &x {b: 1}\nc: *x\nd: [unclosed\n")); err != nil {
		t.Errorf("within limits (syntax errors left to the decoder): %v", err)
	}
}

// naiveCount expands aliases the slow way: the nodes a decoder visits,
// each alias node itself included.
func naiveCount(n *yaml.Node) int64 {
	c := int64(1)
	if n.Kind == yaml.AliasNode {
		return c + naiveCount(n.Alias)
	}
	for _, child := range n.Content {
		c += naiveCount(child)
	}
	return c
}

// TestAliasCounterCounts: the counter's totals, computed without
// expanding, are what expanding gives, for anchors nested in anchors,
// merge keys and aliases used as keys.
func TestAliasCounterCounts(t *testing.T) {
	for _, doc := range []string{
		"a: 1\nb: [x, y]\n",
		"a: &a {x: 1, y: [1, 2, 3]}\nb: *a\nc: [*a, *a]\n",
		"a: &a [1, 2]\nb: &b [*a, *a, {k: *a}]\nc: &c [*b, *b]\nd: {x: *c, y: *b}\n",
		"base: &base {x: 1, y: 2}\nderived:\n  <<: *base\n  z: 3\n",
		"k: &k key\nm: {*k : v}\n",
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			t.Fatal(err)
		}
		c := &aliasCounter{}
		c.walk(&n)
		if want := naiveCount(&n); c.decoded != want || c.bad != nil {
			t.Errorf("%q: decoded %d, want %d (bad %v)", doc, c.decoded, want, c.msg)
		}
	}
}
