package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/gwdev/gwdev/engine/table"
)

// XTelemetryPolicy (gateway.networking.x-k8s.io/v1alpha1) is a Direct
// policy on Gateways. Only one applies to a Gateway: the older by
// creationTimestamp, then the first by namespace/name; the others are
// Accepted=False Conflicted for that Gateway. The ancestor of each entry of
// status.ancestors is the targeted Gateway itself. A winner whose
// tracing.mode is Enabled becomes the Gateway's table.Tracing: spans for
// every HTTP request through it, exported over OTLP to provider.backendRef,
// a Service resolved like any backend (user mapping, EndpointSlices,
// ExternalName). Disabled and ImplementationDefault mean no tracing: gwdev
// has no receiver of its own to send spans to.

// telemetryPolicyState is an XTelemetryPolicy during translation.
type telemetryPolicyState struct {
	obj *gwxv1a1.XTelemetryPolicy
	key ObjectKey
	// cond is the policy's own verdict (Accepted, ResolvedRefs), copied
	// into every ancestor entry unless the entry has one of its own.
	cond *conditionSet
	// invalid is why the whole policy is invalid ("" : it is not).
	invalid string
	// tracing is the compiled tracing block (nil: tracing is off).
	tracing *table.Tracing
	// ancestors are the status entries, one per targeted Gateway gwdev
	// manages (or names, when it is missing).
	ancestors []telemetryAncestor
}

// telemetryAncestor is one entry of a policy's status.ancestors.
type telemetryAncestor struct {
	ref gwv1.ParentReference
	// lost, when set, is Accepted=False with this reason and message
	// instead of the policy's own Accepted.
	lostReason, lostMsg string
}

// gwdev's defaults where the API leaves them to the implementation.
const (
	// telemetryDefaultSampling: every new trace is sampled (a local
	// emulator sees little traffic, and a missing span confuses more than
	// a sampled one).
	telemetryDefaultSampling = 100
	// telemetryDefaultParentBased: parent-based sampling, as the
	// OpenTelemetry SDK's default sampler does.
	telemetryDefaultParentBased = true
)

// processXTelemetryPolicies validates every policy, decides which applies
// to each Gateway and writes status; the winners' tracing goes to the
// table (t.tracing, by Gateway).
func (t *translator) processXTelemetryPolicies() {
	if len(t.out.XTelemetryPolicies) == 0 {
		return
	}
	pols := make([]*telemetryPolicyState, 0, len(t.out.XTelemetryPolicies))
	for _, p := range t.out.XTelemetryPolicies {
		ps := &telemetryPolicyState{obj: p, key: ObjectKey{Kind: "XTelemetryPolicy", Namespace: p.Namespace, Name: p.Name},
			cond: newConditionSet(p.Generation, &t.opts.Now)}
		t.compileTelemetryPolicy(ps)
		pols = append(pols, ps)
	}
	claims := newPolicyClaims[ObjectKey]("XTelemetryPolicy", pols,
		func(ps *telemetryPolicyState) object { return ps.obj }, func(ps *telemetryPolicyState) ObjectKey { return ps.key })
	for _, ps := range pols {
		t.attachTelemetryPolicy(ps, claims)
	}
	winners := claims.winners
	for _, ps := range pols {
		ps.cond.setDefault(string(gwv1.PolicyConditionAccepted), metav1.ConditionTrue, string(gwv1.PolicyReasonAccepted), "policy is accepted")
		ps.obj.Status.Ancestors = t.telemetryAncestorStatus(ps)
		t.conditionOwners = append(t.conditionOwners, conditionOwner{ps.key, ps.cond})
	}
	if t.tracing == nil {
		t.tracing = map[ObjectKey]*table.Tracing{}
	}
	gws := make([]ObjectKey, 0, len(winners))
	for g := range winners {
		gws = append(gws, g)
	}
	slices.SortFunc(gws, func(a, b ObjectKey) int { return strings.Compare(a.String(), b.String()) })
	for _, g := range gws {
		ps := winners[g]
		if ps.tracing != nil {
			tr := *ps.tracing
			if tr.ServiceName == "" {
				tr.ServiceName = "gateway/" + g.Namespace + "/" + g.Name // the table's name of the Gateway
			}
			t.tracing[g] = &tr
			t.noteL4Untraced(ps, g)
		}
		t.effect(PolicyEffect{Policy: ps.key, Target: g, Applied: true, Reason: string(gwv1.PolicyReasonAccepted), Message: telemetrySummary(ps)})
	}
}

