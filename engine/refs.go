package engine

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// reference is one cross-object reference, as ReferenceGrant sees it.
type reference struct {
	fromGroup, fromKind, fromNamespace string
	toGroup, toKind, toNamespace       string
	toName                             string
}

// refPermitted reports whether a reference is allowed: always within a
// namespace, across namespaces only when a ReferenceGrant in the target
// namespace lists the source (group, kind, namespace) in `from` and the
// target (group, kind, optional name) in `to`.
func (t *translator) refPermitted(r reference) bool {
	if r.fromNamespace == r.toNamespace {
		return true
	}
	for _, g := range t.out.ReferenceGrants {
		if g.Namespace != r.toNamespace {
			continue
		}
		if grantAllows(g, r) {
			return true
		}
	}
	return false
}

func grantAllows(g *gwv1.ReferenceGrant, r reference) bool {
	fromOK := false
	for _, f := range g.Spec.From {
		if string(f.Group) == r.fromGroup && string(f.Kind) == r.fromKind && string(f.Namespace) == r.fromNamespace {
			fromOK = true
			break
		}
	}
	if !fromOK {
		return false
	}
	for _, to := range g.Spec.To {
		if string(to.Group) != r.toGroup || string(to.Kind) != r.toKind {
			continue
		}
		if to.Name == nil || *to.Name == "" || string(*to.Name) == r.toName {
			return true
		}
	}
	return false
}

// namespaceLabels returns a namespace's labels: those of its manifest, plus
// kubernetes.io/metadata.name, which the apiserver sets on every namespace.
func (t *translator) namespaceLabels(ns string) labels.Set {
	set := labels.Set{corev1.LabelMetadataName: ns}
	if n := t.namespaces[ns]; n != nil {
		for k, v := range n.Labels {
			set[k] = v
		}
	}
	return set
}

// namespaceSelected evaluates a from/selector pair (allowedRoutes or
// allowedListeners) for an object in ns, owned by ownerNS. It returns false
// and an explanation when the namespace is not selected.
func (t *translator) namespaceSelected(from gwv1.FromNamespaces, sel *metav1.LabelSelector, ownerNS, ns string) (bool, string) {
	switch from {
	case gwv1.NamespacesFromAll:
		return true, ""
	case gwv1.NamespacesFromSame, "":
		if ns == ownerNS {
			return true, ""
		}
		return false, "only namespace " + ownerNS + " is allowed (from: Same)"
	case gwv1.NamespacesFromSelector:
		if sel == nil {
			return false, "from: Selector without a selector selects nothing"
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return false, "invalid selector: " + err.Error()
		}
		if s.Matches(t.namespaceLabels(ns)) {
			return true, ""
		}
		return false, "namespace " + ns + " does not match the selector " + s.String()
	case gwv1.NamespacesFromNone:
		return false, "no namespace is allowed (from: None)"
	}
	return false, "unknown from value " + string(from)
}
