package engine

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Group is the Gateway API group.
const Group = gwv1.GroupName

// Translate computes what a conformant controller would do with the
// snapshot: status for every object and the routing table. It never mutates
// snap; the Result holds deep copies.
func Translate(snap *Snapshot, opts Options) *Result {
	if snap == nil {
		snap = &Snapshot{}
	}
	t := newTranslator(snap, opts)
	t.processGatewayClasses()
	t.processGateways()
	t.processListenerSets()
	t.processListeners()
	t.processRoutes()
	t.processBackendTLSPolicies()
	t.writeStatus()
	res := &Result{Objects: t.out, Table: t.buildTable()}
	res.Findings = t.collectFindings()
	res.Objects.Each(func(ObjectKey, metav1.Object) {}) // set apiVersion and kind now, not on read (see each)
	return res
}

// nsName is a namespace/name pair used as a map key.
type nsName struct{ ns, name string }

// translator holds the indices and intermediate state of one translation.
type translator struct {
	in   *Snapshot
	out  *Snapshot
	opts Options

	services       map[nsName]*corev1.Service
	secrets        map[nsName]*corev1.Secret
	configMaps     map[nsName]*corev1.ConfigMap
	namespaces     map[string]*corev1.Namespace
	endpointSlices map[nsName][]*discoveryv1.EndpointSlice // by service

	classes      map[string]*classState
	gateways     []*gatewayState
	gatewayByKey map[nsName]*gatewayState
	listenerSets []*listenerSetState
	setByKey     map[nsName]*listenerSetState
	routes       []*routeState
	// backendUses records, per Service, the gateways whose routes use it, for
	// BackendTLSPolicy ancestor status.
	backendUses map[nsName][]*gatewayState
	policies    []*policyState
	// prof is the implementation profiles' state (profile.go).
	prof profileRun

	notes []Finding
}

func newTranslator(snap *Snapshot, opts Options) *translator {
	out := deepCopySnapshot(snap)
	t := &translator{
		in:             snap,
		out:            out,
		opts:           opts,
		services:       map[nsName]*corev1.Service{},
		secrets:        map[nsName]*corev1.Secret{},
		configMaps:     map[nsName]*corev1.ConfigMap{},
		namespaces:     map[string]*corev1.Namespace{},
		endpointSlices: map[nsName][]*discoveryv1.EndpointSlice{},
		classes:        map[string]*classState{},
		gatewayByKey:   map[nsName]*gatewayState{},
		setByKey:       map[nsName]*listenerSetState{},
		backendUses:    map[nsName][]*gatewayState{},
	}
	for _, s := range out.Services {
		t.services[nsName{s.Namespace, s.Name}] = s
	}
	for _, s := range out.Secrets {
		t.secrets[nsName{s.Namespace, s.Name}] = s
	}
	for _, c := range out.ConfigMaps {
		t.configMaps[nsName{c.Namespace, c.Name}] = c
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

// deepCopySnapshot copies every object and sorts each kind by
// creationTimestamp-independent namespace/name order.
func deepCopySnapshot(in *Snapshot) *Snapshot {
	out := &Snapshot{Sources: map[ObjectKey]Source{}}
	for k, v := range in.Sources {
		out.Sources[k] = v
	}
	out.GatewayClasses = copyAll(in.GatewayClasses, (*gwv1.GatewayClass).DeepCopy)
	out.Gateways = copyAll(in.Gateways, (*gwv1.Gateway).DeepCopy)
	out.ListenerSets = copyAll(in.ListenerSets, (*gwv1.ListenerSet).DeepCopy)
	out.HTTPRoutes = copyAll(in.HTTPRoutes, (*gwv1.HTTPRoute).DeepCopy)
	out.GRPCRoutes = copyAll(in.GRPCRoutes, (*gwv1.GRPCRoute).DeepCopy)
	out.TLSRoutes = copyAll(in.TLSRoutes, (*gwv1.TLSRoute).DeepCopy)
	out.TCPRoutes = copyAll(in.TCPRoutes, (*gwv1.TCPRoute).DeepCopy)
	out.UDPRoutes = copyAll(in.UDPRoutes, (*gwv1.UDPRoute).DeepCopy)
	out.ReferenceGrants = copyAll(in.ReferenceGrants, (*gwv1.ReferenceGrant).DeepCopy)
	out.BackendTLSPolicies = copyAll(in.BackendTLSPolicies, (*gwv1.BackendTLSPolicy).DeepCopy)
	out.Services = copyAll(in.Services, (*corev1.Service).DeepCopy)
	out.Secrets = copyAll(in.Secrets, (*corev1.Secret).DeepCopy)
	out.ConfigMaps = copyAll(in.ConfigMaps, (*corev1.ConfigMap).DeepCopy)
	out.Namespaces = copyAll(in.Namespaces, (*corev1.Namespace).DeepCopy)
	out.EndpointSlices = copyAll(in.EndpointSlices, (*discoveryv1.EndpointSlice).DeepCopy)
	out.ImplementationPolicies = copyAll(in.ImplementationPolicies, (*ImplementationPolicy).DeepCopy)
	sort.SliceStable(out.ImplementationPolicies, func(i, j int) bool {
		return out.ImplementationPolicies[i].Kind < out.ImplementationPolicies[j].Kind
	})
	return out
}

// object is what every Kubernetes object offers through its embedded
// ObjectMeta.
type object interface {
	GetNamespace() string
	GetName() string
	GetCreationTimestamp() metav1.Time
}

func copyAll[T object](in []T, cp func(T) T) []T {
	out := make([]T, 0, len(in))
	for _, o := range in {
		out = append(out, cp(o))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].GetNamespace() != out[j].GetNamespace() {
			return out[i].GetNamespace() < out[j].GetNamespace()
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out
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

// source returns where an object was read from.
func (t *translator) source(k ObjectKey) Source {
	return t.in.SourceOf(k).At("")
}

// sourceAt returns where a field of an object was read from (the object's
// own line when the field's is unknown).
func (t *translator) sourceAt(k ObjectKey, path string) Source {
	return t.in.SourceOf(k).At(path)
}

// note records a finding that does not come from a status condition.
func (t *translator) note(sev Severity, k ObjectKey, scope, msg string) {
	t.notes = append(t.notes, Finding{Severity: sev, Object: k, Source: t.source(k), Scope: scope, Message: msg})
}
