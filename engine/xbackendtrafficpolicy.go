package engine

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/gwdev/gwdev/engine/table"
)

// XBackendTrafficPolicy (gateway.networking.x-k8s.io/v1alpha1, GEP-3388
// retry budgets and GEP-1619 session persistence) is a Direct policy on
// backends: Services, or XBackends. Conflicts are decided as for
// BackendTLSPolicy (GEP-713: the older policy, then namespace/name, wins a
// target; the other is Conflicted there). The winner's retryConstraint
// becomes a RetryBudget on every backend of an HTTPRoute or GRPCRoute rule
// that sends to the target, and its sessionPersistence becomes the session
// persistence of every such rule that has none of its own (the route rule's
// wins, GEP-1619).

// trafficPolicyState is an XBackendTrafficPolicy during translation.
type trafficPolicyState struct {
	obj  *gwxv1a1.XBackendTrafficPolicy
	key  ObjectKey
	cond *conditionSet
	// budget is the retryConstraint with defaults (nil: none); Key unset.
	budget *table.RetryBudget
	// session is the policy's sessionPersistence (nil: none).
	session *table.Session
	// won are the targets this policy applies to.
	won []ObjectKey
	// found are the targets of a kind it may target that exist, won or
	// not: the Gateways using them are its ancestors.
	found []ObjectKey
}

// Retry budget defaults of the API (kubebuilder defaults of
// RetryConstraint and BudgetDetails), and gwdev's interval for a
// minRetryRate that gives a count without one.
const (
	defaultBudgetPercent    = 20
	defaultBudgetInterval   = 10 * time.Second
	defaultMinRetryCount    = 10
	defaultMinRetryInterval = time.Second
)

// processXBackendTrafficPolicies resolves every policy, decides conflicts
// and applies the winners to the backends and rules of HTTP and gRPC
// routes.
func (t *translator) processXBackendTrafficPolicies() {
	if len(t.out.XBackendTrafficPolicies) == 0 {
		return
	}
	pols := make([]*trafficPolicyState, 0, len(t.out.XBackendTrafficPolicies))
	for _, p := range t.out.XBackendTrafficPolicies {
		ps := &trafficPolicyState{obj: p, key: ObjectKey{Kind: "XBackendTrafficPolicy", Namespace: p.Namespace, Name: p.Name},
			cond: newConditionSet(p.Generation, &t.opts.Now)}
		ps.budget = retryBudgetOf(ps.key, p.Spec.RetryConstraint)
		ps.session = compileSession(p.Spec.SessionPersistence)
		t.noteSessionDeprecated(ps.key, p.Spec.SessionPersistence, "spec.sessionPersistence")
		pols = append(pols, ps)
	}
	claims := newPolicyClaims[ObjectKey]("XBackendTrafficPolicy", pols,
		func(ps *trafficPolicyState) object { return ps.obj }, func(ps *trafficPolicyState) ObjectKey { return ps.key })
	for _, ps := range pols {
		t.attachTrafficPolicy(ps, claims)
	}
	t.applyTrafficPolicies(claims.winners)
	for _, ps := range pols {
		ps.cond.setDefault(string(gwv1.PolicyConditionAccepted), metav1.ConditionTrue, string(gwv1.PolicyReasonAccepted), "policy is accepted")
		ancestors := t.gatewaysUsing(ps.found)
		if len(ancestors) == 0 {
			t.noteKind(NoteUnused, SeverityInfo, ps.key, "", "no route of a managed Gateway uses a backend this policy applies to")
		}
		ps.obj.Status.Ancestors = t.policyAncestorStatus(ancestors, ps.cond)
		t.conditionOwners = append(t.conditionOwners, conditionOwner{ps.key, ps.cond})
		for _, k := range ps.won {
			t.effect(PolicyEffect{Policy: ps.key, Target: k, Applied: true, Reason: string(gwv1.PolicyReasonAccepted), Message: trafficPolicySummary(ps)})
		}
	}
}

// attachTrafficPolicy checks each targetRef of ps and records the targets
// it wins. Accepted becomes False when no targetRef attaches: Invalid for a
// kind that cannot be targeted, TargetNotFound, or Conflicted.
func (t *translator) attachTrafficPolicy(ps *trafficPolicyState, claims *policyClaims[ObjectKey, *trafficPolicyState]) {
	acc := string(gwv1.PolicyConditionAccepted)
	var invalid, missing, lost []string
	for i, tr := range ps.obj.Spec.TargetRefs {
		target := ObjectKey{Kind: string(tr.Kind), Namespace: ps.obj.Namespace, Name: string(tr.Name)}
		refuse := func(reason gwv1.PolicyConditionReason, msg string) {
			t.effect(PolicyEffect{Policy: ps.key, Target: target, Reason: string(reason), Message: msg})
		}
		switch {
		case !PolicyOf(ExperimentalGroup, "XBackendTrafficPolicy").Allows(string(tr.Group), string(tr.Kind)):
			msg := fmt.Sprintf("targetRefs[%d] %s %s: only a core Service or an XBackend can be targeted", i, groupKind(string(tr.Group), string(tr.Kind)), tr.Name)
			invalid = append(invalid, msg)
			refuse(gwv1.PolicyReasonInvalid, msg)
		case !t.backendExists(target):
			msg := fmt.Sprintf("targetRefs[%d] %s %s/%s not found", i, tr.Kind, target.Namespace, target.Name)
			missing = append(missing, msg)
			refuse(gwv1.PolicyReasonTargetNotFound, msg)
		default:
			ps.found = append(ps.found, target)
			holder, won := claims.claim(target, ps)
			if won {
				ps.won = append(ps.won, target)
				continue
			}
			msg := claims.lostMessage(fmt.Sprintf("%s %s/%s", tr.Kind, target.Namespace, target.Name), holder)
			lost = append(lost, msg)
			t.effect(conflictedEffect(ps.key, target, "", msg))
		}
	}
	switch {
	case len(invalid) > 0:
		ps.cond.fail(acc, string(gwv1.PolicyReasonInvalid), strings.Join(invalid, "; "))
	case len(ps.won) > 0:
	case len(lost) > 0:
		failConflicted(ps.cond, lost)
	case len(missing) > 0:
		ps.cond.fail(acc, string(gwv1.PolicyReasonTargetNotFound), strings.Join(missing, "; "))
	}
	if len(ps.won) > 0 && len(lost) > 0 && len(invalid) == 0 {
		t.notePartlyConflicted(ps.key, lost)
	}
	if len(invalid) > 0 {
		// An invalid policy applies nowhere (as BackendTLSPolicy).
		claims.release(ps)
		for _, k := range ps.won {
			t.effect(PolicyEffect{Policy: ps.key, Target: k, Reason: string(gwv1.PolicyReasonInvalid),
				Message: "not applied: the policy has an invalid targetRef (" + invalid[0] + ")"})
		}
		ps.won = nil
	}
}

