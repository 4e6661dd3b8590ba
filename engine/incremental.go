package engine

import (
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Incremental translation (TranslateTableFirst with a previous Result).
//
// Profiling 10,000 HTTPRoutes showed compiling the routes' rules
// (compileRoute: matches, filters, backendRefs resolved against Services,
// EndpointSlices and ReferenceGrants) as the largest single part of a
// translation. A route's compiled rules depend on the route object, its
// source, the options and the objects that are not routes (Services,
// EndpointSlices, ReferenceGrants, Gateways, policies, ...), never on other
// routes. So a translation keeps each route's compile output (routeCache),
// and the next reuses it for every route whose object and source are the
// same, provided every object that is not a route is the same object as
// before (pointer equality: the watcher keeps the objects of unchanged
// files) and the options match. Any other change compiles every route.
// Everything after compiling (attachment, conflicts between routes,
// listener precedence, policies editing compiled rules, status, the table,
// findings) runs in full every time, so the result equals a full
// translation (TestIncrementalEqualsFull). Reused rules are shared with the
// previous table, never edited: the steps that edit compiled rules
// (BackendTLSPolicies, XBackendTrafficPolicies) copy a route's first
// (ownRules). So the data plane can tell an unchanged rule by its pointer.
//
// The table does not wait for that full run when a reload changes a few
// HTTPRoutes and nothing else, in a folder without ListenerSets, other
// route kinds, policies, XBackends, Ingresses or mesh routes: it is the
// previous table with only the virtual hosts of the (listener, hostname)
// pairs the changed routes attached to before or attach to now rebuilt
// (every other vhost, listener and Gateway keeps its pointer), and the full
// run moves into finish. What a changed route can affect, and why nothing
// else needs rebuilding, is written out at the top of incremental_table.go.

// routeCache is what one translation keeps for the next: the compile output
// of every cacheable route, and the inputs it depended on.
type routeCache struct {
	// opts are the options compiled with, without Now and the previous
	// addresses (compileRoute reads neither).
	opts Options
	// others are the snapshot's objects that are not routes, kind by kind
	// in registry order.
	others []metav1.Object
	// routes are the compile outputs, by route.
	routes map[ObjectKey]*compiledRoute
}

// compiledRoute is one route's compile output as compileRoute left it,
// before any later step edited it. Nothing writes to it after it is stored
// (see ownRules).
type compiledRoute struct {
	// obj is the input object compiled and src its source.
	obj metav1.Object
	src Source

	out compiled
	// notes are the findings compiling the route noted.
	notes []Finding
}

// incremental is a translator's cache state: prev is the previous
// translation's cache (nil: compile every route), next the one this
// translation builds (nil: keep none).
type incremental struct {
	prev, next *routeCache
	// inputs are the snapshot's route objects in the order of the
	// translation's routes (only with next): inputs[i] is the object
	// t.routes[i] was copied from.
	inputs []metav1.Object
	// reused and compiled count the routes of this translation.
	reused, compiled int
}

// startIncremental prepares t to reuse prev's compiled routes (prev may be
// nil) and to keep its own for the next translation.
//
// It keeps no map of the snapshot's routes: it lists them kind by kind,
// each kind sorted as copySnapshot sorts it (the loader's snapshots are
// sorted already, which is checked first), so the i-th route the
// translation collects (routeState.index) was copied from inputs[i].
// Profiling a reload of 10,000 routes showed building a map by key for
// every reload as ~5 % of the table's time and 2.5 MB of garbage.
func (t *translator) startIncremental(prev *routeCache) {
	var prevOthers []metav1.Object
	if prev != nil {
		prevOthers = prev.others
	}
	next := &routeCache{opts: cacheOptions(t.opts), others: nonRouteObjects(t.in, prevOthers), routes: make(map[ObjectKey]*compiledRoute, len(t.in.HTTPRoutes))}
	t.inc.next = next
	for _, k := range kinds {
		if !k.IsRoute() {
			continue
		}
		first := len(t.inc.inputs)
		k.Each(t.in, func(_ ObjectKey, o metav1.Object) { t.inc.inputs = append(t.inc.inputs, o) })
		sortByName(t.inc.inputs[first:]) // as copySnapshot sorts the copies
	}
	if prev != nil && reflect.DeepEqual(prev.opts, next.opts) && sameObjects(prev.others, next.others) {
		t.inc.prev = prev
	}
}

// input is the snapshot's object r was copied from (nil: none; r is not
// one of the collected routes).
func (inc *incremental) input(r *routeState) metav1.Object {
	if int(r.index) < len(inc.inputs) {
		if o := inc.inputs[r.index]; o.GetName() == r.key.Name && o.GetNamespace() == r.key.Namespace {
			return o
		}
	}
	return nil
}

// sameObjects reports whether a and b hold the same objects in the same
// order (pointer equality; the same backing array is equal at once).
func sameObjects(a, b []metav1.Object) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.Equal(a, b)
}

