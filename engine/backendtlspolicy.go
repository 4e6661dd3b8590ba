package engine

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// policyState is a BackendTLSPolicy during translation.
type policyState struct {
	obj  *gwv1.BackendTLSPolicy
	key  ObjectKey
	cond *conditionSet // applies to every ancestor
	tls  *BackendTLS
	// invalid is why backends using the policy must fail ("" : usable).
	invalid string
	// ancestors are the Gateways whose routes use a targeted Service.
	ancestors []*gatewayState
	// lost records targets where an older policy won.
	lost []string
}

// policyTarget is a Service, optionally narrowed to one port name.
type policyTarget struct {
	ns, service, section string
}

// processBackendTLSPolicies resolves every policy, decides conflicts (older
// first, then namespace/name) and attaches the winning policy's TLS settings
// to every backend of a targeted Service port.
func (t *translator) processBackendTLSPolicies() {
	pols := make([]*policyState, 0, len(t.out.BackendTLSPolicies))
	for _, p := range t.out.BackendTLSPolicies {
		ps := &policyState{obj: p, key: ObjectKey{Kind: "BackendTLSPolicy", Namespace: p.Namespace, Name: p.Name},
			cond: newConditionSet(p.Generation, &t.opts.Now)}
		t.resolvePolicy(ps)
		pols = append(pols, ps)
	}
	claims := newPolicyClaims[policyTarget]("BackendTLSPolicy", pols,
		func(ps *policyState) object { return ps.obj }, func(ps *policyState) ObjectKey { return ps.key })
	targets := backendTLSPolicyTargets()
	for _, ps := range pols {
		won := 0
		for _, tr := range ps.obj.Spec.TargetRefs {
			if !targets.Allows(string(tr.Group), string(tr.Kind)) {
				msg := fmt.Sprintf("targetRef %s %s: only core Services can be targeted", groupKind(string(tr.Group), string(tr.Kind)), tr.Name)
				ps.cond.fail(string(gwv1.PolicyConditionAccepted), string(gwv1.PolicyReasonInvalid), msg)
				t.effect(PolicyEffect{Policy: ps.key, Target: ObjectKey{Kind: string(tr.Kind), Namespace: ps.obj.Namespace, Name: string(tr.Name)},
					Reason: string(gwv1.PolicyReasonInvalid), Message: msg})
				continue
			}
			pt := policyTarget{ns: ps.obj.Namespace, service: string(tr.Name)}
			if tr.SectionName != nil {
				pt.section = string(*tr.SectionName)
			}
			if svc := t.service(pt.ns, pt.service); svc != nil && pt.section != "" && !hasPortNamed(svc, pt.section) {
				// "If a SectionName is specified, but does not exist on the
				// targeted object, the Policy must fail to attach."
				msg := fmt.Sprintf("targetRef Service %s/%s sectionName %q: the Service has no port of that name", pt.ns, pt.service, pt.section)
				ps.cond.fail(string(gwv1.PolicyConditionAccepted), string(gwv1.PolicyReasonTargetNotFound), msg)
				t.effect(PolicyEffect{Policy: ps.key, Target: backendTLSTarget(pt), Section: pt.section,
					Reason: string(gwv1.PolicyReasonTargetNotFound), Message: msg})
				continue
			}
			if holder, won := claims.claim(pt, ps); !won {
				entry, msg := lostServiceMessages(pt.ns+"/"+pt.service, holder)
				ps.lost = append(ps.lost, entry)
				t.effect(conflictedEffect(ps.key, backendTLSTarget(pt), pt.section, msg))
				continue
			}
			won++
			if t.service(pt.ns, pt.service) == nil {
				t.noteKind(NoteRefNotFound, SeverityWarning, ps.key, "targetRefs", "target Service "+pt.ns+"/"+pt.service+" not found")
			}
		}
		if won > 0 && len(ps.lost) > 0 {
			t.notePartlyConflicted(ps.key, ps.lost)
		}
	}
	for _, ps := range pols {
		if len(ps.lost) > 0 && len(ps.lost) == len(ps.obj.Spec.TargetRefs) {
			failConflicted(ps.cond, ps.lost)
		}
	}
	t.policies = pols
	winners := claims.winners
	t.recordBackendTLSWinners(winners)
	if len(winners) == 0 {
		return // no backend to change
	}
	for _, r := range t.routes {
		t.ownRules(r) // incremental.go
		for _, b := range r.backends() {
			t.applyPolicy(b, winners)
		}
		for _, rr := range r.rules {
			finishRuleResponse(rr) // a policy may have made every backend invalid
		}
	}
}

// backendTLSPolicyTargets is what a BackendTLSPolicy may target (the
// registry's entry: core Services, a port by sectionName).
func backendTLSPolicyTargets() *PolicyTargets { return PolicyOf(Group, "BackendTLSPolicy") }