// backendExists reports whether the Service or XBackend k is in the
// manifests (the registry's kind of that name holds it).
func (t *translator) backendExists(k ObjectKey) bool {
	kind, found := KindNamed(k.Kind), false
	if kind != nil {
		kind.Each(t.out, func(key ObjectKey, _ metav1.Object) { found = found || key == k })
	}
	return found
}

// applyTrafficPolicies gives each backend of an HTTP or gRPC rule the retry
// budget of its target's policy, and each rule without session persistence
// of its own the policy's (the first backend with one, in backendRef order).
func (t *translator) applyTrafficPolicies(winners map[ObjectKey]*trafficPolicyState) {
	uses := &routeTrafficEffects{}
	defer uses.record(t)
	for _, r := range t.routes {
		t.ownRules(r) // incremental.go
		for _, rr := range r.rules {
			own := rr.SessionPersistence != nil
			var from *trafficPolicyState
			for _, b := range rr.Backends {
				ps := winners[b.Service]
				if b.Invalid != "" || ps == nil {
					continue
				}
				if ps.budget != nil {
					rb := *ps.budget
					rb.Key = b.Service.String()
					b.RetryBudget = &rb
				}
				if ps.session == nil || own {
					continue
				}
				if from == nil {
					from, rr.SessionPersistence = ps, ps.session
				} else if from != ps {
					t.note(SeverityWarning, r.key, rr.Name, fmt.Sprintf("backends have session persistence from XBackendTrafficPolicies %s and %s; %s applies to the whole rule",
						from.key.Namespace+"/"+from.key.Name, ps.key.Namespace+"/"+ps.key.Name, from.key.Namespace+"/"+from.key.Name))
				}
			}
			uses.rule(r, rr, own, from, winners)
		}
	}
}

// retryBudgetOf is a retryConstraint with the API's defaults (nil: none).
func retryBudgetOf(key ObjectKey, rc *gwxv1a1.RetryConstraint) *table.RetryBudget {
	if rc == nil {
		return nil
	}
	b := &table.RetryBudget{Policy: key.Namespace + "/" + key.Name, Percent: defaultBudgetPercent, Interval: defaultBudgetInterval,
		MinRetries: defaultMinRetryCount, MinInterval: defaultMinRetryInterval}
	if bd := rc.Budget; bd != nil {
		if bd.Percent != nil {
			b.Percent = *bd.Percent
		}
		if d, ok := specDuration(bd.Interval); ok {
			b.Interval = d
		}
	}
	if mr := rc.MinRetryRate; mr != nil {
		b.MinRetries, b.MinInterval = 0, defaultMinRetryInterval
		if mr.Count != nil {
			b.MinRetries = *mr.Count
		}
		if d, ok := specDuration(mr.Interval); ok {
			b.MinInterval = d
		}
	}
	if b.MinRetries == 0 {
		b.MinInterval = 0
	}
	return b
}

// specDuration parses a Gateway API Duration (the CRD has checked its
// form); ok is false when it is unset or does not parse.
func specDuration(d *gwv1.Duration) (time.Duration, bool) {
	if d == nil {
		return 0, false
	}
	v, err := time.ParseDuration(string(*d))
	return v, err == nil
}

// gatewaysUsing lists the Gateways whose accepted routes send to any of
// the backends, sorted by namespace/name.
func (t *translator) gatewaysUsing(backends []ObjectKey) []*gatewayState {
	if len(backends) == 0 {
		return nil
	}
	want := map[ObjectKey]bool{}
	for _, k := range backends {
		want[k] = true
	}
	var routes []*routeState
	for _, r := range t.routes {
		for _, b := range r.backends() {
			if b.Invalid == "" && want[b.Service] {
				routes = append(routes, r)
				break
			}
		}
	}
	return gatewaysOf(routes)
}

// gatewaysOf lists the Gateways the routes are accepted by, sorted by
// namespace/name.
func gatewaysOf(routes []*routeState) []*gatewayState {
	seen := map[*gatewayState]bool{}
	var out []*gatewayState
	for _, r := range routes {
		for _, p := range r.parents {
			if len(p.attachments) == 0 {
				continue
			}
			if g := p.attachments[0].l.gateway; !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].key.String() < out[j].key.String() })
	return out
}
