package engine

import (
	"fmt"
	"slices"
	"strings"
)

// reasonHints maps a condition reason to a one-line explanation of what it
// means and how to fix it. A "Type/Reason" key (condition type, then reason)
// takes precedence over the plain reason, for reasons whose meaning depends
// on the condition. Every reason the engine writes has an entry; the test
// translates every engine golden case to check. It is the only table of
// hints: the dashboard, check's summary and machine formats and SARIF's
// rule help all ask ReasonHint or Finding.Hint.
var reasonHints = map[string]string{
	// Routes: Accepted=False.
	"NotAllowedByListeners":      "the listener's allowedRoutes (namespaces or kinds) excludes this route. Fix: allow the route's namespace (from: All/Same/Selector with matching Namespace labels) or kind on the listener, or move the route",
	"NoMatchingListenerHostname": "none of the route's hostnames intersects the hostname of the listener it targets. Fix: add a hostname the listener serves to spec.hostnames, or widen the listener's hostname",
	"NoMatchingParent":           "the parentRef names no existing Gateway or ListenerSet, or no listener matches its sectionName/port. Fix: check the parentRef's name, namespace, sectionName and port",
	"UnsupportedValue":           "a field has a value the Gateway API (or gwdev) does not support, so that part cannot be implemented. Fix: change the value named in the message",
	"Accepted/HostnameConflict":  "another route of the other kind (HTTPRoute vs GRPCRoute) already serves these hostnames on the listener, and the older one wins. Fix: use distinct hostnames for HTTP and gRPC routes",
	// Routes: ResolvedRefs=False.
	"RefNotPermitted":                  "a reference points into another namespace and no ReferenceGrant there allows it. Fix: add a ReferenceGrant in the target namespace (from: this kind and namespace, to: the referenced kind), or move the object",
	"BackendNotFound":                  "a backendRef names a Service (or Service port) that is not in the manifests; requests for it get a 500. Fix: add the Service, or fix the backendRef's name, namespace or port",
	"InvalidKind":                      "a reference names a kind that cannot be used there (backendRefs must be core Services, CA refs ConfigMaps). Fix: reference a supported kind",
	"NotImplemented":                   "the object sets a field gwdev does not implement (the warning names it and says what gwdev does instead). Fix: remove the field, or expect a cluster's controller to behave differently from gwdev",
	"ResolvedRefs/UnsupportedProtocol": "the backend Service port's appProtocol is one this route kind cannot speak (for example h2c behind a TLSRoute). Fix: change the Service port's appProtocol or use a matching route kind",
	// Listeners.
	"HostnameConflict":         "this listener uses the same port and hostname as another (HTTPS and TLS ones cannot be told apart by SNI), so it is not served; a listener accepted before it (the Gateway's own, or an older ListenerSet's) keeps serving, and two of the same Gateway or ListenerSet are both left out. Fix: give each listener a distinct hostname or port",
	"ProtocolConflict":         "this listener's port is used by a listener whose protocol cannot share it (HTTP with HTTPS, TCP with HTTP, …), so it is not served; a listener accepted before it (the Gateway's own, or an older ListenerSet's) keeps serving, and two of the same Gateway or ListenerSet are both left out. Fix: move one listener to another port",
	"InvalidCertificateRef":    "a TLS certificateRef is missing, or is not a kubernetes.io/tls Secret with a valid tls.crt and tls.key. Fix: add or fix the Secret (kubectl create secret tls … --dry-run=client -o yaml)",
	"InvalidRouteKinds":        "allowedRoutes.kinds lists a route kind the listener's protocol cannot serve. Fix: list only kinds that fit the protocol (HTTP/HTTPS: HTTPRoute, GRPCRoute; TLS: TLSRoute; TCP: TCPRoute; UDP: UDPRoute)",
	"UnsupportedProtocol":      "the listener's protocol is not one gwdev implements. Fix: use HTTP, HTTPS, TLS, TCP or UDP",
	"OverlappingHostnames":     "HTTPS listeners on one port have overlapping hostnames (a wildcard covers another); HTTP/2 connection reuse may send requests to the wrong listener. Fix: make the hostnames disjoint or share one certificate",
	"InvalidCACertificateRef":  "a CA certificate reference (client validation or BackendTLSPolicy) is missing or holds no valid PEM certificate under ca.crt. Fix: add or fix the ConfigMap/Secret",
	"InvalidCACertificateKind": "a CA certificate reference names a kind that cannot hold CA certificates. Fix: reference a ConfigMap (or Secret) with ca.crt",
	"NoValidCACertificate":     "none of the CA certificate references is usable, so certificates cannot be validated. Fix: the caCertificateRefs errors listed with it",
	"Programmed/Invalid":       "the listener or Gateway cannot be programmed because of the other problem reported for it (TLS, conflict, protocol, no valid listener). Fix that one first",
	"Pending":                  "waiting for something else: the Gateway is not accepted yet or has no usable address. Fix the Gateway's own problem",
	"ConfigurationChanged":     "client certificate validation is set to AllowInsecureFallback: clients without a valid certificate are let in. Fix: use AllowValidOnly unless this is intended",
	// Gateways.
	"ListenersNotValid":           "some listeners are invalid and are not served; the valid ones keep working (all invalid: the Gateway is not accepted). Fix the listeners named in the message",
	"Invalid":                     "the object is not valid as written; see the message for the field. Fix that field",
	"AddressNotAssigned":          "gwdev could not give the Gateway a loopback address. Fix: free one of 127.0.0.0/8 or set spec.addresses to a loopback IP",
	"AddressNotUsable":            "spec.addresses names an address gwdev cannot serve on this machine (only loopback addresses are used). Fix: use 127.x.y.z, or remove spec.addresses",
	"UnsupportedAddress":          "spec.addresses uses an address type gwdev does not support. Fix: use type IPAddress with a loopback IP",
	"InvalidParameters":           "parametersRef (or infrastructure.parametersRef) points to an object that is missing or of an unsupported kind. Fix: add the referenced object or remove the reference",
	"InvalidClientCertificateRef": "spec.tls.backend.clientCertificateRef is missing, not a core Secret, or a Secret without a valid tls.crt and tls.key, so the Gateway presents no client certificate to backends. Fix: add or fix the Secret (kubectl create secret tls … --dry-run=client -o yaml)",
	"ListenersNotResolved":        "some of the Gateway's listeners have references that do not resolve (their own ResolvedRefs says which). Fix those listeners",
	"DefaultGateway/NotAccepted":  "the Gateway sets spec.defaultScope but is not Accepted itself, so it claims no route as a default Gateway (GEP-3793). Fix the Gateway's own Accepted condition first",
	// ListenerSets.
	"NotAllowed":          "the parent Gateway does not admit this ListenerSet: its spec.allowedListeners excludes the ListenerSet's namespace, or the parentRef is not a Gateway. Fix: set allowedListeners.namespaces.from on the Gateway (Same, All or Selector)",
	"ParentNotAccepted":   "the parent Gateway does not exist or is not accepted, so the ListenerSet has nowhere to attach. Fix the parentRef or the Gateway",
	"ParentNotProgrammed": "the parent Gateway is not programmed (no address or no valid listener), so the ListenerSet is not served. Fix the Gateway's problem first",
	// Policies.
	"Conflicted":     "another policy targets the same object and takes precedence (older, or first by namespace/name). Fix: merge the policies or target different objects",
	"TargetNotFound": "the policy's targetRefs name an object that is not in the manifests. Fix: add the target or fix targetRefs",
	// gwdev's own findings (not status reasons).
	"LoopsIntoGwdev": "a backend, mirror, auth or error backend, or OTLP receiver resolves (by a gwdev.yaml/--backend mapping, an EndpointSlice or an ExternalName) to one of gwdev's own listeners, so its requests come back into gwdev: a loop unless chaining Gateways is meant (gwdev answers 508 Loop Detected after a few passes and never mirrors a request twice). Fix: map the Service to the real backend",
	"ShadowedRule":   "a match tried earlier (the spec's precedence: path type and length, method, header and query counts, then the oldest route, then namespace/name, then rule order) takes every request this one would, so it never receives traffic. Fix: remove the duplicate, make this match more specific, or give the routes distinct hostnames",
}

