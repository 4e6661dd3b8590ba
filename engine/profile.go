package engine

import (
	"fmt"
	"sort"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Implementation profiles. A profile is what one Gateway API implementation
// does on top of (or short of) the spec: the protocols, TLS modes, route
// kinds, filters and match types it supports, the implementation-specific
// annotations and policy resources it reads, and the data-plane behaviour
// those settings give (written into the routing table for the emulator).
// gwdev picks a profile per GatewayClass: the one Options.Profiles names,
// else ProfileGwin for the class gwin-default, else ProfileGeneric.
const (
	// ProfileGeneric is the Gateway API as the spec defines it.
	ProfileGeneric = "generic"
	// ProfileGwin is the Yandex Cloud gateway (gatewayClassName
	// gwin-default, gwin.yandex.cloud/* annotations and policies).
	ProfileGwin = "gwin"
)

// ProfileNames lists the implementation profiles gwdev knows, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// profile is an implementation profile. Optional capabilities are the small
// interfaces below; the translator calls them where the spec's own
// processing leaves room for the implementation.
type profile interface {
	// name is the profile's name (ProfileGeneric, ProfileGwin).
	name() string
	// features says what the implementation supports.
	features() *featureSet
}

// gatewayChecker is a profile that validates a managed Gateway's
// implementation settings (annotations, policies) before its listeners are
// processed; it rejects the Gateway through g.cond.
type gatewayChecker interface {
	checkGateway(t *translator, g *gatewayState)
}

// addressChecker is a profile that decides spec.addresses itself: which
// address types are valid and which address gwdev binds.
type addressChecker interface {
	checkAddresses(t *translator, g *gatewayState, used map[string]bool)
}

// listenerSetChecker is a profile that validates a ListenerSet attaching to
// one of its Gateways; a non-empty result rejects the set (Invalid).
type listenerSetChecker interface {
	checkListenerSet(t *translator, s *listenerSetState) string
}

// listenerChecker is a profile that validates one listener after the
// spec's checks (implementation settings that name the listener).
type listenerChecker interface {
	checkListener(t *translator, l *listenerState)
}

// routeChecker is a profile that validates a route attaching to one of its
// Gateways; a non-empty result refuses the attachment (Accepted=False,
// UnsupportedValue).
type routeChecker interface {
	checkRoute(t *translator, r *routeState) string
}

// certificateResolver is a profile that resolves certificateRefs of kinds
// other than core Secrets. ok is false when the profile does not handle the
// kind.
type certificateResolver interface {
	resolveCertificate(t *translator, group, kind, ns, name string) (cert *Certificate, reason gwv1.ListenerConditionReason, msg string, ok bool)
}

// tableContributor is a profile that adds data-plane behaviour to the
// routing table of its Gateways.
type tableContributor interface {
	// gatewayTable adds Gateway-wide settings (the access log).
	gatewayTable(t *translator, g *gatewayState, gt *GatewayTable)
	// listenerTable adds per-listener settings (ListenerTable.Policy).
	listenerTable(t *translator, l *listenerState, lt *ListenerTable)
	// routeRule returns the rule as served on a listener and virtual host
	// of the profile: rr itself, or an adjusted copy.
	routeRule(t *translator, l *listenerState, host string, r *routeState, rr *RouteRule) *RouteRule
}

// profiles are the profiles gwdev knows, by name.
var profiles = map[string]profile{
	ProfileGeneric: genericProfile{},
	ProfileGwin:    gwinProfile{},
}

// genericProfile is the spec as is: every feature gwdev emulates.
type genericProfile struct{}

func (genericProfile) name() string          { return ProfileGeneric }
func (genericProfile) features() *featureSet { return &featureSet{} }

// support grades a feature in a profile.
type support int

const (
	// supported: the implementation does it (the zero value).
	supported support = iota
	// warned: the spec allows it and gwdev emulates it, but the
	// implementation does not do it; a warning says so.
	warned
	// refused: the implementation does not support it; the listener or
	// route is not accepted.
	refused
)

// featureSet says which spec features a profile supports. A feature that
// is not listed is supported.
type featureSet struct {
	protocols   map[gwv1.ProtocolType]support
	tlsModes    map[gwv1.TLSModeType]support
	routeKinds  map[string]support
	filters     map[gwv1.HTTPRouteFilterType]support
	pathMatches map[gwv1.PathMatchType]support
	// ruleFields are HTTPRoute rule fields: "timeouts.request", "retry",
	// "sessionPersistence".
	ruleFields map[string]support
	// supportedText renders what the implementation supports, per feature
	// family ("protocols", "filters", ...), for messages.
	supportedText map[string]string
}

// explain renders "<what> is not supported by the <p> profile (<p>
// supports ...)".
func (f *featureSet) explain(p profile, family, what string) string {
	msg := fmt.Sprintf("%s is not supported by the %s profile", what, p.name())
	if s := f.supportedText[family]; s != "" {
		msg += fmt.Sprintf(" (%s supports %s)", p.name(), s)
	}
	return msg
}

// profileFor returns the profile of a GatewayClass name: Options.Profiles,
// then the class name's default. An unknown name in Options is reported
// once and the generic profile is used.
func (t *translator) profileFor(class string) profile {
	if p, ok := t.prof.byClass[class]; ok {
		return p
	}
	name := ProfileGeneric
	if class == gwinClassName {
		name = ProfileGwin
	}
	if n, ok := t.opts.Profiles[class]; ok {
		name = n
	}
	p, ok := profiles[name]
	if !ok {
		t.note(SeverityError, ObjectKey{Kind: "GatewayClass", Name: class}, "",
			fmt.Sprintf("unknown implementation profile %q (known: %s); using %s", name, strings.Join(ProfileNames(), ", "), ProfileGeneric))
		p = profiles[ProfileGeneric]
	}
	if t.prof.byClass == nil {
		t.prof.byClass = map[string]profile{}
	}
	t.prof.byClass[class] = p
	if p.name() != ProfileGeneric {
		t.note(SeverityInfo, ObjectKey{Kind: "GatewayClass", Name: class}, "",
			fmt.Sprintf("implementation profile %s: %s", p.name(), profileSummary(p)))
	}
	return p
}

// profileSummary is the one-line description of a profile in check output.
func profileSummary(p profile) string {
	switch p.name() {
	case ProfileGwin:
		return "gwdev validates gwin.yandex.cloud annotations and policies, warns about what the cloud gateway does not do, and emulates RBAC, allowHTTP10, HTTP/2 max concurrent streams, stream idle timeouts, access-log discard rules and route timeouts"
	}
	return "the Gateway API as specified"
}

// profileOf returns the profile of a managed Gateway.
func (t *translator) profileOf(g *gatewayState) profile {
	if g == nil || g.class == nil {
		return profiles[ProfileGeneric]
	}
	return t.profileFor(g.class.name)
}

// profileOfOwner returns the profile of the Gateway a listener owner (a
// Gateway, or a ListenerSet through its parent) belongs to.
func (t *translator) profileOfOwner(owner ObjectKey) profile {
	switch owner.Kind {
	case "Gateway":
		return t.profileOf(t.gatewayByKey[nsName{owner.Namespace, owner.Name}])
	case "ListenerSet":
		if s := t.setByKey[nsName{owner.Namespace, owner.Name}]; s != nil {
			return t.profileOf(s.parent)
		}
	}
	return profiles[ProfileGeneric]
}

// profileGateway runs the Gateway's profile checks (see gatewayChecker).
func (t *translator) profileGateway(g *gatewayState) {
	p := t.profileOf(g)
	if c, ok := p.(gatewayChecker); ok {
		c.checkGateway(t, g)
		return
	}
	t.noteForeignGwinAnnotations(g, p)
}

// finishProfiles runs what profiles do once every object is processed
// (policy status, objects without status of their own).
func (t *translator) finishProfiles() {
	t.finishGwin()
}

// profileAddresses lets the Gateway's profile decide spec.addresses; it
// reports whether the profile did.
func (t *translator) profileAddresses(g *gatewayState, used map[string]bool) bool {
	c, ok := t.profileOf(g).(addressChecker)
	if ok {
		c.checkAddresses(t, g, used)
	}
	return ok
}

// profileListenerSet runs the profile checks of a ListenerSet's parent
// Gateway; a non-empty result rejects the set.
func (t *translator) profileListenerSet(s *listenerSetState) string {
	if c, ok := t.profileOf(s.parent).(listenerSetChecker); ok {
		return c.checkListenerSet(t, s)
	}
	return ""
}

// profileListener applies the profile's protocol and TLS mode support to a
// listener and runs its listener checks.
func (t *translator) profileListener(l *listenerState) {
	p := t.profileOf(l.gateway)
	f := p.features()
	scope := "listener " + quote(l.name)
	switch f.protocols[l.protocol] {
	case refused:
		msg := f.explain(p, "protocols", "protocol "+string(l.protocol))
		l.cond.fail("Accepted", string(gwv1.ListenerReasonUnsupportedProtocol), msg)
		l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), "unsupported protocol")
	case warned:
		t.note(SeverityWarning, l.ownerKey(), scope, f.explain(p, "protocols", "protocol "+string(l.protocol))+"; gwdev serves it locally anyway")
	}
	if l.tls != nil && l.tls.Mode != nil {
		switch f.tlsModes[*l.tls.Mode] {
		case refused:
			l.cond.fail("Accepted", string(gwv1.ListenerReasonUnsupportedProtocol), f.explain(p, "tlsModes", "TLS mode "+string(*l.tls.Mode)))
			l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), "unsupported TLS mode")
		case warned:
			t.note(SeverityWarning, l.ownerKey(), scope, f.explain(p, "tlsModes", "TLS mode "+string(*l.tls.Mode))+"; gwdev serves it locally anyway")
		}
	}
	if c, ok := p.(listenerChecker); ok {
		c.checkListener(t, l)
	}
}

