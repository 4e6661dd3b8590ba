package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/watch"
)

// runCluster is `gwdev check --cluster`: it reads the cluster's objects
// and the status its controllers wrote, computes the spec's status and
// prints every condition where they disagree; exit 1 when any does.
// Secrets that listeners refer to are read to resolve certificates (in
// memory only; a Secret gwdev may not read is a note).
func (o *checkOptions) runCluster(ctx context.Context, out io.Writer, now metav1.Time) error {
	opts, err := o.cluster.options(true)
	if err != nil {
		return err
	}
	objs, err := watch.ReadCluster(ctx, opts)
	if err != nil {
		return err
	}
	// In streams the loader takes (watch.MaxFileSize each), as pull writes
	// them.
	parts, err := watch.ManifestFiles(objs.Objects, watch.MaxFileSize)
	if err != nil {
		return err
	}
	// --crds (a bundle name, or the cluster's own `kubectl get crd -o yaml`)
	// judges the objects as that cluster's API server does, as for a folder.
	proj, err := app.OpenProject(nil, app.ProjectFlags{Profiles: o.profiles, CRDs: o.crds, Classes: o.classes})
	if err != nil {
		return err
	}
	var lr *watch.LoadResult
	if len(parts) <= 1 {
		var data []byte
		if len(parts) == 1 {
			data = parts[0].Data
		}
		lr = proj.LoadBytes("cluster "+objs.Context, data)
	} else {
		results := make([]*watch.LoadResult, len(parts))
		for i, part := range parts {
			results[i] = proj.LoadBytes(fmt.Sprintf("cluster %s (part %d)", objs.Context, i+1), part.Data)
		}
		lr = watch.Merge(results...)
	}
	res := proj.Translate(lr.Snapshot, app.Translation{Now: now, NoServing: true})
	c, err := app.CompareCluster(objs.Objects, res)
	if err != nil {
		return err
	}
	if !printComparison(out, objs, lr, c) {
		return exitError{code: exitProblems}
	}
	return nil
}

// printComparison writes the comparison and returns whether they agree.
func printComparison(out io.Writer, objs *watch.ClusterObjects, lr *watch.LoadResult, c *app.ClusterComparison) bool {
	where := "namespace " + objs.Namespace
	if objs.Namespace == "" {
		where = "every namespace"
	}
	fmt.Fprintf(out, "Cluster: context %s (%s), %s: %s read.\n", objs.Context, objs.Server, where, plural(len(objs.Objects), "object"))
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
	slices.SortStableFunc(c.Disagreements, func(a, b app.Disagreement) int {
		return cmp.Or(cmp.Compare(a.Object.String(), b.Object.String()), cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Condition, b.Condition))
	})
	if len(c.Disagreements) == 0 {
		fmt.Fprintf(out, "The controller's status agrees with the spec: %s compared.\n", plural(c.Agreed, "condition"))
		return len(lr.Problems) == 0
	}
	fmt.Fprintf(out, "%s where the controller's status and the spec's disagree (%d agree):\n", plural(len(c.Disagreements), "condition"), c.Agreed)
	for _, d := range c.Disagreements {
		fmt.Fprintf(out, "  ✗ %s%s  %s: controller %s, spec %s\n", d.Object, app.ScopeSuffix(d.Scope), d.Condition, d.Controller, d.Spec)
		if d.Message != "" {
			fmt.Fprintf(out, "      gwdev: %s\n", d.Message)
		}
	}
	return false
}
