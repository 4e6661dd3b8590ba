package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
)

// SpecReasons are the condition reasons the Gateway API defines (the
// *ConditionReason constants of sigs.k8s.io/gateway-api/apis/v1;
// TestSpecReasonsMatchTheAPI keeps the list equal to the module's). A
// controller's condition is compared with gwdev's only when its reason is
// one of them: other reasons are the implementation's own, which gwdev
// cannot compute.
var SpecReasons = map[string]bool{}

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
		SpecReasons[r] = true
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

// CompareCluster compares the status the cluster's controllers wrote with
// the status gwdev computed from the same objects.
func CompareCluster(objs []*unstructured.Unstructured, res *engine.Result) (*report.ClusterComparison, error) {
	c := &report.ClusterComparison{NotCompared: map[string]int{}}
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
			c.NoStatus = append(c.NoStatus, key)
		}
		gen := u.GetGeneration()
		addConditions(c, key, "", mine.Conditions, theirs.Conditions, gen)
		for _, l := range mine.Listeners {
			for _, tl := range theirs.Listeners {
				if tl.Name == l.Name {
					addConditions(c, key, "listener "+l.Name, l.Conditions, tl.Conditions, gen)
				}
			}
		}
		for _, p := range mine.Parents {
			want := classController[gatewayClass[refNamespace(p.ParentRef, key.Namespace)+"/"+fmt.Sprint(p.ParentRef["name"])]]
			tp := matchParent(p.ParentRef, key.Namespace, want, theirs.Parents)
			scope := "parent " + RefString(p.ParentRef, key.Namespace)
			if tp == nil {
				addConditions(c, key, scope, p.Conditions, nil, gen)
				continue
			}
			addConditions(c, key, scope, p.Conditions, tp.Conditions, gen)
		}
		for _, a := range mine.Ancestors {
			var theirsP []parentView
			for _, ta := range theirs.Ancestors {
				theirsP = append(theirsP, parentView{ParentRef: ta.AncestorRef, ControllerName: ta.ControllerName, Conditions: ta.Conditions})
			}
			scope := "ancestor " + RefString(a.AncestorRef, key.Namespace)
			if tp := matchParent(a.AncestorRef, key.Namespace, "", theirsP); tp != nil {
				addConditions(c, key, scope, a.Conditions, tp.Conditions, gen)
			} else {
				addConditions(c, key, scope, a.Conditions, nil, gen)
			}
		}
	})
	return c, err
}

// addConditions compares one list of conditions into c.
func addConditions(c *report.ClusterComparison, key engine.ObjectKey, scope string, mine, theirs []metav1.Condition, gen int64) {
	for _, m := range mine {
		i := slices.IndexFunc(theirs, func(t metav1.Condition) bool { return t.Type == m.Type })
		if i < 0 {
			// Controllers write the conditions that matter; a missing one
			// counts only where the spec's says something is wrong, or
			// for Accepted, which every controller writes.
			if m.Type == "Accepted" || engine.ConditionIsProblem(m.Type, string(m.Status)) {
				c.Disagreements = append(c.Disagreements, report.Disagreement{Object: key, Scope: scope, Condition: m.Type,
					Controller: "not written", Spec: condWord(m), Message: m.Message})
			}
			continue
		}
		t := theirs[i]
		if !SpecReasons[t.Reason] {
			c.NotCompared[t.Reason]++
			continue
		}
		if t.ObservedGeneration != 0 && gen != 0 && t.ObservedGeneration < gen {
			c.Stale = append(c.Stale, fmt.Sprintf("%s%s %s: the controller's condition is for generation %d, the object is at %d",
				key, report.ScopeSuffix(scope), t.Type, t.ObservedGeneration, gen))
		}
		if t.Status == m.Status && t.Reason == m.Reason {
			c.Agreed++
			continue
		}
		c.Disagreements = append(c.Disagreements, report.Disagreement{Object: key, Scope: scope, Condition: m.Type,
			Controller: condWord(t), Spec: condWord(m), Message: m.Message})
	}
}

func condWord(c metav1.Condition) string { return string(c.Status) + " (" + c.Reason + ")" }

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
		if RefString(theirs[i].ParentRef, ns) != RefString(ref, ns) {
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
