package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/watch"
)

// specReasons are the condition reasons the Gateway API defines (the
// *ConditionReason constants of sigs.k8s.io/gateway-api/apis/v1;
// TestSpecReasonsMatchTheAPI keeps the list equal to the module's). A
// controller's condition is compared with gwdev's only when its reason is
// one of them: other reasons are the implementation's own, which gwdev
// cannot compute.
var specReasons = map[string]bool{}

func init() {
	for _, r := range strings.Fields(`Accepted AddressNotAssigned AddressNotUsable AddressesAssigned Attached BackendNotFound
		ConfigurationChanged Conflicted HostnameConflict IncompatibleFilters Invalid InvalidCACertificateKind
		InvalidCACertificateRef InvalidCertificateRef InvalidClientCertificateRef InvalidKind InvalidParameters
		InvalidRouteKinds ListenerConflict ListenersNotReady ListenersNotResolved ListenersNotValid NoConflicts
		NoMatchingListenerHostname NoMatchingParent NoResources NoValidCACertificate NotAllowed
		NotAllowedByListeners NotAssigned NotReconciled OverlappingCertificates OverlappingHostnames ParentNotAccepted PartiallyAssigned
		Pending PortUnavailable Programmed ProtocolConflict Ready RefNotPermitted ResolvedRefs Scheduled
		SupportedVersion TargetNotFound TooManyListeners Unsupported UnsupportedAddress UnsupportedProtocol
		UnsupportedValue UnsupportedVersion Waiting`) {
		specReasons[r] = true
	}
}

// conditionsView is the part of any Gateway API status that holds conditions:
// the object's, its listeners', its parents' (routes) and ancestors'
// (policies).
type conditionsView struct {
	Conditions []metav1.Condition `json:"conditions"`
	Listeners  []struct {
		Name       string             `json:"name"`
		Conditions []metav1.Condition `json:"conditions"`
	} `json:"listeners"`
	Parents   []parentView `json:"parents"`
	Ancestors []struct {
		AncestorRef    map[string]any     `json:"ancestorRef"`
		ControllerName string             `json:"controllerName"`
		Conditions     []metav1.Condition `json:"conditions"`
	} `json:"ancestors"`
}

// parentView is one parent (or ancestor) entry of a status.
type parentView struct {
	ParentRef      map[string]any     `json:"parentRef"`
	ControllerName string             `json:"controllerName"`
	Conditions     []metav1.Condition `json:"conditions"`
}

// statusOf decodes the status of an object (typed or unstructured).
func statusOf(obj any) (conditionsView, error) {
	var v conditionsView
	var raw any = obj
	if u, ok := obj.(*unstructured.Unstructured); ok {
		raw = u.Object
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return v, err
	}
	var wrap struct {
		Status conditionsView `json:"status"`
	}
	err = json.Unmarshal(data, &wrap)
	return wrap.Status, err
}

// disagreement is one condition where the controller and the spec differ.
type disagreement struct {
	object engine.ObjectKey
	// scope is "" (the object), "listener NAME" or "parent Gateway ns/name".
	scope      string
	condition  string
	controller string // "True (Accepted)" or "not written"
	spec       string
	message    string // gwdev's
}

// clusterComparison is the result of comparing every object's status.
type clusterComparison struct {
	disagreements []disagreement
	agreed        int
	// notCompared counts the controller's conditions with reasons of its
	// own, by reason.
	notCompared map[string]int
	// stale lists conditions the controller wrote for an older generation.
	stale []string
	// noStatus lists the objects the controller wrote no status for.
	noStatus []engine.ObjectKey
}

