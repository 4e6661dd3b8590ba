package engine

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultControllerName is the controllerName gwdev writes in route status.
const DefaultControllerName = "gwdev.dev/gateway-controller"

// Options tune a translation. The zero value is usable: gwdev acts as the
// controller for every GatewayClass the Gateways name, no backend mappings,
// and lastTransitionTime is the Unix epoch.
type Options struct {
	// ControllerName is written into route parent status and compared with
	// GatewayClass.spec.controllerName when OnlyOwnClasses is set
	// ("" means DefaultControllerName).
	ControllerName string
	// Classes, when non-empty, limits gwdev to these GatewayClass names;
	// Gateways of other classes are left without status (nil: all classes).
	Classes []string
	// OnlyOwnClasses makes gwdev manage only GatewayClass manifests whose
	// controllerName equals ControllerName (false: every class).
	OnlyOwnClasses bool
	// Now is written as lastTransitionTime of every condition and is used to
	// warn about expired certificates (zero: epoch, and no expiry checks).
	Now metav1.Time
	// BackendMappings maps "namespace/service:port" to a "host:port" the
	// user runs locally (gwdev.yaml or --backend). nil: none.
	BackendMappings map[string]string
	// Profiles maps GatewayClass names to implementation profiles (see
	// ProfileNames). A class not listed gets the registered profile whose
	// Class it is (gwin for gwin-default, engine/gwin), else
	// ProfileGeneric. nil: the defaults.
	Profiles map[string]string
	// previous is the address each Gateway had in the previous translation,
	// keyed by "namespace/name"; only TranslateNext sets it (nil: every
	// Gateway is new).
	previous map[string]string
	// ProfileOptions are the implementation profiles' own options, by
	// profile name: each profile defines its type (gwin.Options) and reads
	// its entry with Translation.ProfileOptions. nil, or no entry: the
	// profile's defaults.
	ProfileOptions map[string]any
	// NoServing leaves Result.Routes nil, for callers that never read it
	// (gwdev check: 10,000 routes' serving is 5 MB more held at the end of
	// the translation, when it holds the most). false: Routes is computed.
	NoServing bool
	// IngressHTTPPort and IngressHTTPSPort are the ports the ingress-nginx
	// classes listen on (0: 80 and 443, which the emulator maps like any
	// privileged port); the HTTPS redirect names IngressHTTPSPort.
	IngressHTTPPort, IngressHTTPSPort int32
	// PortOffset is the data plane's fallback for a port it cannot bind
	// (the emulator's Config.PortOffset): a backend target at a Gateway's
	// address and port+PortOffset is one of gwdev's own listeners too
	// (selftarget.go). 0: table.DefaultPortOffset; negative: no fallback.
	PortOffset int32
}

func (o Options) controllerName() string {
	if o.ControllerName == "" {
		return DefaultControllerName
	}
	return o.ControllerName
}

// Severity grades a Finding.
type Severity string

const (
	// SeverityError is a condition that makes gwdev check fail.
	SeverityError Severity = "error"
	// SeverityWarning is worth knowing but does not fail gwdev check.
	SeverityWarning Severity = "warning"
	// SeverityInfo is informational only.
	SeverityInfo Severity = "info"
)

// Finding is one problem or note about an object: a condition gwdev set
// that says something is wrong (see ConditionIsProblem), or one of gwdev's
// own checks (Type ""). It leaves the engine typed; nobody parses its
// message.
type Finding struct {
	Severity Severity
	Object   ObjectKey
	Source   Source
	// Scope narrows the finding inside the object, e.g. `listener "https"` or
	// `parentRef[0] gateway default/gw` ("" for the object as a whole).
	Scope string
	// Type and Status are the condition's ("Accepted", "False"); both ""
	// for gwdev's own notes.
	Type   string
	Status metav1.ConditionStatus
	// Reason is the condition's reason ("" for a note).
	Reason string
	// Kind says what a note of gwdev's own is about, for code that
	// explains or groups notes ("": a condition, or a note nobody needs to
	// tell apart). Not in the YAML.
	Kind    NoteKind
	Message string
	// Field is the path of the field the finding is about inside the
	// object ("spec.listeners[1]", "spec.parentRefs[0]", a backendRef's
	// path, "metadata.annotations[key]"), carried from where the condition
	// or note was set; "" for the object as a whole. Not in the golden
	// YAML (Source's line already points at it).
	Field string
	// Parent is the Gateway or ListenerSet a route's parentRef names, for
	// a finding about that attachment (zero: none).
	Parent ObjectKey
	// Listener is the name of the listener of the Gateway or ListenerSet
	// Object whose status holds the condition ("": the object's own
	// status). Not in the YAML (Scope says it).
	Listener string
	// ConflictsWith, for a listener's Conflicted=True, names the listener
	// it conflicts with as the message does (`listener "b" (HTTP)`, `HTTPS
	// listener "a" of Gateway ns/gw, which takes precedence`); "" for other
	// findings. Not in the YAML.
	ConflictsWith string
}