// ReasonHint returns the one-line explanation, with what to do about it, of
// a reason of a condition of that type ("" when gwdev has none; a type of ""
// asks for the reason alone, as a SARIF rule's help does).
func ReasonHint(conditionType, reason string) string {
	if e, ok := reasonHints[conditionType+"/"+reason]; ok {
		return e
	}
	return reasonHints[reason]
}

// conflictRules are the distinctness rules a listener's Conflicted reason
// breaks, in a few words.
var conflictRules = map[string]string{
	"HostnameConflict": "listeners on one port need distinct hostnames",
	"ProtocolConflict": "listeners on one port need compatible protocols",
}

// ConflictRule is the distinctness rule a listener's Conflicted reason
// breaks, in a few words (the dashboard's list of conflicted listeners),
// else the reason's hint.
func ConflictRule(reason string) string {
	if r, ok := conflictRules[reason]; ok {
		return r
	}
	return ReasonHint("", reason)
}

// noteHints explain gwdev's own notes (findings without a condition), by
// the kind the engine gives them.
var noteHints = map[NoteKind]string{
	NoteUnknownTLSOption:           "the key is not one of gwdev's TLS options (gwdev.dev/min-tls-version, gwdev.dev/max-tls-version, gwdev.dev/cipher-suites), so it has no effect here. Fix: remove it, or use gwdev's keys",
	NoteTLSOptionsPassthrough:      "a Passthrough listener does not terminate TLS, so gwdev's TLS version and cipher suite options cannot apply; the backend decides. Fix: remove them, or use mode Terminate",
	NoteEchoAuthAllowsAll:          "the ExternalAuth filter's auth Service is answered by gwdev's echo backend, which allows everything. Fix: annotate the Service gwdev.dev/echo-auth-header: <header>, or map it to your auth server (--backend)",
	NoteNoListenerSetCanAttach:     "the Gateway's allowedListeners selector is missing or not a valid label selector, so it admits no ListenerSet. Fix the selector",
	NoteNoParentRefs:               "a route without parentRefs is never served. Fix: add a parentRef to a Gateway or ListenerSet",
	NoteNoGatewayClass:             "without a GatewayClass manifest gwdev acts as the controller of every class the Gateways name; nothing to fix",
	NoteClassNotManaged:            "the Gateway's class belongs to another controller (--class or controllerName), so gwdev leaves it alone",
	NoteCertificateRefsPassthrough: "a Passthrough listener hands the TLS connection to the backend, so its certificateRefs are never used. Fix: remove them, or use mode Terminate",
	NoteEchoTLSGenerated:           "the echo backend was asked to speak TLS but the Secret is missing or invalid, so it uses a self-signed certificate. Fix the Secret if the backend's certificate matters",
	NoteProfileInvalid:             "an implementation-specific annotation or policy has a value the cloud gateway would reject. Fix it as the message says",
	NoteNotEmulated:                "the setting only matters on the cloud gateway: gwdev checks it but does not emulate it. Nothing to fix for local use",
	NoteRefNotFound:                "the reference names an object that is not in the manifests. Fix: add it or fix the reference",
	NoteCrossKindHostname:          "an HTTPRoute and a GRPCRoute claim the same hostname on a listener; the older keeps it. Fix: use distinct hostnames",
	NoteNotForClientAuth:           "the Gateway's client certificate lacks the clientAuth extended key usage; backends that verify client certificates will refuse it. Fix: issue the Secret's certificate for client authentication",
	NoteCertificateExpired:         "a certificate is expired or about to expire. Fix: renew the Secret's certificate",
	NoteUnused:                     "the policy has no effect yet: no served route uses its target. Nothing to fix unless you expected traffic",
	NoteParametersIgnored:          "gwdev does not read parametersRef objects; their settings have no effect here",
	NoteRegexNotRE2:                "the path is a regular expression Go's RE2 cannot run (lookarounds, backreferences, repeat counts over 1000): ingress-nginx's PCRE may serve it, gwdev leaves the location out. Fix: rewrite it without those constructs",
}

