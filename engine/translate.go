package engine

import (
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// Group is the Gateway API group.
const Group = gwv1.GroupName

// Translate computes what a conformant controller would do with the
// snapshot: status for every object and the routing table. It never mutates
// snap; the Result holds its own copies of the objects it writes status
// into and shares the rest (metadata, spec, objects without status), which
// neither side may modify.
func Translate(snap *Snapshot, opts Options) *Result {
	res, finish := translateTableFirst(snap, opts, nil)
	finish()
	return res
}

// TranslateTableFirst is TranslateNext in two steps, so that the data plane
// can take the routing table while the rest of the result is computed: it
// returns the Result with Objects (status written) and Table set, and
// finish, which fills in the rest (Routes, Findings, Policies) exactly as
// Translate does. Until finish returns, only res.Table may be read. Neither
// step writes to the table, so it can be applied while finish runs.
//
// It is incremental (incremental.go): the Result keeps every route's
// compiled rules, and the next call given it as prev reuses those of the
// routes that did not change when nothing but routes changed; the result
// is the same as TranslateNext's. When prev allows it and only a few
// routes changed, the table is prev's with the changed routes' virtual
// hosts rebuilt, and the rest of the Result, Objects included, is set by
// finish (incremental_table.go).
func TranslateTableFirst(prev *Result, snap *Snapshot, opts Options) (res *Result, finish func()) {
	cache := &routeCache{} // keep one; reuse none
	if prev != nil {
		opts.previous = prev.addresses
		if prev.routeCache != nil {
			cache = prev.routeCache
		}
		if snap != nil {
			if tab, n := patchTable(prev, snap, opts); tab != nil { // incremental_table.go
				return patchedResult(tab, n, snap, opts, cache)
			}
		}
	}
	return translateTableFirst(snap, opts, cache)
}

// patchedResult is TranslateTableFirst's Result when the table was patched
// (tab, with n virtual hosts rebuilt): finish translates in full for
// everything but the table, which must be and is taken as equal to tab.
func patchedResult(tab *Table, n int, snap *Snapshot, opts Options, cache *routeCache) (*Result, func()) {
	res := &Result{Table: tab, Reuse: RouteReuse{Patched: true, VirtualHosts: n}}
	return res, func() {
		full, finish := translateWithTable(snap, opts, cache, tab)
		finish()
		// Every field but Table, which the data plane may be reading.
		res.Objects, res.Findings, res.Routes, res.Policies = full.Objects, full.Findings, full.Routes, full.Policies
		res.addresses, res.routeCache, res.tables = full.addresses, full.routeCache, full.tables
		res.Reuse = full.Reuse
		res.Reuse.Patched, res.Reuse.VirtualHosts = true, n
	}
}

// translateTableFirst is TranslateTableFirst; with a cache (which may be
// empty) it reuses its compiled routes and keeps its own in the Result.
func translateTableFirst(snap *Snapshot, opts Options, cache *routeCache) (*Result, func()) {
	return translateWithTable(snap, opts, cache, nil)
}

// translateWithTable is translateTableFirst; given a patched table (not
// nil), it takes that instead of building one when the translation is
// patchable, and only indexes the listeners' rules by hostname for the
// next patch (patchedResult: TestIncrementalEqualsFull checks the patched
// table against a full translation's).
func translateWithTable(snap *Snapshot, opts Options, cache *routeCache, patched *Table) (*Result, func()) {
	if snap == nil {
		snap = &Snapshot{}
	}
	t := newTranslator(snap, opts)
	if cache != nil {
		t.startIncremental(cache)
	} else if patched == nil {
		// Past copySnapshot a translation reads the input's Sources only
		// (the incremental ones read its objects too): holding no more of
		// it lets a caller that drops its own reference (check) free the
		// objects replaced by status copies while the translation builds
		// the rest, 3.8 MB for 10,000 HTTPRoutes at check's peak.
		t.in = &Snapshot{Sources: snap.Sources, SourceList: snap.SourceList}
	}
	t.processGatewayClasses()
	t.processGateways()
	t.processListenerSets()
	t.processListeners()
	t.processRoutes()
	t.processBackendTLSPolicies()
	t.processXBackendTrafficPolicies() // xbackendtrafficpolicy.go
	t.processXTelemetryPolicies()      // xtelemetrypolicy.go
	t.writeXBackendStatus()            // xbackend.go
	t.processXMeshes()
	t.processFrontEnds() // frontend.go: ingress-nginx
	t.writeStatus()
	var tab *Table
	if patched != nil && t.patchableWhy() == "" {
		tab = patched
		t.indexHosts() // incremental_table.go
	} else {
		tab = t.buildTable() // assigns the mesh addresses too
	}
	res := &Result{Objects: t.out, Table: tab, addresses: t.addresses, routeCache: t.inc.next,
		Reuse: RouteReuse{Reused: t.inc.reused, Compiled: t.inc.compiled}}
	return res, func() {
		if !opts.NoServing {
			res.Routes = t.routeServing(res.Table)
		}
		t.noteShadowedRules(res.Table)
		t.noteShadowedL4(res.Table)
		t.noteSelfTargets(res.Table) // selftarget.go
		t.noteReportedFields()
		res.Findings = t.collectFindings()
		res.Policies = t.sortedEffects()
		if cache != nil && t.patchableWhy() == "" {
			res.tables = t.keepForPatch() // incremental_table.go
		}
	}
}

// nsName is a namespace/name pair used as a map key.
type nsName struct{ ns, name string }

// translator holds the indices and intermediate state of one translation.
type translator struct {
	in   *Snapshot
	out  *Snapshot
	opts Options
	// svcFinger is where serviceIndex found the last Service.
	svcFinger int

	secrets        map[nsName]*corev1.Secret
	configMaps     map[nsName]*corev1.ConfigMap
	trustBundles   map[string]*certificatesv1.ClusterTrustBundle
	namespaces     map[string]*corev1.Namespace
	endpointSlices map[nsName][]*discoveryv1.EndpointSlice // by service

	classes      map[string]*classState
	gateways     []*gatewayState
	gatewayByKey map[nsName]*gatewayState
	listenerSets []*listenerSetState
	setByKey     map[nsName]*listenerSetState
	// names are the sorted names of the Gateways, ListenerSets and
	// Services of a namespace, by "<kind>/<namespace>", built when a
	// finding about an unknown name first asks (namesIn).
	names  map[string][]string
	routes []*routeState
	// mesh lists the routes bound to Services, one entry per parentRef
	// (mesh.go).
	mesh []*meshAttachment
	// meshFronts are the Services' mesh frontends, with their addresses
	// (meshAddresses, by meshAddressKey).
	meshFronts    []*meshFrontend
	meshAddresses map[string]string
	// backendUses records, per Service, the gateways whose routes use it, for
	// BackendTLSPolicy ancestor status (empty when there is no policy).
	backendUses map[nsName][]*gatewayState
	// targets are the route backends' Targets by Service port: the first
	// port resolved of each Service in out.Services, at its index (nil:
	// none yet), and the others in moreTargets (sharedTarget).
	targets     []serviceTarget
	moreTargets map[targetKey]*Target
	// words are messages about route parents, made once (parentWhere).
	words    parentWords
	policies []*policyState
	// addresses is the Gateways' address assignment (assignAddresses).
	addresses map[string]string
	// prof is the implementation profiles' state (profile.go).
	prof profileRun

	notes []Finding
	// effects records what each policy does to each target (policy_effects.go).
	effects []PolicyEffect
	// conditionOwners are objects outside the lists above whose conditions
	// become findings (XBackendTrafficPolicies, XBackends).
	conditionOwners []conditionOwner
	// xbackends are the XBackends routes referred to (xbackend.go).
	xbackends map[nsName]*xbackendState
	// frontEnds are the registered front ends' runs (frontend.go).
	frontEnds []FrontEndRun
	// tracing is the Gateways' tracing from XTelemetryPolicies
	// (xtelemetrypolicy.go).
	tracing map[ObjectKey]*table.Tracing
	// inc is the incremental translation's state (incremental.go).
	inc incremental
	// routeObjects are the routes' objects by key (nil: not made yet;
	// routeObject).
	routeObjects map[ObjectKey]object
}

// service is the Service ns/name of the output (nil: none), found in
// out.Services, which copySnapshot sorted by namespace/name; of several
// with the same name, the last. A map of them took 1.5 MB for 20,000
// Services at check's peak (issue 42, part 3).
func (t *translator) service(ns, name string) *Service {
	if i := t.serviceIndex(ns, name); i >= 0 {
		return t.out.Services[i]
	}
	return nil
}

// serviceIndex is the index of the Service ns/name in out.Services (-1:
// none; of two with that name, the last, as a map's last write). The
// search starts from the last Service found (fingerSearch).
func (t *translator) serviceIndex(ns, name string) int {
	svcs := t.out.Services
	i := fingerSearch(len(svcs), t.svcFinger, func(i int) bool {
		// The name is compared only in ns: cmp.Or evaluates every
		// comparison, and each route's backendRefs search 20,000
		// Services this way in bench/genroutes' folder.
		if c := strings.Compare(svcs[i].Namespace, ns); c != 0 {
			return c > 0
		}
		return svcs[i].Name > name
	})
	if i > 0 && svcs[i-1].Namespace == ns && svcs[i-1].Name == name {
		t.svcFinger = i - 1
		return i - 1
	}
	return -1
}

// conditionOwner is an object and its conditions, for collectFindings.
type conditionOwner struct {
	key  ObjectKey
	cond *conditionSet
}

func newTranslator(snap *Snapshot, opts Options) *translator {
	out := copySnapshot(snap)
	t := &translator{
		in:             snap,
		out:            out,
		opts:           opts,
		secrets:        make(map[nsName]*corev1.Secret, len(out.Secrets)),
		configMaps:     make(map[nsName]*corev1.ConfigMap, len(out.ConfigMaps)),
		trustBundles:   make(map[string]*certificatesv1.ClusterTrustBundle, len(out.ClusterTrustBundles)),
		namespaces:     make(map[string]*corev1.Namespace, len(out.Namespaces)),
		endpointSlices: map[nsName][]*discoveryv1.EndpointSlice{},
		classes:        map[string]*classState{},
		gatewayByKey:   map[nsName]*gatewayState{},
		setByKey:       map[nsName]*listenerSetState{},
		backendUses:    map[nsName][]*gatewayState{},
	}
	for _, s := range out.Secrets {
		t.secrets[nsName{s.Namespace, s.Name}] = s
	}
	for _, c := range out.ConfigMaps {
		t.configMaps[nsName{c.Namespace, c.Name}] = c
	}
	for _, b := range out.ClusterTrustBundles {
		t.trustBundles[b.Name] = b
	}
	for _, n := range out.Namespaces {
		t.namespaces[n.Name] = n
	}
	for _, es := range out.EndpointSlices {
		svc := es.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			continue
		}
		k := nsName{es.Namespace, svc}
		t.endpointSlices[k] = append(t.endpointSlices[k], es)
	}
	return t
}

