package gwin

import (
	"fmt"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
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

// Name is the gwin profile's name (Options.Profiles, gwdev.yaml profiles,
// --profile).
const Name = "gwin"

// ClassName is the GatewayClass the gwin profile is chosen for.
const ClassName = "gwin-default"

// Group is the API group of gwin's policies and certificates.
const Group = "gwin.yandex.cloud"

func init() { engine.RegisterProfile(Profile{}) }

// Profile is the gwin profile, registered with the engine by this
// package's init function.
type Profile struct{}

var (
	_ engine.Profile               = Profile{}
	_ engine.GatewayChecker        = (*run)(nil)
	_ engine.ForeignGatewayChecker = (*run)(nil)
	_ engine.AddressChecker        = (*run)(nil)
	_ engine.ListenerSetChecker    = (*run)(nil)
	_ engine.ListenerChecker       = (*run)(nil)
	_ engine.RouteChecker          = (*run)(nil)
	_ engine.CertificateResolver   = (*run)(nil)
	_ engine.TableContributor      = (*run)(nil)
	_ engine.PolicyKindsProfile    = Profile{}
)

// Name is "gwin".
func (Profile) Name() string { return Name }

// Class is gwin-default.
func (Profile) Class() string { return ClassName }

// Summary says what gwdev does for the profile.
func (Profile) Summary() string {
	return "gwdev validates gwin.yandex.cloud annotations and policies, warns about what the cloud gateway does not do, and emulates RBAC, allowHTTP10, HTTP/2 max concurrent streams, stream idle timeouts, access-log discard rules and route timeouts"
}

// Start begins the gwin part of one translation.
func (Profile) Start(tr *engine.Translation) engine.ProfileRun {
	return &run{tr: tr, gateways: map[engine.ObjectKey]*gwinSettings{}, sets: map[engine.ObjectKey]*gwinSettings{},
		routes: map[engine.ObjectKey]*gwinSettings{}, rules: map[ruleOnHost]*table.RouteRule{}}
}

// gwinFeatures is what the gwin reference supports: HTTP, HTTPS and TLS
// listeners, Terminate, HTTPRoute/GRPCRoute/TLSRoute, the header modifier,
// redirect and rewrite filters, Exact and PathPrefix paths, and
// timeouts.backendRequest.
var gwinFeatures = &engine.FeatureSet{
	Protocols:  map[gwv1.ProtocolType]engine.Support{gwv1.TCPProtocolType: engine.Warned, gwv1.UDPProtocolType: engine.Warned},
	TLSModes:   map[gwv1.TLSModeType]engine.Support{gwv1.TLSModePassthrough: engine.Warned},
	RouteKinds: map[string]engine.Support{"TCPRoute": engine.Warned, "UDPRoute": engine.Warned},
	Filters: map[gwv1.HTTPRouteFilterType]engine.Support{
		gwv1.HTTPRouteFilterRequestMirror: engine.Warned,
		gwv1.HTTPRouteFilterCORS:          engine.Warned,
		gwv1.HTTPRouteFilterExtensionRef:  engine.Refused,
		gwv1.HTTPRouteFilterExternalAuth:  engine.Refused,
	},
	PathMatches: map[gwv1.PathMatchType]engine.Support{gwv1.PathMatchRegularExpression: engine.Warned},
	RuleFields:  map[string]engine.Support{"timeouts.request": engine.Warned, "retry": engine.Warned, "sessionPersistence": engine.Warned},
	SupportedText: map[string]string{
		"protocols":   "HTTP, HTTPS and TLS listeners",
		"tlsModes":    "TLS mode Terminate only",
		"routeKinds":  "HTTPRoute, GRPCRoute and TLSRoute",
		"filters":     "RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect and URLRewrite",
		"pathMatches": "Exact and PathPrefix",
		"ruleFields":  "matches, filters, backendRefs and timeouts.backendRequest",
	},
}

// Features is what gwin supports (gwinFeatures).
func (Profile) Features() *engine.FeatureSet { return gwinFeatures }

// run is the gwin state of one translation: the gwin policies (parsed on
// first use) and the settings of each object, by key.
type run struct {
	tr *engine.Translation
	// parsed says policies are parsed.
	parsed   bool
	policies []*gwinPolicy
	gateways map[engine.ObjectKey]*gwinSettings
	sets     map[engine.ObjectKey]*gwinSettings
	routes   map[engine.ObjectKey]*gwinSettings
	// rules memoises RouteRule copies by rule and virtual host.
	rules map[ruleOnHost]*table.RouteRule
}

type ruleOnHost struct {
	rr   *table.RouteRule
	host string
}

// gwinPolicies returns the gwin policies, parsing them on first use.
func (rn *run) gwinPolicies() []*gwinPolicy {
	if !rn.parsed {
		rn.parsed = true
		for _, p := range rn.tr.Output().ImplementationPolicies {
			if gp := newGwinPolicy(p); gp != nil {
				rn.policies = append(rn.policies, gp)
			}
		}
	}
	return rn.policies
}

// gatewaySettings returns the gwin settings of a Gateway: its annotations
// and the GatewayPolicies that target it.
func (rn *run) gatewaySettings(g *engine.GatewayView) *gwinSettings {
	if gs, ok := rn.gateways[g.Key()]; ok {
		return gs
	}
	obj := g.Object()
	gs := rn.settingsOf(gwinGatewaySchema(), g.Key(), obj.Annotations, obj.Labels)
	rn.gateways[g.Key()] = gs
	return gs
}

// settingsOf merges an object's annotations with the valid policies that
// target it.
func (rn *run) settingsOf(sc *gwinSchema, key engine.ObjectKey, annotations, labels map[string]string) *gwinSettings {
	own, errs := parseAnnotations(sc, key, annotations)
	sets := [][]*gwinSetting{own}
	for _, p := range rn.gwinPolicies() {
		if len(p.errs) == 0 && p.applies(key, labels) {
			sets = append(sets, p.settings)
		}
	}
	gs := newGwinSettings(sc, sets...)
	gs.errs = append(errs, gs.errs...)
	return gs
}

// CheckGateway validates the Gateway's gwin settings: types, ranges,
// unknown keys, conflicts, RBAC and discard rule structure. Errors reject
// the Gateway (Accepted=False InvalidParameters).
func (rn *run) CheckGateway(g *engine.GatewayView) {
	gs := rn.gatewaySettings(g)
	own := g.ListenerNames()
	for _, n := range gs.names("listener") {
		if !containsString(own, n) {
			gs.warns = append(gs.warns, fmt.Sprintf("%slistener.%s.*: the Gateway has no listener %q, so these settings apply to nothing", gwinAnnotationPrefix, n, n))
		}
	}
	gs.checkScope("listener", true)
	_, warns := buildAccessLog(gs)
	gs.warns = appendNew(gs.warns, warns...)
	rn.reportSettings(g.Key(), gs)
	if len(gs.errs) > 0 {
		g.FailAt(gwinField(gwinErrors(gs.errs)), string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonInvalidParameters), gwinErrors(gs.errs))
	}
}