// NoteKind says what one of gwdev's own notes (a Finding without a
// condition) is about, so that the TUI and check explain it without
// reading its message.
type NoteKind string

// The kinds of notes other packages tell apart.
const (
	NoteUnknownTLSOption           NoteKind = "UnknownTLSOption"
	NoteTLSOptionsPassthrough      NoteKind = "TLSOptionsPassthrough"
	NoteEchoAuthAllowsAll          NoteKind = "EchoAuthAllowsAll"
	NoteNoListenerSetCanAttach     NoteKind = "NoListenerSetCanAttach"
	NoteNoParentRefs               NoteKind = "NoParentRefs"
	NoteNoGatewayClass             NoteKind = "NoGatewayClass"
	NoteClassNotManaged            NoteKind = "ClassNotManaged"
	NoteCertificateRefsPassthrough NoteKind = "CertificateRefsPassthrough"
	NoteEchoTLSGenerated           NoteKind = "EchoTLSGenerated"
	NoteProfileInvalid             NoteKind = "ProfileInvalid"
	NoteNotEmulated                NoteKind = "NotEmulated"
	NoteRefNotFound                NoteKind = "RefNotFound"
	NoteNotForClientAuth           NoteKind = "NotForClientAuth"
	NoteCertificateExpired         NoteKind = "CertificateExpired"
	NoteUnused                     NoteKind = "Unused"
	NoteParametersIgnored          NoteKind = "ParametersIgnored"
	NoteCrossKindHostname          NoteKind = "CrossKindHostname"
	// NoteRegexNotRE2 is an Ingress path in regex mode that Go's RE2
	// cannot compile: the table leaves its locations out (migrate lists it).
	NoteRegexNotRE2 NoteKind = "RegexNotRE2"
)

// Condition is "Type=Status" ("Accepted=False"), "" for a note: how
// findings show their condition.
func (f Finding) Condition() string {
	if f.Type == "" {
		return ""
	}
	return f.Type + "=" + string(f.Status)
}

// findingJSON is the serialised form of a Finding (gwdev check -o yaml,
// the admin API): the condition as one "Type=Status" field.
type findingJSON struct {
	Severity  Severity  `json:"severity"`
	Object    ObjectKey `json:"object"`
	Source    Source    `json:"source,omitzero"`
	Scope     string    `json:"scope,omitempty"`
	Condition string    `json:"condition,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Message   string    `json:"message"`
}

// MarshalJSON writes the finding as findingJSON.
func (f Finding) MarshalJSON() ([]byte, error) {
	return json.Marshal(findingJSON{Severity: f.Severity, Object: f.Object, Source: f.Source, Scope: f.Scope,
		Condition: f.Condition(), Reason: f.Reason, Message: f.Message})
}

// Result is the outcome of a translation: the input objects with status
// filled in, the routing table, and findings. It shares read-only data with
// the input (see Translate).
type Result struct {
	// Objects holds every input object with computed status. Objects with a
	// status are copies; the others may be the input's own objects.
	Objects *Snapshot
	// Table is what the emulator serves.
	Table *Table
	// Findings lists every problem, most severe first, then by source.
	Findings []Finding
	// Routes maps every route, and every front-end object the table serves
	// (an Ingress), to what the table does with it: its entries,
	// where they are served and the rules left out. It is not part of the
	// YAML output (the table and the route status say the same).
	Routes map[ObjectKey]*RouteServing
	// Policies says, for every object a policy targets, whether the policy
	// applies and how, or why not; by target, applied first (nil: no
	// policy targets anything).
	Policies []PolicyEffect
	// Reuse counts the routes whose compiled rules were reused from the
	// previous translation and those compiled (both 0: not incremental).
	Reuse RouteReuse
	// addresses is the loopback address of every managed Gateway that has
	// or keeps one, keyed by "namespace/name": what TranslateNext keeps.
	addresses map[string]string
	// routeCache is the routes' compiled rules for the next
	// TranslateTableFirst (nil: Translate keeps none; incremental.go).
	routeCache *routeCache
	// tables is what the next TranslateTableFirst patches the table from
	// (nil: it builds it in full; incremental_table.go).
	tables *tableState
}

// RouteReuse counts the routes of an incremental translation.
type RouteReuse struct {
	Reused, Compiled int
	// Patched is set when the table is the previous one with only the
	// virtual hosts of the changed routes rebuilt, VirtualHosts of them
	// (added, changed or removed); the other virtual hosts are the
	// previous table's own (incremental_table.go).
	Patched      bool
	VirtualHosts int
}

// HasErrors reports whether any finding is an error.
func (r *Result) HasErrors() bool {
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}