// copySnapshot returns the objects of the result, each kind sorted by
// namespace/name, with apiVersion and kind set: objects of kinds with status
// are shallow copies (see typedKind.copyTo), the others are shared with the
// input unless their apiVersion and kind had to be set. Sources are shared
// too.
func copySnapshot(in *Snapshot) *Snapshot {
	out := &Snapshot{Sources: in.Sources, SourceList: in.SourceList}
	if out.Sources == nil && out.SourceList == nil {
		out.Sources = map[ObjectKey]Source{}
	}
	for _, k := range kinds {
		k.ops.copyTo(out, in, k)
	}
	return out
}

// object is what every Kubernetes object offers through its embedded
// ObjectMeta.
type object interface {
	GetNamespace() string
	GetName() string
	GetCreationTimestamp() metav1.Time
}

// sortByName sorts objects by namespace/name, keeping the order of equal
// keys. Snapshots from the loader are sorted already, which is checked first.
func sortByName[T object](objs []T) []T {
	if !slices.IsSortedFunc(objs, byName[T]) {
		slices.SortStableFunc(objs, byName[T])
	}
	return objs
}

// byName orders two objects by namespace/name.
func byName[T object](a, b T) int {
	if c := strings.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
		return c
	}
	return strings.Compare(a.GetName(), b.GetName())
}