// cacheOptions is opts without what compiling a route does not read.
func cacheOptions(opts Options) Options {
	opts.Now = metav1.Time{}
	opts.previous = nil
	return opts
}

// nonRouteObjects lists the objects of s that are not routes, kind by kind.
// It returns prev itself when that is the same list, so that an unchanged
// reload allocates nothing here.
func nonRouteObjects(s *Snapshot, prev []metav1.Object) []metav1.Object {
	n, same := 0, true
	for _, k := range kinds {
		if !k.IsRoute() && same {
			c, ok := k.ops.samePrefix(s, prev[n:])
			n, same = n+c, ok
		}
	}
	if same && n == len(prev) {
		return prev
	}
	out := make([]metav1.Object, 0, len(prev))
	for _, k := range kinds {
		if !k.IsRoute() {
			k.Each(s, func(_ ObjectKey, o metav1.Object) { out = append(out, o) })
		}
	}
	return out
}

// compileOrReuse is compileRoute, reusing the previous translation's output
// for r when its inputs are the same. Either way r's compiled rules are then
// shared (with the cache, and with the previous table when reused): a step
// that edits them calls ownRules first.
func (t *translator) compileOrReuse(r *routeState) {
	if t.inc.next == nil {
		t.compileRoute(r)
		return
	}
	in := t.inc.input(r)
	if p := t.inc.prev; p != nil {
		if c := p.routes[r.key]; c != nil && c.obj == in && sameSource(c.src, *r.src) {
			c.restore(t, r)
			t.inc.next.routes[r.key] = c
			t.inc.reused++
			return
		}
	}
	notes := len(t.notes)
	t.compileRoute(r)
	t.inc.compiled++
	if in == nil || !cacheable(r) {
		return
	}
	c := &compiledRoute{obj: in, src: *r.src, notes: slices.Clip(t.notes[notes:len(t.notes):len(t.notes)])}
	c.save(r)
	t.inc.next.routes[r.key] = c
}

// ownRules makes r's compiled rules its own to edit: a copy when they are
// shared (compileOrReuse).
func (t *translator) ownRules(r *routeState) {
	if !r.shared {
		return
	}
	var cl ruleCloner
	r.rules, r.sni, r.stream = cl.rules(r.rules), cl.sniRoutes(r.sni), cl.streamRoutes(r.stream)
	r.shared = false
}

// cacheable reports whether compiling r changed nothing but r and the notes:
// a backendRef to an XBackend records the route on the XBackend's state
// (usedBy, for its status), which a reused compile output would not.
func cacheable(r *routeState) bool {
	for _, b := range r.backends() {
		if b.Service.Kind != "Service" {
			return false
		}
	}
	return true
}

// sameSource reports whether two sources are the same, field positions
// included (the same map).
func sameSource(a, b Source) bool {
	return a.File == b.File && a.Line == b.Line && a.Column == b.Column && a.APIVersion == b.APIVersion &&
		reflect.ValueOf(a.Fields).UnsafePointer() == reflect.ValueOf(b.Fields).UnsafePointer()
}

