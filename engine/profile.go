package engine

import (
	"fmt"
	"maps"
	"slices"
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
// else the registered profile whose Class is the class name, else
// ProfileGeneric.
//
// A profile is a plug-in: a package of its own (engine/gwin) that
// registers itself with RegisterProfile. The engine calls its hooks with
// views of the objects being translated (profile_views.go) and never hands
// it the translator: what a profile reads and what it may add is the
// methods of those views and of Translation.

// ProfileGeneric is the Gateway API as the spec defines it.
const ProfileGeneric = "generic"

// ProfileNames lists the implementation profiles gwdev knows, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ProfileClasses maps each GatewayClass name a registered profile is
// chosen for by default (Profile.Class) to that profile's name.
func ProfileClasses() map[string]string {
	classes := map[string]string{}
	for n, p := range profiles {
		if c := p.Class(); c != "" {
			classes[c] = n
		}
	}
	return classes
}

// Profile is an implementation profile. Its optional hooks are the small
// interfaces below, implemented by the ProfileRun it starts for each
// translation; the translator calls them where the spec's own processing
// leaves room for the implementation.
type Profile interface {
	// Name is the profile's name (ProfileGeneric, "gwin").
	Name() string
	// Class is the GatewayClass name the profile is chosen for when
	// Options.Profiles does not name one ("": none).
	Class() string
	// Summary is the one-line description in check output.
	Summary() string
	// Features says what the implementation supports.
	Features() *FeatureSet
	// Start begins the profile's part of one translation. It is called at
	// most once per translation, when the profile is first needed, and
	// must not report anything yet.
	Start(tr *Translation) ProfileRun
}

// ProfileRun is a profile's state during one translation.
type ProfileRun interface {
	// Finish runs once every object is processed (policy status, objects
	// without status of their own), for every registered profile.
	Finish()
}

// GatewayChecker is a profile run that validates a managed Gateway's
// implementation settings (annotations, policies) before its listeners
// are processed; it rejects the Gateway through g.Fail.
type GatewayChecker interface {
	CheckGateway(g *GatewayView)
}

// ForeignGatewayChecker is a profile run that looks at the Gateways of
// other profiles (for example to warn that its annotations there are
// ignored). profile is the Gateway's own profile.
type ForeignGatewayChecker interface {
	CheckForeignGateway(g *GatewayView, profile string)
}

// AddressChecker is a profile run that decides spec.addresses itself:
// which address types are valid and which address gwdev binds. used holds
// the loopback addresses already bound.
type AddressChecker interface {
	CheckAddresses(g *GatewayView, used map[string]bool)
}

// ListenerSetChecker is a profile run that validates a ListenerSet
// attaching to one of its Gateways; a non-empty result rejects the set
// (Invalid).
type ListenerSetChecker interface {
	CheckListenerSet(s *ListenerSetView) string
}

// ListenerChecker is a profile run that validates one listener after the
// spec's checks (implementation settings that name the listener).
type ListenerChecker interface {
	CheckListener(l *ListenerView)
}

// RouteChecker is a profile run that validates a route attaching to one of
// its Gateways; a non-empty result refuses the attachment (Accepted=False,
// UnsupportedValue).
type RouteChecker interface {
	CheckRoute(r *RouteView) string
}

// CertificateResolver is a profile run that resolves certificateRefs of
// kinds other than core Secrets. ok is false when the profile does not
// handle the kind.
type CertificateResolver interface {
	ResolveCertificate(group, kind, ns, name string) (cert *Certificate, reason gwv1.ListenerConditionReason, msg string, ok bool)
}

// TableContributor is a profile run that adds data-plane behaviour to the
// routing table of its Gateways.
type TableContributor interface {
	// GatewayTable adds Gateway-wide settings (the access log).
	GatewayTable(g *GatewayView, gt *GatewayTable)
	// ListenerTable adds per-listener settings (ListenerTable.Policy).
	ListenerTable(l *ListenerView, lt *ListenerTable)
	// RouteRule returns the rule as served on a listener and virtual host
	// of the profile: rr itself, or an adjusted copy.
	RouteRule(l *ListenerView, host string, r *RouteView, rr *RouteRule) *RouteRule
}

// PolicyKindsProfile is a profile with policy resources of its own: the
// registry answers for them (PolicyOf, ProfilePolicyKinds) and the loader
// loads them as ImplementationPolicy objects.
type PolicyKindsProfile interface {
	// PolicyKinds lists the profile's policy kinds, in the order the loader
	// lists them. The result must not change.
	PolicyKinds() []PolicyKind
}

// ProfilePolicyKinds lists the policy kinds of the registered profiles, by
// profile name, each profile's in its order. Callers must not modify it.
func ProfilePolicyKinds() []PolicyKind {
	var out []PolicyKind
	for _, name := range ProfileNames() {
		if pp, ok := profiles[name].(PolicyKindsProfile); ok {
			out = append(out, pp.PolicyKinds()...)
		}
	}
	return out
}

// profiles are the profiles gwdev knows, by name.
var profiles = map[string]Profile{
	ProfileGeneric: genericProfile{},
}

// RegisterProfile adds an implementation profile; a profile package calls
// it from its init function. It panics on a second profile of the same
// name, like a second registration of an HTTP handler pattern.
func RegisterProfile(p Profile) {
	if _, dup := profiles[p.Name()]; dup {
		panic("engine: profile " + p.Name() + " registered twice")
	}
	profiles[p.Name()] = p
}

// genericProfile is the spec as is: every feature gwdev emulates.
type genericProfile struct{}

func (genericProfile) Name() string                  { return ProfileGeneric }
func (genericProfile) Class() string                 { return "" }
func (genericProfile) Summary() string               { return "the Gateway API as specified" }
func (genericProfile) Features() *FeatureSet         { return &FeatureSet{} }
func (genericProfile) Start(*Translation) ProfileRun { return genericRun{} }

// genericRun has no hooks.
type genericRun struct{}

func (genericRun) Finish() {}

// Support grades a feature in a profile.
type Support int

const (
	// Supported: the implementation does it (the zero value).
	Supported Support = iota
	// Warned: the spec allows it and gwdev emulates it, but the
	// implementation does not do it; a warning says so.
	Warned
	// Refused: the implementation does not support it; the listener or
	// route is not accepted.
	Refused
)

// FeatureSet says which spec features a profile supports. A feature that
// is not listed (nil maps included) is supported.
type FeatureSet struct {
	Protocols   map[gwv1.ProtocolType]Support
	TLSModes    map[gwv1.TLSModeType]Support
	RouteKinds  map[string]Support
	Filters     map[gwv1.HTTPRouteFilterType]Support
	PathMatches map[gwv1.PathMatchType]Support
	// RuleFields are HTTPRoute rule fields: "timeouts.request", "retry",
	// "sessionPersistence".
	RuleFields map[string]Support
	// SupportedText renders what the implementation supports, per feature
	// family ("protocols", "filters", ...), for messages.
	SupportedText map[string]string
}

// explain renders "<what> is not supported by the <p> profile (<p>
// supports ...)".
func (f *FeatureSet) explain(p Profile, family, what string) string {
	msg := fmt.Sprintf("%s is not supported by the %s profile", what, p.Name())
	if s := f.SupportedText[family]; s != "" {
		msg += fmt.Sprintf(" (%s supports %s)", p.Name(), s)
	}
	return msg
}

// profileFor returns the profile of a GatewayClass name: Options.Profiles,
// then the class name's default. An unknown name in Options is reported
// once and the generic profile is used.
func (t *translator) profileFor(class string) Profile {
	if p, ok := t.prof.byClass[class]; ok {
		return p
	}
	name := ProfileGeneric
	for _, n := range ProfileNames() {
		if c := profiles[n].Class(); c != "" && c == class {
			name = n
		}
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
		t.prof.byClass = map[string]Profile{}
	}
	t.prof.byClass[class] = p
	if p.Name() != ProfileGeneric {
		t.note(SeverityInfo, ObjectKey{Kind: "GatewayClass", Name: class}, "",
			fmt.Sprintf("implementation profile %s: %s", p.Name(), p.Summary()))
	}
	return p
}

// runOf returns the profile's run of this translation, starting it on
// first use.
func (t *translator) runOf(p Profile) ProfileRun {
	if r, ok := t.prof.runs[p.Name()]; ok {
		return r
	}
	if t.prof.runs == nil {
		t.prof.runs = map[string]ProfileRun{}
	}
	r := p.Start(&Translation{t: t, profile: p.Name()})
	t.prof.runs[p.Name()] = r
	return r
}

// featuresOf is p's FeatureSet, made once per translation (a profile
// makes a new one on each call: for 10,000 routes 0.6 MB).
func (t *translator) featuresOf(p Profile) *FeatureSet {
	if f, ok := t.prof.features[p.Name()]; ok {
		return f
	}
	if t.prof.features == nil {
		t.prof.features = map[string]*FeatureSet{}
	}
	f := p.Features()
	t.prof.features[p.Name()] = f
	return f
}

// hooksOf returns the run of a managed Gateway's profile.
func (t *translator) hooksOf(g *gatewayState) ProfileRun {
	return t.runOf(t.profileOf(g))
}

// profileOf returns the profile of a managed Gateway.
func (t *translator) profileOf(g *gatewayState) Profile {
	if g == nil || g.class == nil {
		return profiles[ProfileGeneric]
	}
	return t.profileFor(g.class.name)
}

// profileOfOwner returns the profile of the Gateway a listener owner (a
// Gateway, or a ListenerSet through its parent) belongs to.
func (t *translator) profileOfOwner(owner ObjectKey) Profile {
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
	if c, ok := t.runOf(p).(GatewayChecker); ok {
		c.CheckGateway(&GatewayView{t: t, g: g})
	}
	for _, n := range ProfileNames() {
		if n == p.Name() {
			continue
		}
		if c, ok := t.runOf(profiles[n]).(ForeignGatewayChecker); ok {
			c.CheckForeignGateway(&GatewayView{t: t, g: g}, p.Name())
		}
	}
}

// finishProfiles runs what profiles do once every object is processed
// (policy status, objects without status of their own), in name order.
func (t *translator) finishProfiles() {
	for _, n := range ProfileNames() {
		t.runOf(profiles[n]).Finish()
	}
}

// profileAddresses lets the Gateway's profile decide spec.addresses; it
// reports whether the profile did.
func (t *translator) profileAddresses(g *gatewayState, used map[string]bool) bool {
	c, ok := t.hooksOf(g).(AddressChecker)
	if ok {
		c.CheckAddresses(&GatewayView{t: t, g: g}, used)
	}
	return ok
}

// profileListenerSet runs the profile checks of a ListenerSet's parent
// Gateway; a non-empty result rejects the set.
func (t *translator) profileListenerSet(s *listenerSetState) string {
	if c, ok := t.hooksOf(s.parent).(ListenerSetChecker); ok {
		return c.CheckListenerSet(&ListenerSetView{t: t, s: s})
	}
	return ""
}

// profileListener applies the profile's protocol and TLS mode support to a
// listener and runs its listener checks.
func (t *translator) profileListener(l *listenerState) {
	p := t.profileOf(l.gateway)
	f := t.featuresOf(p)
	scope := "listener " + quote(l.name)
	switch f.Protocols[l.protocol] {
	case Refused:
		msg := f.explain(p, "protocols", "protocol "+string(l.protocol))
		l.cond.fail("Accepted", string(gwv1.ListenerReasonUnsupportedProtocol), msg)
		l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), "unsupported protocol")
	case Warned:
		t.note(SeverityWarning, l.ownerKey(), scope, f.explain(p, "protocols", "protocol "+string(l.protocol))+"; gwdev serves it locally anyway")
	}
	if l.tls != nil && l.tls.Mode != nil {
		switch f.TLSModes[*l.tls.Mode] {
		case Refused:
			l.cond.fail("Accepted", string(gwv1.ListenerReasonUnsupportedProtocol), f.explain(p, "tlsModes", "TLS mode "+string(*l.tls.Mode)))
			l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), "unsupported TLS mode")
		case Warned:
			t.note(SeverityWarning, l.ownerKey(), scope, f.explain(p, "tlsModes", "TLS mode "+string(*l.tls.Mode))+"; gwdev serves it locally anyway")
		}
	}
	if c, ok := t.runOf(p).(ListenerChecker); ok {
		c.CheckListener(&ListenerView{t: t, l: l})
	}
}

