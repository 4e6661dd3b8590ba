package engine

import (
	"fmt"
	"sort"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// PolicyEffect says what one policy does to one object it targets: applied
// (and how), or refused (and why). It is recorded where the translation
// decides, so it is the same answer the status and the table give.
type PolicyEffect struct {
	// Policy is the policy (BackendTLSPolicy, or an implementation-profile
	// policy such as gwin's RoutePolicy).
	Policy ObjectKey `json:"policy"`
	// Target is the object the policy names or selects.
	Target ObjectKey `json:"target"`
	// Section narrows the target (a Service port name; "" : all of it).
	Section string `json:"section,omitempty"`
	// Applied is set when the policy takes effect on the target.
	Applied bool `json:"applied"`
	// Reason is a condition-style reason: Accepted, Conflicted, Invalid,
	// TargetNotFound, NoValidCACertificate, NotThisProfile.
	Reason string `json:"reason"`
	// Message says what the policy does there, or why it does nothing.
	Message string `json:"message"`
}

// PolicyName names the policy as check --policies and the TUI's Detail
// view list it: "BackendTLSPolicy ns/name", with the section it narrows
// the target to ("… (port https)": a section of a Service is a port).
func (e PolicyEffect) PolicyName() string {
	s := e.Policy.Kind + " " + e.Policy.Namespace + "/" + e.Policy.Name
	if e.Section != "" {
		s += " (port " + e.Section + ")"
	}
	return s
}

// PoliciesFor lists the policies that target k, applied ones first, then
// by policy.
func (r *Result) PoliciesFor(k ObjectKey) []PolicyEffect {
	var out []PolicyEffect
	for _, e := range r.Policies {
		if e.Target == k {
			out = append(out, e)
		}
	}
	return out
}

// effect records what a policy does to a target.
func (t *translator) effect(e PolicyEffect) { t.effects = append(t.effects, e) }

// sortedEffects returns the recorded effects by target, applied first,
// then by policy and section.
func (t *translator) sortedEffects() []PolicyEffect {
	es := t.effects
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Target != b.Target {
			return a.Target.String() < b.Target.String()
		}
		if a.Applied != b.Applied {
			return a.Applied
		}
		if a.Policy != b.Policy {
			return a.Policy.String() < b.Policy.String()
		}
		return a.Section < b.Section
	})
	return es
}

// backendTLSTarget names a BackendTLSPolicy target as an object.
func backendTLSTarget(pt policyTarget) ObjectKey {
	return ObjectKey{Kind: "Service", Namespace: pt.ns, Name: pt.service}
}

// recordBackendTLSWinners records, once conflicts are decided, what each
// winning BackendTLSPolicy does to its Service: TLS to the backends, or
// nothing because the policy is not accepted or cannot be used.
func (t *translator) recordBackendTLSWinners(winners map[policyTarget]*policyState) {
	for pt, ps := range winners {
		e := PolicyEffect{Policy: ps.key, Target: backendTLSTarget(pt), Section: pt.section}
		acc := ps.cond.get(string(gwv1.PolicyConditionAccepted))
		switch {
		case t.service(pt.ns, pt.service) == nil:
			e.Reason, e.Message = string(gwv1.PolicyReasonTargetNotFound), "the Service is not in the manifests"
		case ps.invalid != "":
			e.Reason, e.Message = "Invalid", "backends of the Service answer 5xx: "+ps.invalid
		case acc != nil && acc.Status == "False":
			e.Reason, e.Message = acc.Reason, "not applied: "+acc.Message
		default:
			e.Applied, e.Reason, e.Message = true, string(gwv1.PolicyReasonAccepted), backendTLSSummary(ps.tls)
		}
		t.effect(e)
	}
}

// backendTLSSummary says what a BackendTLSPolicy makes the gateway do.
func backendTLSSummary(b *BackendTLS) string {
	s := "TLS to the backends, SNI " + b.SNI
	switch {
	case b.System:
		s += ", system CAs"
	case len(b.CARefs) > 0:
		s += ", CA " + strings.Join(b.CARefs, ", ")
	}
	if len(b.SubjectAltNames) > 0 {
		s += fmt.Sprintf(", %d subjectAltNames", len(b.SubjectAltNames))
	}
	return s
}