// compileTelemetryPolicy checks what the CRD cannot (distinct targetRefs)
// and compiles the tracing block; the provider's backendRef sets
// ResolvedRefs.
func (t *translator) compileTelemetryPolicy(ps *telemetryPolicyState) {
	seen := map[gwv1.LocalObjectReference]int{}
	for i, tr := range ps.obj.Spec.TargetRefs {
		if j, ok := seen[tr]; ok {
			ps.invalid = fmt.Sprintf("targetRefs[%d] repeats targetRefs[%d]: targetRefs must be distinct", i, j)
			ps.cond.fail(string(gwv1.PolicyConditionAccepted), string(gwv1.PolicyReasonInvalid), ps.invalid)
			return
		}
		seen[tr] = i
	}
	tc := ps.obj.Spec.Tracing
	if tc.Mode != gwxv1a1.TracingModeEnabled {
		return
	}
	tr := &table.Tracing{Policy: ps.key.Namespace + "/" + ps.key.Name,
		Sampling:    fractionOf(tc.SamplingRate, telemetryDefaultSampling),
		ParentBased: telemetryDefaultParentBased, ParentSampling: table.Fraction{Numerator: 100, Denominator: 100},
		ServiceName: tc.ServiceName, SpanName: tc.SpanName}
	switch tc.ParentBasedSampling.Mode {
	case gwxv1a1.ParentBasedSamplingModeEnabled:
		tr.ParentBased = true
		tr.ParentSampling = fractionOf(tc.ParentBasedSampling.SamplingRate, 100)
	case gwxv1a1.ParentBasedSamplingModeDisabled:
		tr.ParentBased = false
	}
	for i, a := range tc.Attributes {
		ta := table.TracingAttribute{Name: string(a.Name)}
		switch a.SourceType {
		case gwxv1a1.AttributeSourceHeader:
			ta.Header = string(a.HeaderName)
		case gwxv1a1.AttributeSourceLiteral:
			ta.Literal = a.LiteralValue
		case gwxv1a1.AttributeSourceAttribute:
			if _, ok := slices.BinarySearch(table.TracingAttributeKeys, a.AttributeKey); !ok {
				t.note(SeverityWarning, ps.key, fmt.Sprintf("spec.tracing.attributes[%d]", i), fmt.Sprintf(
					"attributeKey %q is not one gwdev computes (%s): spans get no attribute %q",
					a.AttributeKey, strings.Join(table.TracingAttributeKeys, ", "), a.Name))
				continue
			}
			ta.Attribute = a.AttributeKey
		}
		tr.Attributes = append(tr.Attributes, ta)
	}
	tr.Exporter = t.resolveTelemetryProvider(ps, &tc.Provider)
	ps.tracing = tr
}

// fractionOf is f, or pct/100 when f is nil.
func fractionOf(f *gwv1.Fraction, pct int32) table.Fraction {
	if f == nil {
		return table.Fraction{Numerator: pct, Denominator: 100}
	}
	d := int32(100)
	if f.Denominator != nil {
		d = *f.Denominator
	}
	return table.Fraction{Numerator: f.Numerator, Denominator: d}
}