// MessageFields is implemented by a profile run whose messages name the
// field they are about in the profile's own format (gwin: "annotation
// <key>: …"); the profile reads its own format, nobody else does.
type MessageFields interface {
	FieldOf(msg string) string
}

// verdictField is the field a profile's verdict (the refusal profileRoute
// or profileListenerSet returns) is about, "" when no profile names one.
func (t *translator) verdictField(why string) string {
	for _, name := range slices.Sorted(maps.Keys(t.prof.runs)) {
		if f, ok := t.prof.runs[name].(MessageFields); ok {
			if p := f.FieldOf(why); p != "" {
				return p
			}
		}
	}
	return ""
}

// profileRoute checks a route against the profile of the Gateway it
// attaches to: unsupported features refuse it, features the implementation
// does not do give one warning per route and profile, and the profile's own
// checks run. The result is memoised per route and profile.
func (t *translator) profileRoute(r *routeState, g *gatewayState) string {
	p := t.profileOf(g)
	key := routeProfileKey{r, p.Name()}
	if r.verdict != nil && r.verdict.profile == key.profile {
		return r.verdict.why
	}
	if why, ok := t.prof.routeVerdicts[key]; ok {
		return why
	}
	var refusals []string
	f := t.featuresOf(p)
	for _, fu := range f.routeFeaturesOf(r) {
		s := Supported
		switch fu.family {
		case "routeKinds":
			s = f.RouteKinds[fu.value]
		case "filters":
			s = f.Filters[gwv1.HTTPRouteFilterType(fu.value)]
		case "pathMatches":
			s = f.PathMatches[gwv1.PathMatchType(fu.value)]
		case "ruleFields":
			s = f.RuleFields[fu.value]
		}
		switch s {
		case Refused:
			msg := f.explain(p, fu.family, fu.what)
			if fu.at != "" {
				msg = fu.at + ": " + msg
			}
			refusals = append(refusals, msg)
		case Warned:
			t.note(SeverityWarning, r.key, fu.at, f.explain(p, fu.family, fu.what)+"; gwdev emulates it locally")
		}
	}
	why := strings.Join(refusals, "; ")
	if c, ok := t.runOf(p).(RouteChecker); ok && why == "" {
		why = c.CheckRoute(&RouteView{t: t, r: r})
	}
	t.memoVerdict(r, key, why)
	return why
}

