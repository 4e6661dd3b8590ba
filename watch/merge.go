package watch

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

// loaded is one object that passed validation, with where it came from.
type loaded struct {
	key engine.ObjectKey
	src engine.Source
	obj metav1.Object
}

// Merge combines the results of several loads (for example one per file)
// into one, as if everything had been loaded together: Files add up,
// Problems and Skipped are concatenated and sorted, Warnings concatenated, and the Snapshots are
// merged. When the same object (kind, namespace, name) appears more than
// once, the definition that comes first by file and line wins and each other
// one becomes a Problem. Nil results are ignored; the inputs are not
// modified, but the returned Snapshot shares their objects.
func Merge(results ...*LoadResult) *LoadResult {
	var (
		files    int
		objs     []loaded
		problems []Problem
		skipped  []Skipped
		warnings []Warning
	)
	for _, r := range results {
		if r == nil {
			continue
		}
		files += r.Files
		problems = append(problems, r.Problems...)
		skipped = append(skipped, r.Skipped...)
		warnings = append(warnings, r.Warnings...)
		objs = append(objs, snapshotObjects(r.Snapshot)...)
	}
	res := assemble(files, objs, problems, skipped)
	res.Warnings = warnings
	return res
}

// assemble builds a LoadResult: it sorts everything, keeps the first
// definition of each object and reports the others as duplicates.
func assemble(files int, objs []loaded, problems []Problem, skipped []Skipped) *LoadResult {
	// Sort positions rather than the (large) records; the position breaks
	// ties, which keeps the input order of objects on the same line.
	order := make([]int32, len(objs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &objs[i], &objs[j]
		return cmp.Or(
			cmp.Compare(a.key.Kind, b.key.Kind),
			cmp.Compare(a.key.Namespace, b.key.Namespace),
			cmp.Compare(a.key.Name, b.key.Name),
			cmp.Compare(a.src.File, b.src.File),
			cmp.Compare(a.src.Line, b.src.Line),
			cmp.Compare(i, j),
		)
	})
	snap := &engine.Snapshot{Sources: make(map[engine.ObjectKey]engine.Source, len(objs))}
	var winner *loaded
	for _, i := range order {
		o := &objs[i]
		if winner != nil && o.key == winner.key {
			problems = append(problems, Problem{
				File: o.src.File, Line: o.src.Line, Column: 1, Object: o.key,
				Message: fmt.Sprintf("%s is already defined at %s; this definition is ignored", o.key, winner.src),
			})
			continue
		}
		winner = o
		addToSnapshot(snap, o.obj)
		snap.Sources[o.key] = o.src
	}
	sortProblems(problems)
	slices.SortStableFunc(skipped, compareSkipped)
	return &LoadResult{Snapshot: snap, Problems: problems, Skipped: skipped, Files: files}
}

// addToSnapshot appends obj to the Snapshot slice of its type.
func addToSnapshot(s *engine.Snapshot, obj metav1.Object) {
	switch o := obj.(type) {
	case *gwv1.GatewayClass:
		s.GatewayClasses = append(s.GatewayClasses, o)
	case *gwv1.Gateway:
		s.Gateways = append(s.Gateways, o)
	case *gwv1.ListenerSet:
		s.ListenerSets = append(s.ListenerSets, o)
	case *gwv1.HTTPRoute:
		s.HTTPRoutes = append(s.HTTPRoutes, o)
	case *gwv1.GRPCRoute:
		s.GRPCRoutes = append(s.GRPCRoutes, o)
	case *gwv1.TLSRoute:
		s.TLSRoutes = append(s.TLSRoutes, o)
	case *gwv1.TCPRoute:
		s.TCPRoutes = append(s.TCPRoutes, o)
	case *gwv1.UDPRoute:
		s.UDPRoutes = append(s.UDPRoutes, o)
	case *gwv1.ReferenceGrant:
		s.ReferenceGrants = append(s.ReferenceGrants, o)
	case *gwv1.BackendTLSPolicy:
		s.BackendTLSPolicies = append(s.BackendTLSPolicies, o)
	case *corev1.Service:
		s.Services = append(s.Services, o)
	case *corev1.Secret:
		s.Secrets = append(s.Secrets, o)
	case *corev1.ConfigMap:
		s.ConfigMaps = append(s.ConfigMaps, o)
	case *corev1.Namespace:
		s.Namespaces = append(s.Namespaces, o)
	case *discoveryv1.EndpointSlice:
		s.EndpointSlices = append(s.EndpointSlices, o)
	case *engine.ImplementationPolicy:
		s.ImplementationPolicies = append(s.ImplementationPolicies, o)
	default:
		panic(fmt.Sprintf("watch: no Snapshot slice for %T", obj))
	}
}

// snapshotObjects lists every object of s with its key and source.
func snapshotObjects(s *engine.Snapshot) []loaded {
	if s == nil {
		return nil
	}
	var out []loaded
	out = appendObjects(out, s, kindGatewayClass, s.GatewayClasses)
	out = appendObjects(out, s, kindGateway, s.Gateways)
	out = appendObjects(out, s, kindListenerSet, s.ListenerSets)
	out = appendObjects(out, s, kindHTTPRoute, s.HTTPRoutes)
	out = appendObjects(out, s, kindGRPCRoute, s.GRPCRoutes)
	out = appendObjects(out, s, kindTLSRoute, s.TLSRoutes)
	out = appendObjects(out, s, kindTCPRoute, s.TCPRoutes)
	out = appendObjects(out, s, kindUDPRoute, s.UDPRoutes)
	out = appendObjects(out, s, kindReferenceGrant, s.ReferenceGrants)
	out = appendObjects(out, s, kindBackendTLSPolicy, s.BackendTLSPolicies)
	out = appendObjects(out, s, kindService, s.Services)
	out = appendObjects(out, s, kindSecret, s.Secrets)
	out = appendObjects(out, s, kindConfigMap, s.ConfigMaps)
	out = appendObjects(out, s, kindNamespace, s.Namespaces)
	out = appendObjects(out, s, kindEndpointSlice, s.EndpointSlices)
	out = appendPolicyObjects(out, s)
	return out
}

func appendObjects[T metav1.Object](out []loaded, s *engine.Snapshot, spec *kindSpec, items []T) []loaded {
	for _, o := range items {
		key := objectKey(spec, o.GetNamespace(), o.GetName())
		out = append(out, loaded{key: key, src: s.SourceOf(key), obj: o})
	}
	return out
}

// objectKey names an object of spec.
func objectKey(spec *kindSpec, namespace, name string) engine.ObjectKey {
	if !spec.namespaced {
		namespace = ""
	}
	return engine.ObjectKey{Kind: spec.kind, Namespace: namespace, Name: name}
}