// verdictField is the field a profile's verdict (the refusal profileRoute
// or profileListenerSet returns) is about, "" when it names none; only
// gwin's name one.
func verdictField(why string) string { return gwinField(why) }

// profileRoute checks a route against the profile of the Gateway it
// attaches to: unsupported features refuse it, features the implementation
// does not do give one warning per route and profile, and the profile's own
// checks run. The result is memoised per route and profile.
func (t *translator) profileRoute(r *routeState, g *gatewayState) string {
	p := t.profileOf(g)
	key := routeProfileKey{r, p.name()}
	if why, ok := t.prof.routeVerdicts[key]; ok {
		return why
	}
	var refusals []string
	f := p.features()
	for _, fu := range f.routeFeaturesOf(r) {
		s := supported
		switch fu.family {
		case "routeKinds":
			s = f.routeKinds[fu.value]
		case "filters":
			s = f.filters[gwv1.HTTPRouteFilterType(fu.value)]
		case "pathMatches":
			s = f.pathMatches[gwv1.PathMatchType(fu.value)]
		case "ruleFields":
			s = f.ruleFields[fu.value]
		}
		switch s {
		case refused:
			msg := f.explain(p, fu.family, fu.what)
			if fu.at != "" {
				msg = fu.at + ": " + msg
			}
			refusals = append(refusals, msg)
		case warned:
			t.note(SeverityWarning, r.key, fu.at, f.explain(p, fu.family, fu.what)+"; gwdev emulates it locally")
		}
	}
	why := strings.Join(refusals, "; ")
	if c, ok := p.(routeChecker); ok && why == "" {
		why = c.checkRoute(t, r)
	}
	if t.prof.routeVerdicts == nil {
		t.prof.routeVerdicts = map[routeProfileKey]string{}
	}
	t.prof.routeVerdicts[key] = why
	return why
}