// compareCluster compares the status the cluster's controllers wrote with
// the status gwdev computed from the same objects.
func compareCluster(objs []*unstructured.Unstructured, res *engine.Result) (*clusterComparison, error) {
	c := &clusterComparison{notCompared: map[string]int{}}
	cluster := map[engine.ObjectKey]*unstructured.Unstructured{}
	classController := map[string]string{} // GatewayClass → controllerName
	gatewayClass := map[string]string{}    // "ns/name" → class
	for _, u := range objs {
		cluster[engine.ObjectKey{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}] = u
		switch u.GetKind() {
		case "GatewayClass":
			classController[u.GetName()], _, _ = unstructured.NestedString(u.Object, "spec", "controllerName")
		case "Gateway":
			gatewayClass[u.GetNamespace()+"/"+u.GetName()], _, _ = unstructured.NestedString(u.Object, "spec", "gatewayClassName")
		}
	}
	var err error
	res.Objects.Each(func(key engine.ObjectKey, obj metav1.Object) {
		u := cluster[key]
		k := engine.KindNamed(key.Kind)
		if err != nil || u == nil || k == nil || !k.Status {
			return
		}
		var mine, theirs conditionsView
		if mine, err = statusOf(obj); err != nil {
			return
		}
		if theirs, err = statusOf(u); err != nil {
			return
		}
		if len(theirs.Conditions)+len(theirs.Listeners)+len(theirs.Parents)+len(theirs.Ancestors) == 0 &&
			len(mine.Conditions)+len(mine.Parents)+len(mine.Ancestors) > 0 {
			c.noStatus = append(c.noStatus, key)
		}
		gen := u.GetGeneration()
		c.conditions(key, "", mine.Conditions, theirs.Conditions, gen)
		for _, l := range mine.Listeners {
			for _, tl := range theirs.Listeners {
				if tl.Name == l.Name {
					c.conditions(key, "listener "+l.Name, l.Conditions, tl.Conditions, gen)
				}
			}
		}
		for _, p := range mine.Parents {
			want := classController[gatewayClass[refNamespace(p.ParentRef, key.Namespace)+"/"+fmt.Sprint(p.ParentRef["name"])]]
			tp := matchParent(p.ParentRef, key.Namespace, want, theirs.Parents)
			scope := "parent " + app.RefString(p.ParentRef, key.Namespace)
			if tp == nil {
				c.conditions(key, scope, p.Conditions, nil, gen)
				continue
			}
			c.conditions(key, scope, p.Conditions, tp.Conditions, gen)
		}
		for _, a := range mine.Ancestors {
			var theirsP []parentView
			for _, ta := range theirs.Ancestors {
				theirsP = append(theirsP, parentView{ParentRef: ta.AncestorRef, ControllerName: ta.ControllerName, Conditions: ta.Conditions})
			}
			scope := "ancestor " + app.RefString(a.AncestorRef, key.Namespace)
			if tp := matchParent(a.AncestorRef, key.Namespace, "", theirsP); tp != nil {
				c.conditions(key, scope, a.Conditions, tp.Conditions, gen)
			} else {
				c.conditions(key, scope, a.Conditions, nil, gen)
			}
		}
	})
	return c, err
}

// conditions compares one list of conditions.
func (c *clusterComparison) conditions(key engine.ObjectKey, scope string, mine, theirs []metav1.Condition, gen int64) {
	for _, m := range mine {
		i := slices.IndexFunc(theirs, func(t metav1.Condition) bool { return t.Type == m.Type })
		if i < 0 {
			// Controllers write the conditions that matter; a missing one
			// counts only where the spec's says something is wrong, or
			// for Accepted, which every controller writes.
			if m.Type == "Accepted" || engine.ConditionIsProblem(m.Type, string(m.Status)) {
				c.disagreements = append(c.disagreements, disagreement{object: key, scope: scope, condition: m.Type,
					controller: "not written", spec: condWord(m), message: m.Message})
			}
			continue
		}
		t := theirs[i]
		if !specReasons[t.Reason] {
			c.notCompared[t.Reason]++
			continue
		}
		if t.ObservedGeneration != 0 && gen != 0 && t.ObservedGeneration < gen {
			c.stale = append(c.stale, fmt.Sprintf("%s%s %s: the controller's condition is for generation %d, the object is at %d",
				key, scopeSuffix(scope), t.Type, t.ObservedGeneration, gen))
		}
		if t.Status == m.Status && t.Reason == m.Reason {
			c.agreed++
			continue
		}
		c.disagreements = append(c.disagreements, disagreement{object: key, scope: scope, condition: m.Type,
			controller: condWord(t), spec: condWord(m), message: m.Message})
	}
}

