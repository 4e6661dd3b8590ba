package engine

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The gwin profile: the Yandex Cloud gateway (Application Load Balancer)
// driven by Gateway API objects of the class gwin-default. Its reference
// (spec/001 and the gwin resource reference) defines gwin.yandex.cloud/*
// annotations on Gateways, ListenerSets, routes and Services, and the
// equivalent policy resources (GatewayPolicy, ListenerSetPolicy,
// RoutePolicy, ServicePolicy in gwin.yandex.cloud/v1).
//
// Decisions, following the reference ("if different sources contain
// identical fields with different values, you get a resource validation
// error", and validation errors show in the object's status):
//   - an invalid, unknown or conflicting setting rejects the object that
//     carries it: a Gateway gets Accepted=False InvalidParameters, a
//     ListenerSet Accepted=False Invalid, a route Accepted=False
//     UnsupportedValue on its gwin parents; each becomes an error finding
//     naming the object, the annotation or policy field and the allowed
//     values. A Service has no status: its errors are error findings.
//   - a policy resource whose own settings are invalid gets Accepted=False
//     Invalid and is not applied; one that matches nothing gets
//     Accepted=False TargetNotFound.
//   - settings gwdev cannot run on a laptop (subnets, security groups,
//     autoscaling, zones, log groups, backend balancing, health checks…) are
//     validated and listed in an info finding as not emulated locally.
//   - spec features the cloud gateway does not implement (TCP/UDP, TLS
//     passthrough, regex paths, RequestMirror, CORS, retries, session
//     persistence, request timeouts) are warnings: gwdev still emulates
//     them, so a warning is the difference between laptop and cloud.

// gwinClassName is the GatewayClass the gwin profile is chosen for.
const gwinClassName = "gwin-default"

// gwinGroup is the API group of gwin's policies and certificates.
const gwinGroup = "gwin.yandex.cloud"

// gwinProfile implements the gwin profile.
type gwinProfile struct{}

var (
	_ profile             = gwinProfile{}
	_ gatewayChecker      = gwinProfile{}
	_ addressChecker      = gwinProfile{}
	_ listenerSetChecker  = gwinProfile{}
	_ listenerChecker     = gwinProfile{}
	_ routeChecker        = gwinProfile{}
	_ certificateResolver = gwinProfile{}
	_ tableContributor    = gwinProfile{}
)

func (gwinProfile) name() string { return ProfileGwin }

// gwinFeatures is what the gwin reference supports: HTTP, HTTPS and TLS
// listeners, Terminate, HTTPRoute/GRPCRoute/TLSRoute, the header modifier,
// redirect and rewrite filters, Exact and PathPrefix paths, and
// timeouts.backendRequest.
var gwinFeatures = &featureSet{
	protocols:  map[gwv1.ProtocolType]support{gwv1.TCPProtocolType: warned, gwv1.UDPProtocolType: warned},
	tlsModes:   map[gwv1.TLSModeType]support{gwv1.TLSModePassthrough: warned},
	routeKinds: map[string]support{"TCPRoute": warned, "UDPRoute": warned},
	filters: map[gwv1.HTTPRouteFilterType]support{
		gwv1.HTTPRouteFilterRequestMirror: warned,
		gwv1.HTTPRouteFilterCORS:          warned,
		gwv1.HTTPRouteFilterExtensionRef:  refused,
		gwv1.HTTPRouteFilterExternalAuth:  refused,
	},
	pathMatches: map[gwv1.PathMatchType]support{gwv1.PathMatchRegularExpression: warned},
	ruleFields:  map[string]support{"timeouts.request": warned, "retry": warned, "sessionPersistence": warned},
	supportedText: map[string]string{
		"protocols":   "HTTP, HTTPS and TLS listeners",
		"tlsModes":    "TLS mode Terminate only",
		"routeKinds":  "HTTPRoute, GRPCRoute and TLSRoute",
		"filters":     "RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect and URLRewrite",
		"pathMatches": "Exact and PathPrefix",
		"ruleFields":  "matches, filters, backendRefs and timeouts.backendRequest",
	},
}