// olderFirst orders two objects by creationTimestamp (oldest first; objects
// without one sort after those with one), then namespace/name.
func olderFirst(a, b object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		if ta.IsZero() {
			return false
		}
		if tb.IsZero() {
			return true
		}
		return ta.Before(&tb)
	}
	if a.GetNamespace() != b.GetNamespace() {
		return a.GetNamespace() < b.GetNamespace()
	}
	return a.GetName() < b.GetName()
}

// compareOlder is olderFirst as a comparison: -1 when a sorts first, 1 when
// b does, 0 when neither does.
func compareOlder(a, b object) int {
	switch {
	case olderFirst(a, b):
		return -1
	case olderFirst(b, a):
		return 1
	}
	return 0
}

// source returns where an object was read from.
func (t *translator) source(k ObjectKey) Source {
	return t.in.SourceOf(k).At("")
}

// sourceAt returns where a field of an object was read from (the object's
// own line when the field's is unknown).
func (t *translator) sourceAt(k ObjectKey, path string) Source {
	return t.in.SourceOf(k).At(path)
}

// sourceAtFirst returns where the first of paths whose line is known was
// read from ("" paths are skipped; the object's own line when none is).
func (t *translator) sourceAtFirst(k ObjectKey, paths ...string) Source {
	src := t.in.SourceOf(k)
	for _, p := range paths {
		if _, ok := src.Fields[p]; ok && p != "" {
			return src.At(p)
		}
	}
	return src.At("")
}