// NoteHint is the explanation of a note of that kind ("" when gwdev has
// none).
func NoteHint(kind NoteKind) string { return noteHints[kind] }

// Hint is the one-line explanation of the finding, with what to do about
// it: by condition and reason, or for gwdev's own notes by their kind (""
// when gwdev has none). The dashboard's Problems view shows it; `gwdev
// check`'s machine formats (-o json|yaml, github, sarif) carry it as the
// finding's hint.
func (f Finding) Hint() string {
	if f.Reason != "" {
		return ReasonHint(f.Type, f.Reason)
	}
	return NoteHint(f.Kind)
}

// maxNamesListed is how many existing names an unknown-name finding lists.
const maxNamesListed = 8

// knownNames is what a finding about a name that exists nowhere adds to
// its message, for the reader to fix the name without opening another
// file: the names that do exist, what names them ("the Gateway's
// listeners"), at most maxNamesListed, and the nearest one to want when a
// typo away ("htps": did you mean "https"?). names are listed as given;
// labels, parallel to names when not nil, follow each name ("(HTTPS 443)").
// "" when there is no name to list.
func knownNames(what, want string, names, labels []string) string {
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("; " + what + ": ")
	for i, n := range names {
		if i == maxNamesListed {
			fmt.Fprintf(&b, ", and %d more", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(n))
		if labels != nil && labels[i] != "" {
			b.WriteString(" (" + labels[i] + ")")
		}
	}
	if near := nearestName(want, names); near != "" {
		b.WriteString("; did you mean " + quote(near) + "?")
	}
	return b.String()
}

// nearestName is the name of names closest to want by edit distance, when
// it is a typo away (at most one edit per three characters, at least one);
// "" otherwise. Ties go to the name listed first.
func nearestName(want string, names []string) string {
	if want == "" {
		return ""
	}
	limit := max(1, len(want)/3)
	best, bestD := "", limit+1
	for _, n := range names {
		if d := editDistance(want, n, limit); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (insertions,
// deletions, substitutions, each 1), or limit+1 once it exceeds limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// namesIn is the sorted names of the objects of kind (Gateway, ListenerSet
// or Service) in namespace ns, for a finding about a name that is not one
// of them (knownNames). Built once per kind and namespace per translation.
func (t *translator) namesIn(kind, ns string) []string {
	key := kind + "/" + ns
	if names, ok := t.names[key]; ok {
		return names
	}
	var names []string
	add := func(k nsName) {
		if k.ns == ns {
			names = append(names, k.name)
		}
	}
	switch kind {
	case "Gateway":
		for k := range t.gatewayByKey {
			add(k)
		}
	case "ListenerSet":
		for k := range t.setByKey {
			add(k)
		}
	case "Service":
		for _, s := range t.out.Services {
			add(nsName{s.Namespace, s.Name})
		}
	}
	slices.Sort(names)
	names = slices.Compact(names) // a name twice in Services: once, as a map's keys had it
	if t.names == nil {
		t.names = map[string][]string{}
	}
	t.names[key] = names
	return names
}
