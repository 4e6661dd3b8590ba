package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// precedenceReason says which of the spec's precedence criteria puts rule a
// before rule b of the same virtual host (a comes first in the table). ra
// and rb are their routes (nil when unknown), host the virtual host's
// hostname. It follows sortRules step by
// step, so it names the criterion that actually decided.
func precedenceReason(host string, a, b *RouteRule, ra, rb object) string {
	if ra != nil && rb != nil && a.Route != b.Route {
		ha, hb := ownHostname(objectHostnames(ra), host), ownHostname(objectHostnames(rb), host)
		if hostnameRank(ha) != hostnameRank(hb) {
			return fmt.Sprintf("route hostname %s is more specific than %s (original route hostnames decide before matches, GatewayRouteHostnameIntersectionPrecedence)",
				displayVHost(ha), displayVHost(hb))
		}
	}
	la, lb := pathLenOf(a, ra), pathLenOf(b, rb)
	if c := compareMatch(a, b, la, lb); c != 0 {
		return matchReason(a, b, la, lb)
	}
	if ra == nil || rb == nil {
		return "same match precedence; table order decides"
	}
	if a.Route == b.Route {
		ia, ja := ruleIndexes(a.Name)
		ib, jb := ruleIndexes(b.Name)
		if ia == ib {
			return fmt.Sprintf("same match precedence in the same rule: matches[%d] comes before matches[%d]", ja, jb)
		}
		return fmt.Sprintf("same match precedence in the same route: rules[%d] comes before rules[%d]", ia, ib)
	}
	return "same match precedence: " + olderRouteReason(a.Route, b.Route, ra, rb)
}

