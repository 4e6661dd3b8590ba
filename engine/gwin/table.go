package gwin

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"

	"github.com/gwdev/gwdev/engine"
)

// What the gwin profile adds to the routing table: listener RBAC,
// allowHTTP10, HTTP/2 max concurrent streams and stream idle timeouts
// (ListenerTable.Policy), access-log discard rules (GatewayTable.AccessLog),
// and per rule the route's RBAC and gwin's backend timeout
// (RouteRule.Policy, RouteRule.Timeouts).

// gwinDefaultTimeout is gwin's backend timeout when neither
// rules[].timeouts.backendRequest nor gwin.yandex.cloud/rules.timeout is
// set ("Default: 60s").
const gwinDefaultTimeout = 60 * time.Second

// GatewayTable adds the Gateway's access-log settings.
func (rn *run) GatewayTable(g *engine.GatewayView, gt *table.GatewayTable) {
	gs := rn.gatewaySettings(g)
	if len(gs.errs) > 0 {
		return
	}
	gt.AccessLog, _ = buildAccessLog(gs)
}

// ListenerTable adds the listener's settings: from its Gateway, or from
// its ListenerSet (a set does not inherit the Gateway's settings).
func (rn *run) ListenerTable(l *engine.ListenerView, lt *table.ListenerTable) {
	gs := rn.listenerSettings(l)
	if gs == nil || len(gs.errs) > 0 {
		return
	}
	eff := gs.effective("listener", l.Name(), map[string]bool{})
	pol := &table.ListenerPolicy{Profile: Name}
	var used []*gwinSetting
	use := func(sub string) bool {
		s, ok := eff[sub]
		if ok {
			used = append(used, s)
		}
		return ok
	}
	switch l.Protocol() {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType:
		if use("http.protocolSettings.allowHTTP10") {
			pol.AllowHTTP10, _ = settingBool(eff, "http.protocolSettings.allowHTTP10")
		}
		if use("http.protocolSettings.http2Options.maxConcurrentStreams") {
			n, _ := settingInt(eff, "http.protocolSettings.http2Options.maxConcurrentStreams")
			pol.MaxConcurrentStreams = uint32(n)
		}
		rbac, _, _ := buildRBAC(eff, "", lt.Name+"/rbac")
		if rbac != nil {
			pol.RBAC = rbac
			for _, sub := range sortedStringKeys(eff) {
				if strings.HasPrefix(sub, "rbac.") {
					used = append(used, eff[sub])
				}
			}
		}
	case gwv1.TLSProtocolType, gwv1.TCPProtocolType:
		if use("stream.idleTimeout") {
			d, _ := settingDuration(eff, "stream.idleTimeout")
			pol.StreamIdleTimeout = d.String()
		}
	}
	if len(used) == 0 {
		return
	}
	pol.From = origins(used)
	lt.Policy = pol
}

// RouteRule returns the rule as gwin serves it on a virtual host: a copy
// with gwin's backend timeout (spec backendRequest, else
// rule.<name>.timeout or rules.timeout, else 60s) and the route's host and
// rule RBAC.
func (rn *run) RouteRule(l *engine.ListenerView, host string, r *engine.RouteView, rr *table.RouteRule) *table.RouteRule {
	k := ruleOnHost{rr, host}
	if c, ok := rn.rules[k]; ok {
		return c
	}
	gs := rn.routeSettings(r)
	seen := map[string]bool{}
	ruleEff := gs.effective("rule", rr.RuleName, seen)
	hostEff := gs.effective("host", routeHostFor(gs, l.Hostname(), host), seen)
	c := *rr
	if engine.RoutesRequests(r.Kind()) {
		tm := &table.Timeouts{}
		if rr.Timeouts != nil {
			*tm = *rr.Timeouts
		}
		if !backendRequestSet(r, rr) {
			tm.BackendRequest = gwinDefaultTimeout
			if v, ok := settingDuration(ruleEff, "timeout"); ok {
				tm.BackendRequest = v
			}
		}
		c.Timeouts = tm
	}
	base, _, _ := strings.Cut(rr.Name, "/match/")
	rbac, _, _ := buildRBAC(ruleEff, "", base+"/rbac")
	hostRBAC, _, _ := buildRBAC(hostEff, "", strings.ToLower(r.Kind())+"/"+r.Key().Namespace+"/"+r.Key().Name+"/host/"+engine.VirtualHostLabel(host)+"/rbac")
	if rbac != nil || hostRBAC != nil {
		c.Policy = &table.RulePolicy{Profile: Name, HostRBAC: hostRBAC, RBAC: rbac}
	}
	rn.rules[k] = &c
	return &c
}