// resolveTelemetryProvider resolves provider.backendRef: a core Service
// (ReferenceGrant across namespaces) and its port, then the target as for
// any backend. A failure is ResolvedRefs=False with the API's reason and an
// exporter that exports nothing.
func (t *translator) resolveTelemetryProvider(ps *telemetryPolicyState, p *gwxv1a1.TracingProvider) table.TracingExporter {
	ref := p.BackendRef
	group, kind := "", "Service"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	ns := ps.key.Namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	ex := table.TracingExporter{Service: ObjectKey{Kind: kind, Namespace: ns, Name: string(ref.Name)}, Protocol: table.OTLPGRPC}
	if ref.Port != nil {
		ex.Port = int32(*ref.Port)
	}
	for _, h := range p.Headers {
		ex.Headers = append(ex.Headers, table.TracingHeader{Name: string(h.Name), Value: h.Value})
	}
	display := groupKind(group, kind) + " " + ns + "/" + string(ref.Name)
	rr := string(gwxv1a1.TelemetryPolicyConditionResolvedRefs)
	fail := func(reason gwv1.PolicyConditionReason, msg string) table.TracingExporter {
		msg = "spec.tracing.provider.backendRef " + msg
		ps.cond.fail(rr, string(reason), msg)
		ex.NotExported = msg
		return ex
	}
	if !isCoreService(group, kind) {
		return fail(gwxv1a1.TelemetryPolicyReasonInvalidKind, display+": gwdev exports spans to a core Service only")
	}
	if !t.refPermitted(reference{ExperimentalGroup, "XTelemetryPolicy", ps.key.Namespace, "", "Service", ns, string(ref.Name)}) {
		return fail(gwxv1a1.TelemetryPolicyReasonRefNotPermitted, fmt.Sprintf("%s is in another namespace and no ReferenceGrant in %s allows XTelemetryPolicy from %s", display, ns, ps.key.Namespace))
	}
	svc := t.service(ns, string(ref.Name))
	if svc == nil {
		return fail(gwxv1a1.TelemetryPolicyReasonBackendNotFound, display+" not found")
	}
	if ref.Port == nil {
		return fail(gwxv1a1.TelemetryPolicyReasonBackendNotFound, display+": port is required for a Service")
	}
	sp, _ := servicePort(svc, ex.Port, "")
	if sp == nil && svc.Spec.Type != corev1.ServiceTypeExternalName {
		return fail(gwxv1a1.TelemetryPolicyReasonBackendNotFound, fmt.Sprintf("%s: the Service has no TCP port %d", display, ex.Port))
	}
	ps.cond.setDefault(rr, metav1.ConditionTrue, string(gwxv1a1.TelemetryPolicyReasonResolvedRefs), "the provider's backendRef is resolved")
	if sp != nil && sp.AppProtocol != nil && otlpOverHTTP(*sp.AppProtocol) {
		ex.Protocol = table.OTLPHTTP
	}
	ex.Target = t.backendTarget(svc, sp, ex.Port)
	if ex.Target.Kind == TargetEcho {
		ex.NotExported = fmt.Sprintf("the OTLP receiver %s/%s:%d has no address (no gwdev.yaml or --backend mapping, EndpointSlice or ExternalName): spans are made and traceparent is sent, but nothing is exported",
			ns, ref.Name, ex.Port)
		ex.Target = nil
		t.note(SeverityWarning, ps.key, "spec.tracing.provider.backendRef", ex.NotExported)
		return ex
	}
	if btp := t.backendTLSPolicyFor(ex.Service); btp != "" {
		ex.NotExported = fmt.Sprintf("BackendTLSPolicy %s asks for TLS to the OTLP receiver %s/%s, and gwdev exports spans in plaintext only: nothing is exported",
			btp, ns, ref.Name)
		ex.Target = nil
		t.note(SeverityWarning, ps.key, "spec.tracing.provider.backendRef", ex.NotExported)
	}
	return ex
}

// otlpOverHTTP reports whether a Service port's appProtocol asks for OTLP
// over HTTP (http, or http/protobuf as the OTLP exporters name it); any
// other, or none, is OTLP over gRPC, the protocol's default.
func otlpOverHTTP(appProtocol string) bool {
	switch strings.ToLower(appProtocol) {
	case "http", "http/protobuf", "kubernetes.io/http":
		return true
	}
	return false
}