func (gwinProfile) features() *featureSet { return gwinFeatures }

// gwinRun is the gwin state of one translation.
type gwinRun struct {
	policies []*gwinPolicy
	gateways map[*gatewayState]*gwinSettings
	sets     map[*listenerSetState]*gwinSettings
	routes   map[*routeState]*gwinSettings
	// rules memoises routeRule copies by rule and virtual host.
	rules map[ruleOnHost]*RouteRule
}

type ruleOnHost struct {
	rr   *RouteRule
	host string
}

// gwin returns the gwin state, parsing the gwin policies on first use.
func (t *translator) gwin() *gwinRun {
	if t.prof.gwin != nil {
		return t.prof.gwin
	}
	g := &gwinRun{gateways: map[*gatewayState]*gwinSettings{}, sets: map[*listenerSetState]*gwinSettings{},
		routes: map[*routeState]*gwinSettings{}, rules: map[ruleOnHost]*RouteRule{}}
	for _, p := range t.out.ImplementationPolicies {
		if gp := newGwinPolicy(t, p); gp != nil {
			g.policies = append(g.policies, gp)
		}
	}
	t.prof.gwin = g
	return g
}

// gatewaySettings returns the gwin settings of a Gateway: its annotations
// and the GatewayPolicies that target it.
func (t *translator) gwinGatewaySettings(g *gatewayState) *gwinSettings {
	run := t.gwin()
	if gs, ok := run.gateways[g]; ok {
		return gs
	}
	gs := t.gwinSettingsOf(gwinGatewaySchema, g.key, g.obj.Annotations, g.obj.Labels)
	run.gateways[g] = gs
	return gs
}

// gwinSettingsOf merges an object's annotations with the valid policies
// that target it.
func (t *translator) gwinSettingsOf(sc *gwinSchema, key ObjectKey, annotations, labels map[string]string) *gwinSettings {
	own, errs := parseAnnotations(sc, key, annotations)
	sets := [][]*gwinSetting{own}
	for _, p := range t.gwin().policies {
		if len(p.errs) == 0 && p.applies(key, labels) {
			sets = append(sets, p.settings)
		}
	}
	gs := newGwinSettings(sc, sets...)
	gs.errs = append(errs, gs.errs...)
	return gs
}

// checkGateway validates the Gateway's gwin settings: types, ranges,
// unknown keys, conflicts, RBAC and discard rule structure. Errors reject
// the Gateway (Accepted=False InvalidParameters).
func (p gwinProfile) checkGateway(t *translator, g *gatewayState) {
	gs := t.gwinGatewaySettings(g)
	var own []string
	for _, l := range g.own {
		own = append(own, l.name)
	}
	for _, n := range gs.names("listener") {
		if !containsString(own, n) {
			gs.warns = append(gs.warns, fmt.Sprintf("%slistener.%s.*: the Gateway has no listener %q, so these settings apply to nothing", gwinAnnotationPrefix, n, n))
		}
	}
	gs.checkScope("listener", true)
	_, warns := buildAccessLog(gs)
	gs.warns = appendNew(gs.warns, warns...)
	t.reportGwinSettings(g.key, gs)
	if len(gs.errs) > 0 {
		g.cond.failAt(gwinField(gwinErrors(gs.errs)), string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonInvalidParameters), gwinErrors(gs.errs))
	}
}

// gwinErrors renders the errors of one object for a condition message.
func gwinErrors(errs []string) string {
	return "invalid gwin settings: " + strings.Join(errs, "; ")
}

// reportGwinSettings adds an object's warnings and its list of settings
// gwdev does not emulate as findings.
func (t *translator) reportGwinSettings(key ObjectKey, gs *gwinSettings) {
	for _, w := range gs.warns {
		t.noteAt("", SeverityWarning, key, gwinField(w), "", w)
	}
	if len(gs.errs) > 0 {
		return
	}
	if ne := gs.notEmulated(); len(ne) > 0 {
		t.noteKind(NoteNotEmulated, SeverityInfo, key, "", "gwin settings validated but not emulated locally (they configure the cloud load balancer): "+strings.Join(ne, ", "))
	}
}