// routeHostFor picks the host.<name> settings that apply to a virtual
// host: the name equal to it, or a route hostname that yields it on the
// listener ("" when none: only hosts.* apply).
func routeHostFor(gs *gwinSettings, listenerHost, vhost string) string {
	for _, n := range gs.names("host") {
		if h, ok := engine.HostnameIntersection(strings.ToLower(n), listenerHost); n == vhost || (ok && h == vhost) {
			return n
		}
	}
	return ""
}

// gepDuration renders a duration in Gateway API (GEP-2257) form.
// backendRequestSet reports whether the spec of the route's rule sets
// timeouts.backendRequest (to any value; "0s" disables the timeout).
func backendRequestSet(r *engine.RouteView, rr *table.RouteRule) bool {
	hr, ok := r.Object().(*gwv1.HTTPRoute)
	if !ok {
		return false
	}
	i := r.SpecRuleIndex(rr)
	if i < 0 || i >= len(hr.Spec.Rules) {
		return false
	}
	t := hr.Spec.Rules[i].Timeouts
	return t != nil && t.BackendRequest != nil
}

// origins lists the distinct origins of settings, in order of first use.
func origins(ss []*gwinSetting) []string {
	var out []string
	for _, s := range ss {
		if !containsString(out, s.origin) {
			out = append(out, s.origin)
		}
	}
	return out
}

// buildRBAC builds the RBAC policy of an effective scope (nil when it sets
// none) and checks its structure: an action with principals, and each
// principal exactly one check (header with a name and one of exact, prefix,
// regex; ip.remoteIp; any). what names the scope in messages.
func buildRBAC(eff map[string]*gwinSetting, what, name string) (*table.RBAC, []string, []string) {
	var action *gwinSetting
	groups := map[string]map[string]map[string]*gwinSetting{}
	var used []*gwinSetting
	for _, sub := range sortedStringKeys(eff) {
		s := eff[sub]
		if sub == "rbac.action" {
			action = s
			used = append(used, s)
			continue
		}
		if !strings.HasPrefix(sub, "rbac.principals.") {
			continue
		}
		vars := s.subVars()
		g, p := vars[0], vars[1]
		field := strings.TrimPrefix(sub, "rbac.principals."+g+"."+p+".")
		if groups[g] == nil {
			groups[g] = map[string]map[string]*gwinSetting{}
		}
		if groups[g][p] == nil {
			groups[g][p] = map[string]*gwinSetting{}
		}
		groups[g][p][field] = s
		used = append(used, s)
	}
	if action == nil && len(groups) == 0 {
		return nil, nil, nil
	}
	var errs, warns []string
	if action == nil {
		errs = append(errs, what+": rbac.principals are set but rbac.action is not (want "+table.RBACAllow+" or "+table.RBACDeny+")")
	}
	rb := &table.RBAC{Name: name, From: origins(used)}
	if action != nil {
		rb.Action = action.value.(string)
	}
	for _, g := range sortedStringKeys(groups) {
		grp := table.RBACGroup{Name: g}
		for _, p := range sortedStringKeys(groups[g]) {
			pr, perrs := buildPrincipal(groups[g][p])
			for _, e := range perrs {
				errs = append(errs, fmt.Sprintf("%s: rbac principal %s.%s: %s", what, g, p, e))
			}
			pr.Name = p
			grp.Principals = append(grp.Principals, pr)
		}
		rb.Groups = append(rb.Groups, grp)
	}
	if action != nil && len(groups) == 0 {
		switch rb.Action {
		case table.RBACAllow:
			warns = append(warns, what+": rbac.action ALLOW without principals refuses every request")
		case table.RBACDeny:
			warns = append(warns, what+": rbac.action DENY without principals refuses nothing")
		}
	}
	if len(errs) > 0 {
		return nil, errs, warns
	}
	return rb, nil, warns
}