// memoVerdict memoises profileRoute's verdict why for key: the route's
// first on the route itself, as one routeVerdict shared by every route
// with the same (a map of every route was 1.5 MB for 10,000 HTTPRoutes),
// a route's later ones (other profiles) in routeVerdicts.
func (t *translator) memoVerdict(r *routeState, key routeProfileKey, why string) {
	if r.verdict == nil {
		v := routeVerdict{key.profile, why}
		if shared, ok := t.prof.verdicts[v]; ok {
			r.verdict = shared
			return
		}
		if t.prof.verdicts == nil {
			t.prof.verdicts = map[routeVerdict]*routeVerdict{}
		}
		r.verdict = new(routeVerdict) // not &v: v would be on the heap for every route
		*r.verdict = v
		t.prof.verdicts[v] = r.verdict
		return
	}
	if t.prof.routeVerdicts == nil {
		t.prof.routeVerdicts = map[routeProfileKey]string{}
	}
	t.prof.routeVerdicts[key] = why
}

// profileRun is the profile state of one translation.
type profileRun struct {
	// byClass memoises profileFor.
	byClass map[string]Profile
	// routeVerdicts memoises profileRoute where a route's own verdict
	// (routeState.verdict) is another profile's.
	routeVerdicts map[routeProfileKey]string
	// verdicts are the routes' own verdicts, one of each (memoVerdict).
	verdicts map[routeVerdict]*routeVerdict
	// runs are the profiles' runs of this translation, by name (runOf).
	runs map[string]ProfileRun
	// features are the profiles' FeatureSets, by name (featuresOf).
	features map[string]*FeatureSet
}

