package engine

import (
	"fmt"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// What an XBackendTrafficPolicy does, for `check --policies`, the TUI and
// explain (PolicyEffect). Every field of the kind is enforced.

// trafficPolicySummary says what a policy makes the gateway do to the
// backends it applies to.
func trafficPolicySummary(ps *trafficPolicyState) string {
	var parts []string
	if b := ps.budget; b != nil {
		s := fmt.Sprintf("retries limited to %d%% of requests per %s", b.Percent, b.Interval)
		if b.MinRetries > 0 {
			s += fmt.Sprintf(" (at least %d per %s)", b.MinRetries, b.MinInterval)
		}
		parts = append(parts, s+"; retries beyond the budget answer 503")
	}
	if ps.session != nil {
		parts = append(parts, "session persistence "+sessionSummary(ps)+" on rules without their own")
	}
	if len(parts) == 0 {
		return "applies, but sets neither retryConstraint nor sessionPersistence"
	}
	return strings.Join(parts, "; ")
}

// sessionSummary names a policy's session persistence ("Cookie
// \"gwdev-session\"").
func sessionSummary(ps *trafficPolicyState) string {
	sp := ps.obj.Spec.SessionPersistence
	typ := string(gwv1.CookieBasedSessionPersistence)
	if sp.Type != nil {
		typ = string(*sp.Type)
	}
	if name := sessionName(sp); name != "" {
		return typ + " " + quote(name)
	}
	return typ
}

// routeTrafficEffects collects, per policy and route, what the policy does
// to the route's rules; record turns them into one PolicyEffect each.
type routeTrafficEffects struct {
	order []routePolicyPair
	rules map[routePolicyPair][]string
}

// routePolicyPair is a policy and a route it reaches through a backend.
type routePolicyPair struct{ policy, route ObjectKey }

// rule notes what the winners do to one rule of r: own is true when the
// rule has its own session persistence, from is the policy whose session
// persistence the rule took (nil: none).
func (u *routeTrafficEffects) rule(r *routeState, rr *RouteRule, own bool, from *trafficPolicyState, winners map[ObjectKey]*trafficPolicyState) {
	name := rr.Name
	if i := strings.Index(name, "/match/"); i >= 0 {
		name = name[:i]
	}
	for _, b := range rr.Backends {
		ps := winners[b.Service]
		if ps == nil || b.Invalid != "" {
			continue
		}
		var what []string
		switch {
		case b.RetryBudget == nil:
		case rr.Retry != nil:
			what = append(what, "retries limited by the budget of "+b.Service.String())
		default: // no retries of its own (GRPCRoute has none in the API)
			what = append(what, "requests count toward the retry budget of "+b.Service.String())
		}
		switch {
		case ps.session == nil:
		case own:
			what = append(what, "session persistence: the rule's own wins over the policy's")
		case from == ps:
			what = append(what, "session persistence "+sessionSummary(ps))
		}
		if len(what) > 0 {
			u.add(routePolicyPair{ps.key, r.key}, name+": "+strings.Join(what, ", "))
		}
	}
}

func (u *routeTrafficEffects) add(k routePolicyPair, msg string) {
	if u.rules == nil {
		u.rules = map[routePolicyPair][]string{}
	}
	if _, ok := u.rules[k]; !ok {
		u.order = append(u.order, k)
	}
	if !slices.Contains(u.rules[k], msg) {
		u.rules[k] = append(u.rules[k], msg)
	}
}

// record adds one effect per policy and route.
func (u *routeTrafficEffects) record(t *translator) {
	for _, k := range u.order {
		t.effect(PolicyEffect{Policy: k.policy, Target: k.route, Applied: true, Reason: string(gwv1.PolicyReasonAccepted),
			Message: strings.Join(u.rules[k], "; ")})
	}
}

// sessionName is the cookie's or header's name a session persistence
// gives ("": none, gwdev names it).
func sessionName(sp *gwv1.SessionPersistence) string {
	switch {
	case sp.Type != nil && *sp.Type == gwv1.HeaderBasedSessionPersistence:
		if sp.Header != nil {
			return string(sp.Header.Name)
		}
	case sp.Cookie != nil && sp.Cookie.Name != nil:
		return string(*sp.Cookie.Name)
	}
	return ""
}