// checkListenerSet validates a ListenerSet's gwin settings (its
// annotations and ListenerSetPolicies; the Gateway's settings are not
// inherited).
func (p gwinProfile) checkListenerSet(t *translator, s *listenerSetState) string {
	run := t.gwin()
	gs := t.gwinSettingsOf(gwinListenerSetSchema, s.key, s.obj.Annotations, s.obj.Labels)
	run.sets[s] = gs
	var own []string
	for _, l := range s.listeners {
		own = append(own, l.name)
	}
	for _, n := range gs.names("listener") {
		if !containsString(own, n) {
			gs.warns = append(gs.warns, fmt.Sprintf("%slistener.%s.*: the ListenerSet has no listener %q, so these settings apply to nothing", gwinAnnotationPrefix, n, n))
		}
	}
	gs.checkScope("listener", true)
	t.reportGwinSettings(s.key, gs)
	if len(gs.errs) > 0 {
		return gwinErrors(gs.errs)
	}
	return ""
}

// checkListener warns about listener-specific settings that do not fit the
// listener's protocol (HTTP settings and RBAC on a TLS listener, stream
// settings on an HTTP one).
func (p gwinProfile) checkListener(t *translator, l *listenerState) {
	var gs *gwinSettings
	if l.set != nil {
		gs = t.gwin().sets[l.set]
	} else {
		gs = t.gwinGatewaySettings(l.gateway)
	}
	if gs == nil {
		return
	}
	httpish := l.protocol == gwv1.HTTPProtocolType || l.protocol == gwv1.HTTPSProtocolType
	for _, k := range gs.keys() {
		s := gs.byKey[k]
		if s.spec.scope != "listener" || !s.spec.named || s.scopeName() != l.name {
			continue
		}
		sub := s.sub()
		var fits bool
		switch {
		case strings.HasPrefix(sub, "http."), strings.HasPrefix(sub, "rbac."), sub == "securityProfileID":
			fits = httpish
		case strings.HasPrefix(sub, "stream."):
			fits = !httpish
		default:
			fits = true
		}
		if !fits {
			t.note(SeverityWarning, l.ownerKey(), "listener "+quote(l.name),
				fmt.Sprintf("%s has no effect on %s listener", s.from, withArticle(l.protocol)))
		}
	}
}

// checkRoute validates a route's gwin settings (annotations and
// RoutePolicies) once, for its first gwin parent.
func (p gwinProfile) checkRoute(t *translator, r *routeState) string {
	gs := t.gwinRouteSettings(r)
	ruleNames, hosts := routeNames(r)
	for _, n := range gs.names("rule") {
		if !containsString(ruleNames, n) {
			gs.warns = append(gs.warns, fmt.Sprintf("%srule.%s.*: the route has no rule named %q, so these settings apply to nothing", gwinAnnotationPrefix, n, n))
		}
	}
	for _, h := range gs.names("host") {
		if !containsString(hosts, h) {
			gs.warns = append(gs.warns, fmt.Sprintf("%shost.%s.*: %q is not one of the route's spec.hostnames, so these settings apply to nothing", gwinAnnotationPrefix, h, h))
		}
	}
	gs.checkScope("rule", true)
	gs.checkScope("host", true)
	t.reportGwinSettings(r.key, gs)
	if len(gs.errs) > 0 {
		return gwinErrors(gs.errs)
	}
	return ""
}

// gwinRouteSettings returns the gwin settings of a route.
func (t *translator) gwinRouteSettings(r *routeState) *gwinSettings {
	run := t.gwin()
	if gs, ok := run.routes[r]; ok {
		return gs
	}
	m := r.obj.(metav1.Object)
	gs := t.gwinSettingsOf(gwinRouteSchema, r.key, m.GetAnnotations(), m.GetLabels())
	run.routes[r] = gs
	return gs
}