// note records a finding that does not come from a status condition.
func (t *translator) note(sev Severity, k ObjectKey, scope, msg string) {
	t.noteAt("", sev, k, "", scope, msg)
}

// noteKind is note of a kind other packages tell apart.
func (t *translator) noteKind(kind NoteKind, sev Severity, k ObjectKey, scope, msg string) {
	t.noteAt(kind, sev, k, "", scope, msg)
}

// noteAt is noteKind about the field at path ("metadata.annotations[key]"),
// which the finding points at; "" when the scope says where.
func (t *translator) noteAt(kind NoteKind, sev Severity, k ObjectKey, path, scope, msg string) {
	t.notes = append(t.notes, Finding{Severity: sev, Object: k, Source: t.sourceAtFirst(k, path, listItem(scope)), Scope: scope, Kind: kind, Message: msg,
		Field: firstNonEmpty(path, fieldPath(scope))})
}

// fieldPath is scope when it is a field path (spec.…, metadata.…), else "".
func fieldPath(scope string) string {
	if strings.HasPrefix(scope, "spec.") || strings.HasPrefix(scope, "metadata.") {
		return scope
	}
	return ""
}

// listItem is the list item a field path is inside (spec.rules[1] for
// spec.rules[1].matches[0].path), "" when it is not in one.
func listItem(path string) string {
	i := strings.IndexByte(path, ']')
	if i < 0 || !strings.HasPrefix(path, "spec.") {
		return ""
	}
	return path[:i+1]
}