// backendTLSPolicyFor names ("<ns>/<name>") a BackendTLSPolicy that targets
// the Service ("" : none).
func (t *translator) backendTLSPolicyFor(svc ObjectKey) string {
	for _, p := range t.out.BackendTLSPolicies {
		if p.Namespace != svc.Namespace {
			continue
		}
		for _, tr := range p.Spec.TargetRefs {
			if string(tr.Kind) == svc.Kind && string(tr.Name) == svc.Name && backendTLSPolicyTargets().Allows(string(tr.Group), string(tr.Kind)) {
				return p.Namespace + "/" + p.Name
			}
		}
	}
	return ""
}

// attachTelemetryPolicy checks each targetRef of ps: a Gateway (Invalid
// otherwise), present (TargetNotFound), managed by gwdev (no status
// otherwise), not taken by an older policy (Conflicted). Accepted is False
// when no targetRef attaches.
func (t *translator) attachTelemetryPolicy(ps *telemetryPolicyState, claims *policyClaims[ObjectKey, *telemetryPolicyState]) {
	acc := string(gwv1.PolicyConditionAccepted)
	var invalid, missing, lost []string
	won := 0
	listed := map[gwv1.LocalObjectReference]bool{} // a repeated targetRef gets one entry
	for i, tr := range ps.obj.Spec.TargetRefs {
		if listed[tr] {
			continue
		}
		listed[tr] = true
		target := ObjectKey{Kind: string(tr.Kind), Namespace: ps.obj.Namespace, Name: string(tr.Name)}
		grp, kind, ns := gwv1.Group(tr.Group), gwv1.Kind(tr.Kind), gwv1.Namespace(target.Namespace)
		ref := gwv1.ParentReference{Group: &grp, Kind: &kind, Namespace: &ns, Name: tr.Name}
		refuse := func(reason gwv1.PolicyConditionReason, msg string) {
			t.effect(PolicyEffect{Policy: ps.key, Target: target, Reason: string(reason), Message: msg})
		}
		if !PolicyOf(ExperimentalGroup, "XTelemetryPolicy").Allows(string(tr.Group), string(tr.Kind)) {
			msg := fmt.Sprintf("targetRefs[%d] %s %s: only a Gateway can be targeted", i, groupKind(string(tr.Group), string(tr.Kind)), tr.Name)
			invalid = append(invalid, msg)
			refuse(gwv1.PolicyReasonInvalid, msg)
			continue
		}
		if !slices.ContainsFunc(t.out.Gateways, func(g *gwv1.Gateway) bool { return g.Namespace == target.Namespace && g.Name == target.Name }) {
			msg := fmt.Sprintf("targetRefs[%d] Gateway %s/%s not found", i, target.Namespace, target.Name)
			missing = append(missing, msg)
			refuse(gwv1.PolicyReasonTargetNotFound, msg)
			ps.ancestors = append(ps.ancestors, telemetryAncestor{ref: ref, lostReason: string(gwv1.PolicyReasonTargetNotFound), lostMsg: msg})
			continue
		}
		g := t.gatewayByKey[nsName{target.Namespace, target.Name}]
		if g == nil {
			refuse(gwv1.PolicyReasonTargetNotFound, fmt.Sprintf("Gateway %s/%s is not managed by gwdev: its controller writes this policy's status there", target.Namespace, target.Name))
			continue
		}
		ref = gatewayParentRef(g)
		if ps.invalid != "" {
			ps.ancestors = append(ps.ancestors, telemetryAncestor{ref: ref})
			refuse(gwv1.PolicyReasonInvalid, "not applied: "+ps.invalid)
			continue
		}
		if holder, ok := claims.claim(g.key, ps); !ok {
			msg := claims.lostMessage(fmt.Sprintf("Gateway %s/%s", target.Namespace, target.Name), holder)
			lost = append(lost, msg)
			t.effect(conflictedEffect(ps.key, target, "", msg))
			reason, why := conflictedStatus(msg)
			ps.ancestors = append(ps.ancestors, telemetryAncestor{ref: ref, lostReason: reason, lostMsg: why})
			continue
		}
		won++
		ps.ancestors = append(ps.ancestors, telemetryAncestor{ref: ref})
	}
	switch {
	case len(invalid) > 0:
		ps.cond.fail(acc, string(gwv1.PolicyReasonInvalid), strings.Join(invalid, "; "))
	case ps.invalid != "" || won > 0:
	case len(lost) > 0:
		failConflicted(ps.cond, lost)
	case len(missing) > 0:
		ps.cond.fail(acc, string(gwv1.PolicyReasonTargetNotFound), strings.Join(missing, "; "))
	}
	if len(invalid) > 0 {
		// An invalid policy applies nowhere (as XBackendTrafficPolicy).
		claims.release(ps)
	}
	if won > 0 && len(lost) > 0 && len(invalid) == 0 {
		t.notePartlyConflicted(ps.key, lost)
	}
}