// save keeps r's compile output in c; r shares it from now on. The slices
// are clipped, so that a later append to r's (listenerfilters.go) copies.
func (c *compiledRoute) save(r *routeState) {
	r.refFailures, r.dropped = slices.Clip(r.refFailures), slices.Clip(r.dropped)
	r.pathLens = slices.Clip(r.pathLens)
	c.out = r.compiled
	r.shared = true
}

// restore gives r c's compile output, shared, and notes c's findings
// again, as compiling r would.
func (c *compiledRoute) restore(t *translator, r *routeState) {
	r.compiled = c.out
	r.shared = true
	t.notes = append(t.notes, c.notes...)
}

// ruleCloner copies compiled rules deeply enough that later steps may edit
// the copy (backends' Invalid, Target, TLS, retry budgets; rules' direct
// answers), keeping shared backends shared.
type ruleCloner struct {
	backends map[*Backend]*Backend
	auths    map[*ExternalAuth]*ExternalAuth
}

func (c *ruleCloner) rules(in []*RouteRule) []*RouteRule {
	if in == nil {
		return nil
	}
	out := make([]*RouteRule, len(in))
	for i, rr := range in {
		if rr == nil {
			continue
		}
		cp := *rr
		cp.Filters = slices.Clone(rr.Filters)
		cp.Backends = c.backendList(rr.Backends)
		cp.Mirrors = c.backendList(rr.Mirrors)
		cp.ExternalAuth = c.authList(rr.ExternalAuth)
		if rr.ErrorPages != nil {
			ep := *rr.ErrorPages
			ep.Backend = c.backend(ep.Backend)
			cp.ErrorPages = &ep
		}
		out[i] = &cp
	}
	return out
}

func (c *ruleCloner) sniRoutes(in []*SNIRoute) []*SNIRoute {
	if in == nil {
		return nil
	}
	out := make([]*SNIRoute, len(in))
	for i, s := range in {
		cp := *s
		cp.Hostnames = slices.Clone(s.Hostnames)
		cp.Backends = c.backendList(s.Backends)
		out[i] = &cp
	}
	return out
}

func (c *ruleCloner) streamRoutes(in []*StreamRoute) []*StreamRoute {
	if in == nil {
		return nil
	}
	out := make([]*StreamRoute, len(in))
	for i, s := range in {
		cp := *s
		cp.Backends = c.backendList(s.Backends)
		out[i] = &cp
	}
	return out
}

func (c *ruleCloner) backendList(in []*Backend) []*Backend {
	if in == nil {
		return nil
	}
	out := make([]*Backend, len(in))
	for i, b := range in {
		out[i] = c.backend(b)
	}
	return out
}

func (c *ruleCloner) backend(b *Backend) *Backend {
	if b == nil {
		return nil
	}
	if cp, ok := c.backends[b]; ok {
		return cp
	}
	if c.backends == nil {
		c.backends = map[*Backend]*Backend{}
	}
	cp := *b
	c.backends[b] = &cp
	cp.Filters = slices.Clone(b.Filters)
	cp.Mirrors = c.backendList(b.Mirrors)
	cp.ExternalAuth = c.authList(b.ExternalAuth)
	return &cp
}

func (c *ruleCloner) authList(in []*ExternalAuth) []*ExternalAuth {
	if in == nil {
		return nil
	}
	out := make([]*ExternalAuth, len(in))
	for i, a := range in {
		if a == nil {
			continue
		}
		if cp, ok := c.auths[a]; ok {
			out[i] = cp
			continue
		}
		if c.auths == nil {
			c.auths = map[*ExternalAuth]*ExternalAuth{}
		}
		cp := *a
		cp.Backend = c.backend(a.Backend)
		c.auths[a] = &cp
		out[i] = &cp
	}
	return out
}