// routeNames lists a route's rule names and spec.hostnames.
func routeNames(r *routeState) (rules, hosts []string) {
	add := func(n *gwv1.SectionName) {
		if n != nil {
			rules = append(rules, string(*n))
		}
	}
	switch o := r.obj.(type) {
	case *gwv1.HTTPRoute:
		for i := range o.Spec.Rules {
			add(o.Spec.Rules[i].Name)
		}
	case *gwv1.GRPCRoute:
		for i := range o.Spec.Rules {
			add(o.Spec.Rules[i].Name)
		}
	case *gwv1.TLSRoute:
		for i := range o.Spec.Rules {
			add(o.Spec.Rules[i].Name)
		}
	}
	return rules, r.hostnames
}

// checkScope checks the settings of a scope as they apply: the "<scope>s."
// settings alone, and merged with each name's "<scope>.<name>." settings:
// conflicts and, with rbac (the complete settings of an object, not one
// policy's part), the RBAC structure. The structure is checked only when
// every value is valid: a dropped invalid value would read as missing.
func (gs *gwinSettings) checkScope(scope string, rbac bool) {
	rbac = rbac && len(gs.errs) == 0
	seen := map[string]bool{}
	for _, n := range append([]string{""}, gs.names(scope)...) {
		eff := gs.effective(scope, n, seen)
		if !rbac {
			continue
		}
		what := scope + " " + quote(n)
		if n == "" {
			what = scope + "s"
		}
		_, errs, warns := buildRBAC(eff, what, "")
		gs.errs = appendNew(gs.errs, errs...)
		gs.warns = appendNew(gs.warns, warns...)
	}
}

// appendNew appends the messages not already in list.
func appendNew(list []string, msgs ...string) []string {
	for _, m := range msgs {
		if !containsString(list, m) {
			list = append(list, m)
		}
	}
	return list
}

// noteForeignGwinAnnotations warns that gwin annotations on a Gateway of
// another profile are ignored (a likely wrong gatewayClassName).
func (t *translator) noteForeignGwinAnnotations(g *gatewayState, p profile) {
	for k := range g.obj.Annotations {
		if strings.HasPrefix(k, gwinAnnotationPrefix) {
			t.note(SeverityWarning, g.key, "", fmt.Sprintf("gwin.yandex.cloud annotations are ignored: GatewayClass %s uses the %s profile (the gwin profile is for class %s, or map this class with --profile %s=gwin or gwdev.yaml profiles)",
				g.class.name, p.name(), gwinClassName, g.class.name))
			return
		}
	}
}

// finishGwin validates Services and writes the status of gwin policies,
// once every Gateway and route is processed.
func (t *translator) finishGwin() {
	active := false
	for _, g := range t.gateways {
		if t.profileOf(g).name() == ProfileGwin {
			active = true
		}
	}
	if !active {
		for _, p := range t.out.ImplementationPolicies {
			if policyGroup(p) == gwinGroup {
				t.note(SeverityInfo, ObjectKey{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}, "",
					"not interpreted: no managed Gateway uses the gwin profile (class "+gwinClassName+")")
			}
		}
		return
	}
	t.checkGwinServices()
	for _, p := range t.gwin().policies {
		t.writeGwinPolicyStatus(p)
	}
}

// checkGwinServices validates the gwin settings of every Service that has
// gwin annotations or is targeted by a ServicePolicy. A Service has no
// status, so errors are findings.
func (t *translator) checkGwinServices() {
	for _, svc := range t.out.Services {
		key := ObjectKey{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}
		gs := t.gwinSettingsOf(gwinServiceSchema, key, svc.Annotations, svc.Labels)
		if len(gs.byKey) == 0 && len(gs.errs) == 0 {
			continue
		}
		for _, e := range gs.errs {
			t.noteAt(NoteProfileInvalid, SeverityError, key, gwinField(e), "", "invalid gwin settings: "+e)
		}
		t.reportGwinSettings(key, gs)
	}
}
