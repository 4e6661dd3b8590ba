package engine

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// policies adds a node for every policy object (GEP-713 policy
// attachment: a kind of the registry with Kind.Policy, or a profile's
// policy kind) and, from the result's PolicyEffects, a policy edge to each
// target it names: the target's node, or the node of the section it names
// when the graph has one (a Service port by name, a listener); a Service
// is every port node the routes use. The node's Detail is what the policy
// does where it applies; a target the policy does not apply to (missing,
// invalid, conflicted) is a refused edge, and the node's Problem names the
// first such target. A target with no node (not in the manifests, or a
// Service no route uses) gets no edge: the node says it, as a route whose
// parent does not exist is a root with its problem. Effects on objects the
// policy kind cannot name (XBackendTrafficPolicy's on the routes that use
// its Service) are where it acts, not targets, and are not edges.
func (b *graphBuilder) policies(r *Result) {
	effects := map[ObjectKey][]PolicyEffect{}
	for _, e := range r.Policies {
		effects[e.Policy] = append(effects[e.Policy], e)
	}
	ports := map[ObjectKey][]string{} // a backend's port nodes (backends)
	for _, n := range b.g.Nodes {
		if n.Kind == "Service" {
			ports[n.Object] = append(ports[n.Object], n.ID)
		}
	}
	r.Objects.Each(func(k ObjectKey, o metav1.Object) {
		pt := policyTargetsOf(k, o)
		if pt == nil {
			return
		}
		id := graphID(k)
		n := b.node(&GraphNode{ID: id, Kind: k.Kind, Label: k.Kind + " " + k.Namespace + "/" + k.Name, Object: k, Policy: true})
		var does []string
		missing := false // the problem names a target with no node
		for _, e := range effects[k] {
			if e.Applied && !pt.AllowsObject(e.Target) {
				continue // where the policy acts, not what it names
			}
			tos, section := b.policyTargets(r, ports, e.Target, e.Section)
			target := e.Target.Kind + " " + e.Target.Namespace + "/" + e.Target.Name
			if e.Applied {
				m := e.Message
				if len(tos) == 0 {
					m += " (" + target + " is not in the graph)"
				}
				if !contains(does, m) {
					does = append(does, m)
				}
			} else if n.Problem == "" || (!missing && len(tos) == 0) {
				n.Problem, missing = e.Reason+": "+target, len(tos) == 0
				if e.Section != "" {
					n.Problem += " section " + e.Section
				}
			}
			label := ""
			if section != "" {
				label = "section " + section
			}
			for _, to := range tos {
				ge := GraphEdge{From: id, To: to, Label: label, Policy: true}
				if !e.Applied {
					ge.Problem, ge.Refused = e.Reason, true
				}
				b.edge(ge)
			}
		}
		n.Detail = strings.Join(does, "; ")
	})
}

// policyTargetsOf is what the policy k may target (nil: k is not a
// policy): the registry answers for its kinds, PolicyOf for a profile's
// (an ImplementationPolicy carries its own group and kind).
func policyTargetsOf(k ObjectKey, o metav1.Object) *PolicyTargets {
	if e := KindNamed(k.Kind); e != nil {
		return e.Policy
	}
	if ip, ok := o.(*ImplementationPolicy); ok {
		return PolicyOf(ip.GroupVersionKind().Group, ip.Kind)
	}
	return nil
}

// policyTargets returns the nodes a policy's target k (narrowed to
// section, "" : all of it) is drawn as, and the section when no node of
// its own stands for it (an edge to the whole target then names it).
// ports are the backend port nodes by the object they stand for.
func (b *graphBuilder) policyTargets(r *Result, ports map[ObjectKey][]string, k ObjectKey, section string) (ids []string, unresolved string) {
	if section != "" {
		if id := graphID(k) + "/listener/" + section; b.nodes[id] != nil {
			return []string{id}, ""
		}
		if port, ok := servicePortNamed(r, k, section); ok {
			if id := backendNodeID(k, port); b.nodes[id] != nil && b.nodes[id].Object == k {
				return []string{id}, ""
			}
		}
		unresolved = section
	}
	if n := b.nodes[graphID(k)]; n != nil && n.Object == k && !n.Policy {
		ids = append(ids, n.ID)
	}
	return append(ids, ports[k]...), unresolved
}

// servicePortNamed is the number of the port named name of the Service k
// (ok false: no such Service or port).
func servicePortNamed(r *Result, k ObjectKey, name string) (int32, bool) {
	if k.Kind != "Service" {
		return 0, false
	}
	for _, s := range r.Objects.Services {
		if s.Namespace == k.Namespace && s.Name == k.Name {
			for _, p := range s.Spec.Ports {
				if p.Name == name {
					return p.Port, true
				}
			}
		}
	}
	return 0, false
}

// backendNodeID is the ID of a backend's node: "service/<ns>/<name>:<port>"
// (backends).
func backendNodeID(k ObjectKey, port int32) string {
	return fmt.Sprintf("service/%s/%s:%d", k.Namespace, k.Name, port)
}