// gwinErrors renders the errors of one object for a condition message.
func gwinErrors(errs []string) string {
	return "invalid gwin settings: " + strings.Join(errs, "; ")
}

// reportSettings adds an object's warnings and its list of settings gwdev
// does not emulate as findings.
func (rn *run) reportSettings(key engine.ObjectKey, gs *gwinSettings) {
	for _, w := range gs.warns {
		rn.tr.NoteAt("", engine.SeverityWarning, key, gwinField(w), "", w)
	}
	if len(gs.errs) > 0 {
		return
	}
	if ne := gs.notEmulated(); len(ne) > 0 {
		rn.tr.NoteKind(engine.NoteNotEmulated, engine.SeverityInfo, key, "", "gwin settings validated but not emulated locally (they configure the cloud load balancer): "+strings.Join(ne, ", "))
	}
}

// CheckListenerSet validates a ListenerSet's gwin settings (its
// annotations and ListenerSetPolicies; the Gateway's settings are not
// inherited).
func (rn *run) CheckListenerSet(s *engine.ListenerSetView) string {
	obj := s.Object()
	gs := rn.settingsOf(gwinListenerSetSchema(), s.Key(), obj.Annotations, obj.Labels)
	rn.sets[s.Key()] = gs
	own := s.ListenerNames()
	for _, n := range gs.names("listener") {
		if !containsString(own, n) {
			gs.warns = append(gs.warns, fmt.Sprintf("%slistener.%s.*: the ListenerSet has no listener %q, so these settings apply to nothing", gwinAnnotationPrefix, n, n))
		}
	}
	gs.checkScope("listener", true)
	rn.reportSettings(s.Key(), gs)
	if len(gs.errs) > 0 {
		return gwinErrors(gs.errs)
	}
	return ""
}

// CheckListener warns about listener-specific settings that do not fit the
// listener's protocol (HTTP settings and RBAC on a TLS listener, stream
// settings on an HTTP one).
func (rn *run) CheckListener(l *engine.ListenerView) {
	gs := rn.listenerSettings(l)
	if gs == nil {
		return
	}
	httpish := l.Protocol() == gwv1.HTTPProtocolType || l.Protocol() == gwv1.HTTPSProtocolType
	for _, k := range gs.keys() {
		s := gs.byKey[k]
		if s.spec.scope != "listener" || !s.spec.named || s.scopeName() != l.Name() {
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
			rn.tr.Note(engine.SeverityWarning, l.Owner(), "listener "+quote(l.Name()),
				fmt.Sprintf("%s has no effect on %s listener", s.from, withArticle(l.Protocol())))
		}
	}
}