// hasPortNamed reports whether the Service has a port with that name.
func hasPortNamed(svc *Service, name string) bool {
	for _, sp := range svc.Spec.Ports {
		if sp.Name == name {
			return true
		}
	}
	return false
}

// applyPolicy attaches the policy for the backend's Service port, if any.
func (t *translator) applyPolicy(b *Backend, winners map[policyTarget]*policyState) {
	if b.Invalid != "" || !backendTLSPolicyTargets().AllowsObject(b.Service) {
		return
	}
	section := ""
	if svc := t.service(b.Service.Namespace, b.Service.Name); svc != nil {
		for _, sp := range svc.Spec.Ports {
			if sp.Port == b.Port {
				section = sp.Name
			}
		}
	}
	ps := winners[policyTarget{b.Service.Namespace, b.Service.Name, section}]
	if ps == nil {
		ps = winners[policyTarget{b.Service.Namespace, b.Service.Name, ""}]
	}
	if ps == nil {
		return
	}
	if ps.invalid != "" {
		b.Invalid = "BackendTLSPolicy " + ps.key.Namespace + "/" + ps.key.Name + ": " + ps.invalid
		b.Target = nil
		return
	}
	if !ps.cond.isFalse(string(gwv1.PolicyConditionAccepted)) {
		b.TLS = ps.tls
	}
}

// resolvePolicy checks the CA references and builds the TLS settings.
func (t *translator) resolvePolicy(ps *policyState) {
	v := ps.obj.Spec.Validation
	tls := &BackendTLS{Policy: ps.key.Namespace + "/" + ps.key.Name, SNI: string(v.Hostname), SubjectAltNames: compileSubjectAltNames(v.SubjectAltNames)}
	ps.tls = tls
	acc, res := string(gwv1.PolicyConditionAccepted), string(gwv1.BackendTLSPolicyConditionResolvedRefs)
	if v.WellKnownCACertificates != nil {
		if *v.WellKnownCACertificates == gwv1.WellKnownCACertificatesSystem {
			tls.System = true
		} else {
			ps.cond.fail(acc, string(gwv1.PolicyReasonInvalid), "wellKnownCACertificates "+string(*v.WellKnownCACertificates)+" is not supported")
			ps.invalid = "unsupported wellKnownCACertificates"
		}
	}
	valid := 0
	for i, ref := range v.CACertificateRefs {
		data, what, reason, msg := t.policyCA(ps.obj.Namespace, ref)
		if data == nil {
			ps.cond.fail(res, reason, fmt.Sprintf("caCertificateRefs[%d]: %s", i, msg))
			continue
		}
		valid++
		tls.CACertificates = append(tls.CACertificates, data...)
		tls.CARefs = append(tls.CARefs, what)
	}
	if len(v.CACertificateRefs) > 0 && valid == 0 {
		ps.cond.fail(acc, string(gwv1.BackendTLSPolicyReasonNoValidCACertificate), "no caCertificateRef is valid")
		ps.invalid = "no valid CA certificate"
	}
	t.policyTLSOptions(ps) // tlsoptions.go
	ps.cond.setDefault(res, metav1.ConditionTrue, string(gwv1.BackendTLSPolicyReasonResolvedRefs), "all references are resolved")
}

// policyCA loads the CA bundle of a caCertificateRef: ca.crt of a ConfigMap
// or Secret in the policy's namespace, or a ClusterTrustBundle by name (the
// v1.7.0 spec: "A single CACertificateRef to a ClusterTrustBundle uses the
// cluster-scoped resource by name"). It returns the bundle and the name for
// CARefs, or a reason and message.
func (t *translator) policyCA(ns string, ref gwv1.LocalObjectReference) ([]byte, string, string, string) {
	data, known, what, msg := t.caBundle(string(ref.Group), string(ref.Kind), ns, string(ref.Name))
	if !known {
		return nil, "", string(gwv1.BackendTLSPolicyReasonInvalidKind),
			fmt.Sprintf("%s %s/%s: only %s are supported", groupKind(string(ref.Group), string(ref.Kind)), ns, ref.Name, caKinds)
	}
	if data == nil {
		return nil, "", string(gwv1.BackendTLSPolicyReasonInvalidCACertificateRef), msg
	}
	return data, what, "", ""
}

// policyAncestors lists the Gateways using any Service the policy targets.
func (t *translator) policyAncestors(ps *policyState) []*gatewayState {
	var out []*gatewayState
	seen := map[*gatewayState]bool{}
	for _, tr := range ps.obj.Spec.TargetRefs {
		for _, g := range t.backendUses[nsName{ps.obj.Namespace, string(tr.Name)}] {
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].key.String() < out[j].key.String() })
	return out
}