// olderRouteReason says why route a (object ra) sorts before route b: the
// older creationTimestamp, or namespace/name (olderFirst).
func olderRouteReason(a, b ObjectKey, ra, rb object) string {
	ta, tb := ra.GetCreationTimestamp(), rb.GetCreationTimestamp()
	switch {
	case !ta.Equal(&tb) && tb.IsZero():
		return fmt.Sprintf("the oldest route wins, and %s has a creationTimestamp (%s) while %s has none",
			routeRef(a), ta.UTC().Format(time.RFC3339), routeRef(b))
	case !ta.Equal(&tb):
		return fmt.Sprintf("the oldest route wins (%s created %s, %s created %s)",
			routeRef(a), ta.UTC().Format(time.RFC3339), routeRef(b), tb.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("the first route in namespace/name order wins (%s/%s before %s/%s; the same creationTimestamp, or none)",
		a.Namespace, a.Name, b.Namespace, b.Name)
}

// routeRef renders a route as "HTTPRoute ns/name".
func routeRef(k ObjectKey) string { return k.Kind + " " + k.Namespace + "/" + k.Name }

// matchReason names the match criterion that orders a before b.
func matchReason(a, b *RouteRule, la, lb int) string {
	if a.HTTP == nil || b.HTTP == nil {
		if a.GRPC == nil || b.GRPC == nil {
			return "GRPCRoute rules come before HTTPRoute rules on a shared hostname"
		}
		sa, ma := len(a.GRPC.Service), len(a.GRPC.Method)
		sb, mb := len(b.GRPC.Service), len(b.GRPC.Method)
		switch {
		case sa != sb:
			return fmt.Sprintf("the longer service match wins (%d characters against %d)", sa, sb)
		case ma != mb:
			return fmt.Sprintf("the longer method match wins (%d characters against %d)", ma, mb)
		}
		return fmt.Sprintf("more header matches win (%d against %d)", len(a.GRPC.Headers), len(b.GRPC.Headers))
	}
	pa, pb := pathRank(a.HTTP), pathRank(b.HTTP)
	ta, tb := a.HTTP.Path.Type, b.HTTP.Path.Type
	switch {
	case pa != pb:
		return fmt.Sprintf("%s paths come before %s paths", ta, tb)
	case la != lb:
		if ta == table.MatchPathPrefix {
			return fmt.Sprintf("the longer PathPrefix wins (%d characters against %d, a trailing / not counted)", la, lb)
		}
		return fmt.Sprintf("the longer %s wins (%d characters against %d)", ta, la, lb)
	case (a.HTTP.Method != "") != (b.HTTP.Method != ""):
		return "a method match comes before none"
	case len(a.HTTP.Headers) != len(b.HTTP.Headers):
		return fmt.Sprintf("more header matches win (%d against %d)", len(a.HTTP.Headers), len(b.HTTP.Headers))
	}
	return fmt.Sprintf("more query param matches win (%d against %d)", len(a.HTTP.QueryParams), len(b.HTTP.QueryParams))
}

// pathLenOf is the length of an HTTP rule's path as written in its route
// o (writtenPathLen); without the route, that of the table's value.
func pathLenOf(r *RouteRule, o object) int {
	if r.HTTP == nil {
		return 0
	}
	return precedencePathLen(string(r.HTTP.Path.Type), writtenPath(r, o))
}

// writtenPath is an HTTP rule's path value as written in its route o
// ("/" when the match has none); without the route, the table's value.
func writtenPath(r *RouteRule, o object) string {
	if hr, ok := o.(*gwv1.HTTPRoute); ok {
		i, j := ruleIndexes(r.Name)
		if i >= 0 && i < len(hr.Spec.Rules) {
			ms := hr.Spec.Rules[i].Matches
			switch {
			case len(ms) == 0 && j == 0:
				return "/"
			case j >= 0 && j < len(ms):
				if p := ms[j].Path; p != nil && p.Value != nil {
					return *p.Value
				}
				return "/"
			}
		}
	}
	s := r.HTTP.Path.String()
	return s[len(r.HTTP.Path.Type)+1:]
}

// ruleIndexes parses "<kind>/<ns>/<name>/rule/<i>/match/<j>" (-1 when a
// part is missing).
func ruleIndexes(name string) (rule, match int) {
	rule, match = -1, -1
	parts := strings.Split(name, "/")
	for k := 0; k+1 < len(parts); k++ {
		n, err := strconv.Atoi(parts[k+1])
		if err != nil || n < 0 {
			continue
		}
		switch parts[k] {
		case "rule":
			rule = n
		case "match":
			match = n
		}
	}
	return rule, match
}

// describeMatch renders a table rule's match briefly, e.g.
// `PathPrefix /api, method GET, header X-Env=prod`, with the path as
// written in the rule's route o (nil: as the table has it).
func describeMatch(r *RouteRule, o object) string {
	var parts []string
	named := func(what string, ns []table.ValueMatch) {
		for _, n := range ns {
			op := "="
			if n.Type == table.MatchRegularExpression {
				op = "~"
			}
			parts = append(parts, what+" "+n.Name+op+n.Value)
		}
	}
	switch {
	case r.HTTP != nil:
		parts = append(parts, string(r.HTTP.Path.Type)+" "+writtenPath(r, o))
		if r.HTTP.Method != "" {
			parts = append(parts, "method "+r.HTTP.Method)
		}
		named("header", r.HTTP.Headers)
		named("query", r.HTTP.QueryParams)
	case r.GRPC != nil:
		s, m := r.GRPC.Service, r.GRPC.Method
		if s == "" {
			s = "*"
		}
		if m == "" {
			m = "*"
		}
		method := "method " + s + "/" + m
		if r.GRPC.Type == table.MatchRegularExpression {
			method += " (regex)"
		}
		parts = append(parts, method)
		named("header", r.GRPC.Headers)
	}
	return strings.Join(parts, ", ")
}

// ruleLabel renders a rule's place in its route, e.g.
// `HTTPRoute default/api rules[1].matches[0]` (with the rule's name when it
// has one).
func ruleLabel(r *RouteRule) string {
	i, j := ruleIndexes(r.Name)
	s := fmt.Sprintf("%s rules[%d]", routeRef(r.Route), i)
	if r.RuleName != "" {
		s += fmt.Sprintf(" (%q)", r.RuleName)
	}
	return s + fmt.Sprintf(".matches[%d]", j)
}

// PrecedenceReason says why rule a of a virtual host of r.Table (whose
// hostname is host) is tried before rule b: the spec's precedence criterion
// that decides (the routes' own hostnames, then path type
// and length, method, header and query param counts for HTTPRoute; service,
// method and headers for GRPCRoute; then the oldest route, then
// namespace/name, then rule order). It is what explain prints for the rules
// that also matched a request but lost.
func (r *Result) PrecedenceReason(host string, a, b *RouteRule) string {
	if ingressRule(a) {
		return "ingress-nginx's location order (engine/ingressnginx/nginx.go): exact locations first, then the longest prefix; in a host's regex mode the longer path first"
	}
	return precedenceReason(host, a, b, r.routeObject(a.Route), r.routeObject(b.Route))
}

// ingressRule reports whether a rule comes from the ingress-nginx front end.
func ingressRule(r *RouteRule) bool {
	return r.Route.Kind == "Ingress" || r.Route.Kind == "IngressClass"
}

// routeObject finds a route of the result that routes requests (an
// HTTPRoute or GRPCRoute; nil: none).
func (r *Result) routeObject(k ObjectKey) object {
	kind := KindNamed(k.Kind)
	if r.Objects == nil || kind == nil || kind.Family != RouteFamilyRequest {
		return nil
	}
	var found object
	kind.Each(r.Objects, func(key ObjectKey, o metav1.Object) {
		if key == k {
			found = o
		}
	})
	return found
}

// DescribeRule names a table rule and its match for people, e.g.
// `HTTPRoute default/api rules[1].matches[0] (PathPrefix /v1, method GET)`.
func DescribeRule(r *RouteRule) string {
	if ingressRule(r) {
		return r.Name + " (" + describeMatch(r, nil) + ")"
	}
	return ruleLabel(r) + " (" + describeMatch(r, nil) + ")"
}