// buildPrincipal builds one principal from its fields (header.name,
// header.exact, …, ip.remoteIp, any).
func buildPrincipal(fields map[string]*gwinSetting) (table.RBACPrincipal, []string) {
	var pr table.RBACPrincipal
	var checks, errs []string
	var hdr *table.RBACHeaderMatch
	var values []string
	for _, f := range sortedStringKeys(fields) {
		s := fields[f]
		switch f {
		case "header.name", "header.exact", "header.prefix", "header.regex":
			if hdr == nil {
				hdr = &table.RBACHeaderMatch{}
				checks = append(checks, "header")
			}
			v := s.value.(string)
			switch f {
			case "header.name":
				hdr.Name = v
			case "header.exact":
				hdr.Exact = v
				values = append(values, f)
			case "header.prefix":
				hdr.Prefix = v
				values = append(values, f)
			case "header.regex":
				hdr.Regex = v
				values = append(values, f)
			}
		case "ip.remoteIp":
			pr.RemoteIP = s.value.(netip.Prefix).String()
			checks = append(checks, "ip")
		case "any":
			pr.Any = s.value.(bool)
			checks = append(checks, "any")
		}
	}
	if len(checks) > 1 {
		errs = append(errs, "sets "+strings.Join(checks, " and ")+"; a principal is one check: header, ip or any (put several checks of one group in several principals)")
	}
	if hdr != nil {
		switch {
		case hdr.Name == "":
			errs = append(errs, "header.name is required with "+strings.Join(values, ", "))
		case len(values) == 0:
			errs = append(errs, "header "+hdr.Name+" needs one of header.exact, header.prefix, header.regex")
		case len(values) > 1:
			errs = append(errs, "sets "+strings.Join(values, " and ")+"; want one of header.exact, header.prefix, header.regex")
		}
		pr.Header = hdr
	}
	return pr, errs
}

// buildAccessLog builds the Gateway's access-log settings (nil when it
// sets none): logs.disable and logs.discardRule.<name>.*. A rule without
// codes discards nothing (a warning); discardPercent defaults to 100.
func buildAccessLog(gs *gwinSettings) (*table.AccessLogPolicy, []string) {
	al := &table.AccessLogPolicy{Profile: Name}
	set := false
	if s, ok := gs.byKey["logs.disable"]; ok {
		al.Disabled = s.value.(bool)
		set = al.Disabled
	}
	rules := map[string]*table.LogDiscardRule{}
	for _, k := range gs.keys() {
		s := gs.byKey[k]
		if !strings.HasPrefix(s.spec.pattern, "logs.discardRule.") {
			continue
		}
		n := s.vars[0]
		r := rules[n]
		if r == nil {
			r = &table.LogDiscardRule{Name: n, DiscardPercent: 100}
			rules[n] = r
		}
		switch {
		case strings.HasSuffix(k, ".httpCodes"):
			for _, c := range s.value.([]int64) {
				r.HTTPCodes = append(r.HTTPCodes, int(c))
			}
		case strings.HasSuffix(k, ".httpCodeIntervals"):
			r.HTTPCodeIntervals = s.value.([]string)
		case strings.HasSuffix(k, ".grpcCodes"):
			r.GRPCCodes = s.value.([]string)
		case strings.HasSuffix(k, ".discardPercent"):
			r.DiscardPercent = int(s.value.(int64))
		}
	}
	var warns []string
	for _, n := range sortedStringKeys(rules) {
		r := rules[n]
		if len(r.HTTPCodes)+len(r.HTTPCodeIntervals)+len(r.GRPCCodes) == 0 {
			warns = append(warns, fmt.Sprintf("logs.discardRule.%s sets no httpCodes, httpCodeIntervals or grpcCodes, so it discards nothing", n))
		}
		al.DiscardRules = append(al.DiscardRules, *r)
		set = true
	}
	if !set {
		return nil, warns
	}
	return al, warns
}