// profileRun is the profile state of one translation.
type profileRun struct {
	// byClass memoises profileFor.
	byClass map[string]profile
	// routeVerdicts memoises profileRoute.
	routeVerdicts map[routeProfileKey]string
	// gwin is the gwin profile's state (nil until used).
	gwin *gwinRun
}

// routeProfileKey memoises profileRoute.
type routeProfileKey struct {
	r       *routeState
	profile string
}

// routeFeature is one use of a spec feature by a route.
type routeFeature struct {
	family, value string
	// what names the feature in messages; at is where ("" or
	// "spec.rules[0].filters[1]").
	what, at string
}

// routeFeaturesOf lists the features a route uses, or none when the feature
// set lists no route features (every one is supported then, so there is
// nothing to check).
func (f *featureSet) routeFeaturesOf(r *routeState) []routeFeature {
	if len(f.routeKinds) == 0 && len(f.filters) == 0 && len(f.pathMatches) == 0 && len(f.ruleFields) == 0 {
		return nil
	}
	return routeFeatures(r)
}

// routeFeatures lists the features a route uses, in spec order.
func routeFeatures(r *routeState) []routeFeature {
	out := []routeFeature{{family: "routeKinds", value: r.kind, what: r.kind}}
	filter := func(at string, typ gwv1.HTTPRouteFilterType) {
		out = append(out, routeFeature{family: "filters", value: string(typ), what: "filter " + string(typ), at: at})
	}
	switch o := r.obj.(type) {
	case *gwv1.HTTPRoute:
		for i, rule := range o.Spec.Rules {
			at := fmt.Sprintf("spec.rules[%d]", i)
			for j, m := range rule.Matches {
				if m.Path != nil && m.Path.Type != nil {
					out = append(out, routeFeature{family: "pathMatches", value: string(*m.Path.Type),
						what: string(*m.Path.Type) + " path match", at: fmt.Sprintf("%s.matches[%d].path", at, j)})
				}
			}
			for j, f := range rule.Filters {
				filter(fmt.Sprintf("%s.filters[%d]", at, j), f.Type)
			}
			for k, br := range rule.BackendRefs {
				for j, f := range br.Filters {
					filter(fmt.Sprintf("%s.backendRefs[%d].filters[%d]", at, k, j), f.Type)
				}
			}
			if rule.Timeouts != nil && rule.Timeouts.Request != nil {
				out = append(out, routeFeature{family: "ruleFields", value: "timeouts.request", what: "timeouts.request", at: at + ".timeouts.request"})
			}
			if rule.Retry != nil {
				out = append(out, routeFeature{family: "ruleFields", value: "retry", what: "retry", at: at + ".retry"})
			}
			if rule.SessionPersistence != nil {
				out = append(out, routeFeature{family: "ruleFields", value: "sessionPersistence", what: "sessionPersistence", at: at + ".sessionPersistence"})
			}
		}
	case *gwv1.GRPCRoute:
		for i, rule := range o.Spec.Rules {
			at := fmt.Sprintf("spec.rules[%d]", i)
			for j, f := range rule.Filters {
				filter(fmt.Sprintf("%s.filters[%d]", at, j), gwv1.HTTPRouteFilterType(f.Type))
			}
			for k, br := range rule.BackendRefs {
				for j, f := range br.Filters {
					filter(fmt.Sprintf("%s.backendRefs[%d].filters[%d]", at, k, j), gwv1.HTTPRouteFilterType(f.Type))
				}
			}
			if rule.SessionPersistence != nil {
				out = append(out, routeFeature{family: "ruleFields", value: "sessionPersistence", what: "sessionPersistence", at: at + ".sessionPersistence"})
			}
		}
	}
	return out
}