// telemetryAncestorStatus is status.ancestors: one entry per targeted
// Gateway (by namespace/name, at most 16), the policy's conditions with the
// entry's own Accepted where it lost.
func (t *translator) telemetryAncestorStatus(ps *telemetryPolicyState) []gwv1.PolicyAncestorStatus {
	out := []gwv1.PolicyAncestorStatus{}
	sort.SliceStable(ps.ancestors, func(i, j int) bool {
		a, b := ps.ancestors[i].ref, ps.ancestors[j].ref
		if *a.Namespace != *b.Namespace {
			return *a.Namespace < *b.Namespace
		}
		return a.Name < b.Name
	})
	for i, a := range ps.ancestors {
		if i == 16 {
			break
		}
		conds := ps.cond.list()
		if a.lostReason != "" {
			for j := range conds {
				if conds[j].Type == string(gwv1.PolicyConditionAccepted) {
					conds[j] = ps.cond.make(conds[j].Type, metav1.ConditionFalse, a.lostReason, a.lostMsg)
				}
			}
		}
		out = append(out, gwv1.PolicyAncestorStatus{AncestorRef: a.ref,
			ControllerName: gwv1.GatewayController(t.opts.controllerName()), Conditions: conds})
	}
	return out
}

// noteL4Untraced says that the Gateway's TCP, TLS and UDP listeners carry
// no spans.
func (t *translator) noteL4Untraced(ps *telemetryPolicyState, gw ObjectKey) {
	g := t.gatewayByKey[nsName{gw.Namespace, gw.Name}]
	var l4 []string
	for _, l := range g.merged {
		if l.protocol != gwv1.HTTPProtocolType && l.protocol != gwv1.HTTPSProtocolType {
			l4 = append(l4, string(l.name)+" ("+string(l.protocol)+")")
		}
	}
	if len(l4) > 0 {
		t.note(SeverityInfo, ps.key, "spec.tracing", fmt.Sprintf("Gateway %s/%s: spans are made for HTTP requests only; listeners %s carry no spans",
			gw.Namespace, gw.Name, strings.Join(l4, ", ")))
	}
}

// telemetrySummary says what a winning policy does to its Gateway.
func telemetrySummary(ps *telemetryPolicyState) string {
	tr := ps.tracing
	if tr == nil {
		return "tracing " + string(ps.obj.Spec.Tracing.Mode) + ": gwdev makes no spans"
	}
	dest := "exported over " + tr.Exporter.Protocol + " to " + tr.Exporter.Service.Namespace + "/" + tr.Exporter.Service.Name + ":" + itoa(int(tr.Exporter.Port))
	if tr.Exporter.NotExported != "" {
		dest = "not exported: " + tr.Exporter.NotExported
	}
	return fmt.Sprintf("a span per HTTP request, sampled %d/%d (parent-based: %t), %s", tr.Sampling.Numerator, tr.Sampling.Denominator, tr.ParentBased, dest)
}
