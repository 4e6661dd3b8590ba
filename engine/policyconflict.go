package engine

import (
	"fmt"
	"sort"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Conflicts between policies of one kind (GEP-713, "Conflict Resolution"):
// when several policies of a kind target the same object, or the same
// section of it, precedence goes, continuing on ties, to
//
//   - the oldest policy by creationTimestamp ("2021-07-15 01:02:03" before
//     "2021-07-15 01:02:04"; gwdev puts a policy without one after those
//     with one), then
//   - the policy first in alphabetical order by "{namespace}/{name}".
//
// The winner applies on that target; every other policy is Conflicted
// there. BackendTLSPolicy, XBackendTrafficPolicy and XTelemetryPolicy
// decide it with policyClaims and word it with the functions below; the
// guard (internal/guard) fails on a copy of the choice anywhere else.

// policyClaims is the choice for one policy kind: which policy holds each
// target (T: a Service port, a backend, a Gateway). The zero value is not
// usable; newPolicyClaims makes one.
type policyClaims[T comparable, P comparable] struct {
	// kind is the policy kind, for messages ("XTelemetryPolicy").
	kind string
	// key names a policy.
	key func(P) ObjectKey
	// winners holds, per target, the policy that claimed it first.
	winners map[T]P
}

// newPolicyClaims sorts pols in place into the order in which they claim
// their targets (GEP-713 precedence: obj gives each policy's metadata) and
// returns the claims, none held yet. Callers then claim every valid target
// of each policy, in that order.
func newPolicyClaims[T comparable, P comparable](kind string, pols []P, obj func(P) object, key func(P) ObjectKey) *policyClaims[T, P] {
	sort.SliceStable(pols, func(i, j int) bool { return olderFirst(obj(pols[i]), obj(pols[j])) })
	return &policyClaims[T, P]{kind: kind, key: key, winners: map[T]P{}}
}

// claim gives target to p when no policy claimed it before (won), and
// otherwise names the policy that holds it (p lost the target to it; a
// policy that names a target twice loses it to itself the second time).
func (c *policyClaims[T, P]) claim(target T, p P) (holder ObjectKey, won bool) {
	if w, ok := c.winners[target]; ok {
		return c.key(w), false
	}
	c.winners[target] = p
	return ObjectKey{}, true
}

// release gives back every target p holds, so that a later policy can
// claim them (an invalid policy applies nowhere).
func (c *policyClaims[T, P]) release(p P) {
	for k, w := range c.winners {
		if w == p {
			delete(c.winners, k)
		}
	}
}

// lostMessage says that the policy lost target (as "Kind ns/name") to
// holder: "<target>: <kind> <holder> targets it too and is older or sorts
// first".
func (c *policyClaims[T, P]) lostMessage(target string, holder ObjectKey) string {
	return fmt.Sprintf("%s: %s %s/%s targets it too and is older or sorts first", target, c.kind, holder.Namespace, holder.Name)
}

// lostServiceMessages are BackendTLSPolicy's wording of a lost Service:
// the entry its Accepted condition names ("Service ns/svc (BackendTLSPolicy
// ns/w is older or sorts first)") and the effect's message. It predates
// lostMessage and is kept so that status text does not change.
func lostServiceMessages(service string, holder ObjectKey) (entry, effect string) {
	entry = fmt.Sprintf("Service %s (BackendTLSPolicy %s/%s is older or sorts first)", service, holder.Namespace, holder.Name)
	effect = fmt.Sprintf("BackendTLSPolicy %s/%s targets the same Service and is older or sorts first", holder.Namespace, holder.Name)
	return entry, effect
}

// conflictedReason is the reason of a policy on a target it lost.
const conflictedReason = string(gwv1.PolicyReasonConflicted)

// conflictedEffect is the effect of a policy on a target it lost: not
// applied, reason Conflicted, msg naming the winner.
func conflictedEffect(policy, target ObjectKey, section, msg string) PolicyEffect {
	return PolicyEffect{Policy: policy, Target: target, Section: section, Reason: conflictedReason, Message: "not applied: " + msg}
}

// conflictedStatus is the Accepted=False reason and message of a policy
// on a target it lost (lost: a lostMessage).
func conflictedStatus(lost string) (reason, msg string) {
	return conflictedReason, "conflicts with another policy for " + lost
}

// failConflicted makes the policy Accepted=False Conflicted, naming the
// first target it lost (lost is not empty).
func failConflicted(cond *conditionSet, lost []string) {
	reason, msg := conflictedStatus(lost[0])
	cond.fail(string(gwv1.PolicyConditionAccepted), reason, msg)
}

// notePartlyConflicted warns about a policy that applies on some of its
// targets but lost the others (lost: their lostMessages). Its Accepted
// stays True, as GEP-713 has it; the warning says where it does nothing.
func (t *translator) notePartlyConflicted(policy ObjectKey, lost []string) {
	t.note(SeverityWarning, policy, "spec.targetRefs", "not applied to "+strings.Join(lost, "; "))
}