// profileCertificate lets the profile of a listener owner resolve a
// certificateRef of a non-Secret kind; ok is false when it does not.
func (t *translator) profileCertificate(owner ObjectKey, group, kind, ns, name string) (*Certificate, gwv1.ListenerConditionReason, string, bool) {
	if group == "" && kind == "Secret" {
		return nil, "", "", false
	}
	if c, ok := t.profileOfOwner(owner).(certificateResolver); ok {
		return c.resolveCertificate(t, group, kind, ns, name)
	}
	return nil, "", "", false
}

// profileGatewayTable lets the Gateway's profile add Gateway-wide settings.
func (t *translator) profileGatewayTable(g *gatewayState, gt *GatewayTable) {
	if c, ok := t.profileOf(g).(tableContributor); ok {
		c.gatewayTable(t, g, gt)
	}
}

// profileListenerTable lets the listener's profile add its settings.
func (t *translator) profileListenerTable(l *listenerState, lt *ListenerTable) {
	if c, ok := t.profileOf(l.gateway).(tableContributor); ok {
		c.listenerTable(t, l, lt)
	}
}

// profileRule returns a route rule as served on a listener and host.
func (t *translator) profileRule(l *listenerState, host string, r *routeState, rr *RouteRule) *RouteRule {
	if c, ok := t.profileOf(l.gateway).(tableContributor); ok {
		return c.routeRule(t, l, host, r, rr)
	}
	return rr
}