// CheckRoute validates a route's gwin settings (annotations and
// RoutePolicies) once, for its first gwin parent.
func (rn *run) CheckRoute(r *engine.RouteView) string {
	gs := rn.routeSettings(r)
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
	rn.reportSettings(r.Key(), gs)
	if len(gs.errs) > 0 {
		return gwinErrors(gs.errs)
	}
	return ""
}

// routeSettings returns the gwin settings of a route.
func (rn *run) routeSettings(r *engine.RouteView) *gwinSettings {
	if gs, ok := rn.routes[r.Key()]; ok {
		return gs
	}
	m := r.Object()
	gs := rn.settingsOf(gwinRouteSchema(), r.Key(), m.GetAnnotations(), m.GetLabels())
	rn.routes[r.Key()] = gs
	return gs
}

// listenerSettings returns the settings of a listener's owner: its
// ListenerSet's (a set does not inherit the Gateway's settings; nil when
// the set was not checked), else its Gateway's.
func (rn *run) listenerSettings(l *engine.ListenerView) *gwinSettings {
	if set, ok := l.ListenerSet(); ok {
		return rn.sets[set]
	}
	return rn.gatewaySettings(l.Gateway())
}

// routeNames lists a route's rule names and spec.hostnames.
func routeNames(r *engine.RouteView) (rules, hosts []string) {
	add := func(n *gwv1.SectionName) {
		if n != nil {
			rules = append(rules, string(*n))
		}
	}
	switch o := r.Object().(type) {
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
	return rules, r.Hostnames()
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

// CheckForeignGateway warns that gwin annotations on a Gateway of another
// profile are ignored (a likely wrong gatewayClassName).
func (rn *run) CheckForeignGateway(g *engine.GatewayView, profile string) {
	for k := range g.Object().Annotations {
		if strings.HasPrefix(k, gwinAnnotationPrefix) {
			rn.tr.Note(engine.SeverityWarning, g.Key(), "", fmt.Sprintf("gwin.yandex.cloud annotations are ignored: GatewayClass %s uses the %s profile (the gwin profile is for class %s, or map this class with --profile %s=gwin or gwdev.yaml profiles)",
				g.ClassName(), profile, ClassName, g.ClassName()))
			return
		}
	}
}

// Finish validates Services and writes the status of gwin policies, once
// every Gateway and route is processed.
func (rn *run) Finish() {
	active := false
	for _, g := range rn.tr.Gateways() {
		if rn.tr.ProfileOf(g.Key()) == Name {
			active = true
		}
	}
	if !active {
		for _, p := range rn.tr.Output().ImplementationPolicies {
			if policyGroup(p) == Group {
				rn.tr.Note(engine.SeverityInfo, engine.ObjectKey{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}, "",
					"not interpreted: no managed Gateway uses the gwin profile (class "+ClassName+")")
			}
		}
		return
	}
	rn.checkServices()
	for _, p := range rn.gwinPolicies() {
		rn.writePolicyStatus(p)
	}
}

// checkServices validates the gwin settings of every Service that has gwin
// annotations or is targeted by a ServicePolicy. A Service has no status,
// so errors are findings.
func (rn *run) checkServices() {
	for _, svc := range rn.tr.Output().Services {
		key := engine.ObjectKey{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}
		gs := rn.settingsOf(gwinServiceSchema(), key, svc.Annotations, svc.Labels)
		if len(gs.byKey) == 0 && len(gs.errs) == 0 {
			continue
		}
		for _, e := range gs.errs {
			rn.tr.NoteAt(engine.NoteProfileInvalid, engine.SeverityError, key, gwinField(e), "", "invalid gwin settings: "+e)
		}
		rn.reportSettings(key, gs)
	}
}

// quote renders s as a Go string literal ("http"), as engine messages do.
func quote(s string) string { return fmt.Sprintf("%q", s) }

// withArticle renders "an HTTP", "a TLS".
func withArticle(p gwv1.ProtocolType) string {
	if strings.HasPrefix(string(p), "H") {
		return "an " + string(p)
	}
	return "a " + string(p)
}

// FieldOf names the field a gwin message is about (engine.MessageFields):
// the engine asks it for the field of the profile's verdicts.
func (rn *run) FieldOf(msg string) string { return gwinField(msg) }
