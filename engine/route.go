package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Route is what every route kind has in common, for code that handles
// routes of any kind (attachment, status, the TUI's Routes view, summaries).
type Route interface {
	// Object is the route itself.
	Object() metav1.Object
	// Key names the route.
	Key() ObjectKey
	// Spec is the route's spec (a pointer to the kind's spec type).
	Spec() any
	// ParentRefs are the route's spec.parentRefs.
	ParentRefs() []gwv1.ParentReference
	// Hostnames are the route's spec.hostnames (nil for kinds without them).
	Hostnames() []gwv1.Hostname
	// RouteStatus is the route's status, which Translate writes.
	RouteStatus() *gwv1.RouteStatus

	// commonSpec is the spec every route kind shares.
	commonSpec() *gwv1.CommonRouteSpec
	// compile runs the kind's translation code: it turns the route's rules
	// into table entries (only the registry implements Route).
	compile(t *translator, r *routeState)
}

// EachRoute calls fn for every route of the snapshot, kind by kind in
// registry order, each kind by namespace/name as stored.
func (s *Snapshot) EachRoute(fn func(Route)) {
	for _, k := range kinds {
		if k.IsRoute() {
			k.Each(s, func(_ ObjectKey, o metav1.Object) { fn(k.Route(o)) })
		}
	}
}

// RouteOf returns o as a Route (nil: o is not a route).
func RouteOf(o metav1.Object) Route {
	for _, k := range kinds {
		if k.IsRoute() {
			if r := k.Route(o); r != nil {
				return r
			}
		}
	}
	return nil
}

// routeAccess reads the route fields of one route type, and compiles its
// rules into table entries (the kind's translation code).
type routeAccess[T any] struct {
	specOf    func(T) any
	spec      func(T) *gwv1.CommonRouteSpec
	hostnames func(T) []gwv1.Hostname // nil: the kind has no hostnames
	status    func(T) *gwv1.RouteStatus
	compile   func(*translator, *routeState, T)
}

// typedRoute is a route of type T seen as a Route.
type typedRoute[T kubeObject] struct {
	obj T
	// kind makes Key (a key of its own was 40 bytes more for each route:
	// 0.4 MB for 10,000 HTTPRoutes).
	kind *Kind
	acc  *routeAccess[T]
}

func (r typedRoute[T]) Object() metav1.Object              { return r.obj }
func (r typedRoute[T]) Key() ObjectKey                     { return keyOf(r.kind, r.obj) }
func (r typedRoute[T]) Spec() any                          { return r.acc.specOf(r.obj) }
func (r typedRoute[T]) ParentRefs() []gwv1.ParentReference { return r.acc.spec(r.obj).ParentRefs }
func (r typedRoute[T]) RouteStatus() *gwv1.RouteStatus     { return r.acc.status(r.obj) }
func (r typedRoute[T]) commonSpec() *gwv1.CommonRouteSpec  { return r.acc.spec(r.obj) }

func (r typedRoute[T]) Hostnames() []gwv1.Hostname {
	if r.acc.hostnames == nil {
		return nil
	}
	return r.acc.hostnames(r.obj)
}

func (tk typedKind[O, T]) route(k *Kind, o metav1.Object) Route {
	x, ok := o.(T)
	if !ok || tk.routes == nil {
		return nil
	}
	return typedRoute[T]{obj: x, kind: k, acc: tk.routes}
}

func (r typedRoute[T]) compile(t *translator, rs *routeState) { r.acc.compile(t, rs, r.obj) }
