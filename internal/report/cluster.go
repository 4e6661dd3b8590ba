package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// Disagreement is one condition where the controller and the spec differ.
type Disagreement struct {
	Object engine.ObjectKey
	// Scope is "" (the object), "listener NAME" or "parent Gateway ns/name".
	Scope      string
	Condition  string
	Controller string // "True (Accepted)" or "not written"
	Spec       string
	Message    string // gwdev's
}

// ClusterComparison is the result of comparing every object's status.
type ClusterComparison struct {
	Disagreements []Disagreement
	Agreed        int
	// NotCompared counts the controller's conditions with reasons of its
	// own, by reason.
	NotCompared map[string]int
	// Stale lists conditions the controller wrote for an older generation.
	Stale []string
	// NoStatus lists the objects the controller wrote no status for.
	NoStatus []engine.ObjectKey
}

// ScopeSuffix is a disagreement's scope as printed after its object
// ("" for the object itself).
func ScopeSuffix(scope string) string {
	if scope == "" {
		return ""
	}
	return " " + scope
}

// WriteClusterComparison writes `gwdev check --cluster`'s answer: what
// was read from the cluster, what did not load, and every condition where
// the controller's status and the spec's disagree. It returns whether they
// agree (and everything loaded).
func WriteClusterComparison(out io.Writer, objs *watch.ClusterObjects, lr *watch.LoadResult, c *ClusterComparison) bool {
	where := "namespace " + objs.Namespace
	if objs.Namespace == "" {
		where = "every namespace"
	}
	fmt.Fprintf(out, "Cluster: context %s (%s), %s: %s read.\n", objs.Context, objs.Server, where, Plural(len(objs.Objects), "object"))
	for _, u := range objs.Objects {
		if u.GetKind() == "GatewayClass" {
			ctrl, _, _ := unstructured.NestedString(u.Object, "spec", "controllerName")
			fmt.Fprintf(out, "GatewayClass %s: controller %s\n", u.GetName(), ctrl)
		}
	}
	for _, n := range objs.Notes {
		fmt.Fprintf(out, "  - %s\n", n)
	}
	for _, p := range lr.Problems {
		fmt.Fprintf(out, "  ✗ %s\n", p.String())
	}
	for _, k := range c.NoStatus {
		fmt.Fprintf(out, "  ! %s: no controller wrote status\n", k)
	}
	for _, s := range c.Stale {
		fmt.Fprintf(out, "  ! %s\n", s)
	}
	if len(c.NotCompared) > 0 {
		var rs []string
		for r, n := range c.NotCompared {
			rs = append(rs, fmt.Sprintf("%s ×%d", r, n))
		}
		slices.Sort(rs)
		fmt.Fprintf(out, "Not compared (reasons of the implementation's own, which gwdev does not compute): %s\n", strings.Join(rs, ", "))
	}
	slices.SortStableFunc(c.Disagreements, func(a, b Disagreement) int {
		return cmp.Or(cmp.Compare(a.Object.String(), b.Object.String()), cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Condition, b.Condition))
	})
	if len(c.Disagreements) == 0 {
		fmt.Fprintf(out, "The controller's status agrees with the spec: %s compared.\n", Plural(c.Agreed, "condition"))
		return len(lr.Problems) == 0
	}
	fmt.Fprintf(out, "%s where the controller's status and the spec's disagree (%d agree):\n", Plural(len(c.Disagreements), "condition"), c.Agreed)
	for _, d := range c.Disagreements {
		fmt.Fprintf(out, "  ✗ %s%s  %s: controller %s, spec %s\n", d.Object, ScopeSuffix(d.Scope), d.Condition, d.Controller, d.Spec)
		if d.Message != "" {
			fmt.Fprintf(out, "      gwdev: %s\n", d.Message)
		}
	}
	return false
}