// routeVerdict is a profile's verdict on a route: why the profile
// refuses it ("": it does not).
type routeVerdict struct {
	profile, why string
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
func (f *FeatureSet) routeFeaturesOf(r *routeState) []routeFeature {
	if len(f.RouteKinds) == 0 && len(f.Filters) == 0 && len(f.PathMatches) == 0 && len(f.RuleFields) == 0 {
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
	if c, ok := t.runOf(t.profileOfOwner(owner)).(CertificateResolver); ok {
		return c.ResolveCertificate(group, kind, ns, name)
	}
	return nil, "", "", false
}

// profileGatewayTable lets the Gateway's profile add Gateway-wide settings.
func (t *translator) profileGatewayTable(g *gatewayState, gt *GatewayTable) {
	if c, ok := t.hooksOf(g).(TableContributor); ok {
		c.GatewayTable(&GatewayView{t: t, g: g}, gt)
	}
}

// profileListenerTable lets the listener's profile add its settings.
func (t *translator) profileListenerTable(l *listenerState, lt *ListenerTable) {
	if c, ok := t.hooksOf(l.gateway).(TableContributor); ok {
		c.ListenerTable(&ListenerView{t: t, l: l}, lt)
	}
}

// profileRule returns a route rule as served on a listener and host.
func (t *translator) profileRule(l *listenerState, host string, r *routeState, rr *RouteRule) *RouteRule {
	if c, ok := t.hooksOf(l.gateway).(TableContributor); ok {
		return c.RouteRule(&ListenerView{t: t, l: l}, host, &RouteView{t: t, r: r}, rr)
	}
	return rr
}