func condWord(c metav1.Condition) string { return string(c.Status) + " (" + c.Reason + ")" }

func scopeSuffix(scope string) string {
	if scope == "" {
		return ""
	}
	return " " + scope
}

// refNamespace is a parentRef's namespace, defaulted to the route's.
func refNamespace(r map[string]any, ns string) string {
	if n, _ := r["namespace"].(string); n != "" {
		return n
	}
	return ns
}

// matchParent finds the controller's entry for a parentRef: the same
// reference, written by the parent's class's controller when several
// controllers wrote one (controller "": any).
func matchParent(ref map[string]any, ns, controller string, theirs []parentView) *parentView {
	var found *parentView
	for i := range theirs {
		if app.RefString(theirs[i].ParentRef, ns) != app.RefString(ref, ns) {
			continue
		}
		if controller == "" || theirs[i].ControllerName == controller {
			return &theirs[i]
		}
		if found == nil {
			found = &theirs[i]
		}
	}
	return found
}

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
	data, err := watch.ManifestYAML(objs.Objects)
	if err != nil {
		return err
	}
	// --crds (a bundle name, or the cluster's own `kubectl get crd -o yaml`)
	// judges the objects as that cluster's API server does, as for a folder.
	proj, err := app.OpenProject(nil, app.ProjectFlags{Profiles: o.profiles, CRDs: o.crds, Classes: o.classes})
	if err != nil {
		return err
	}
	lr := proj.LoadBytes("cluster "+objs.Context, data)
	res := proj.Translate(lr.Snapshot, app.Translation{Now: now, NoServing: true})
	c, err := compareCluster(objs.Objects, res)
	if err != nil {
		return err
	}
	if !printComparison(out, objs, lr, c) {
		return exitError{code: exitProblems}
	}
	return nil
}

// printComparison writes the comparison and returns whether they agree.
func printComparison(out io.Writer, objs *watch.ClusterObjects, lr *watch.LoadResult, c *clusterComparison) bool {
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
	for _, k := range c.noStatus {
		fmt.Fprintf(out, "  ! %s: no controller wrote status\n", k)
	}
	for _, s := range c.stale {
		fmt.Fprintf(out, "  ! %s\n", s)
	}
	if len(c.notCompared) > 0 {
		var rs []string
		for r, n := range c.notCompared {
			rs = append(rs, fmt.Sprintf("%s ×%d", r, n))
		}
		slices.Sort(rs)
		fmt.Fprintf(out, "Not compared (reasons of the implementation's own, which gwdev does not compute): %s\n", strings.Join(rs, ", "))
	}
	slices.SortStableFunc(c.disagreements, func(a, b disagreement) int {
		return cmp.Or(cmp.Compare(a.object.String(), b.object.String()), cmp.Compare(a.scope, b.scope), cmp.Compare(a.condition, b.condition))
	})
	if len(c.disagreements) == 0 {
		fmt.Fprintf(out, "The controller's status agrees with the spec: %s compared.\n", plural(c.agreed, "condition"))
		return len(lr.Problems) == 0
	}
	fmt.Fprintf(out, "%s where the controller's status and the spec's disagree (%d agree):\n", plural(len(c.disagreements), "condition"), c.agreed)
	for _, d := range c.disagreements {
		fmt.Fprintf(out, "  ✗ %s%s  %s: controller %s, spec %s\n", d.object, scopeSuffix(d.scope), d.condition, d.controller, d.spec)
		if d.message != "" {
			fmt.Fprintf(out, "      gwdev: %s\n", d.message)
		}
	}
	return false
}
