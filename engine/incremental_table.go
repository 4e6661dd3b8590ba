package engine

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The patched table (TranslateTableFirst with a previous Result whose
// translation was patchable).
//
// A reload that changes a few routes of many (the editor saves one file)
// builds its table from the previous table: only the virtual hosts whose
// rules changed are rebuilt, and every other Gateway, port, listener and
// virtual host keeps its pointer, so the data plane reuses them too
// (emulator/reuse.go). The full translation still runs, in finish, for
// everything else (status, findings, routes served, policies) and for the
// state the next reload patches from; it takes the patched table instead
// of building one (indexHosts), which must equal a full build
// (TestIncrementalEqualsFull and FuzzIncremental compare both with a full
// translation after every edit).
//
// What a changed route can affect. A route's compiled rules depend on the
// route, its source, the options and the objects that are not routes
// (incremental.go). With only HTTPRoutes, Gateways and what they refer to
// (patchableWhy lists what else makes a translation not patchable), the
// routes meet in three places:
//   - cross-serving conflicts (resolveCrossServing), between HTTPRoutes and
//     GRPCRoutes only: there are no GRPCRoutes;
//   - a listener's attachedRoutes count and the route's own status: status,
//     not the table; finish computes them in full;
//   - the virtual host of each hostname a route serves on each listener it
//     attached to: its rules are those of every route attached there with
//     that hostname, in precedence order (sortRules), which compares the
//     routes' matches, hostnames, creation times and names. A vhost is a
//     function of that list of rules alone (virtualHost).
//
// Attachment (attachRoute, decideAccepted) reads the route, the Gateways'
// listeners and the Namespaces, never another route. So the virtual hosts
// to rebuild are those of the (listener, hostname) pairs a changed route
// attached to before or attaches to now; each is rebuilt from the previous
// translation's rules for that pair (listenerState.byHost) without the
// changed routes' and with their new ones. Listeners, ports and Gateways
// of the table do not depend on routes (programmed, addresses, TLS), so
// they are copied with their new vhost lists.
//
// Anything else falls back to the full table: options or any non-route
// object changed, a kind listed in patchableWhy present, a changed route
// that uses a Service parent, default Gateways or an XBackend, the
// snapshot's routes not in order, or more than a quarter of the routes
// changed (then a full build costs about the same).

// tableState is what a patchable translation keeps for the next one.
type tableState struct {
	// t is the finished translation (read only from then on): its routes
	// in input order, its listeners with byHost, its indices.
	t *translator
}

// keepForPatch is the state the next translation patches from: t, once
// finished, without what patching does not read (the cache before last,
// findings, conditions, profile verdicts).
func (t *translator) keepForPatch() *tableState {
	t.inc.prev = nil
	t.notes, t.effects, t.conditionOwners, t.routeObjects = nil, nil, nil, nil
	t.prof.routeVerdicts, t.prof.verdicts = nil, nil
	for _, r := range t.routes {
		for _, p := range r.parents {
			p.cond = nil
		}
	}
	return &tableState{t: t}
}

// indexHosts sets byHost of every HTTP listener, as building the table
// would, for a translation that takes a patched table instead.
func (t *translator) indexHosts() {
	for _, g := range t.gateways {
		for _, l := range g.merged {
			if l.protocol == gwv1.HTTPProtocolType || l.protocol == gwv1.HTTPSProtocolType {
				l.byHost = l.rulesByHost()
			}
		}
	}
}

// patchableWhy says why the next translation cannot patch t's table, ""
// when it can.
func (t *translator) patchableWhy() string {
	s := t.in
	switch {
	case len(s.ListenerSets) > 0:
		return "ListenerSets"
	case len(s.GRPCRoutes)+len(s.TLSRoutes)+len(s.TCPRoutes)+len(s.UDPRoutes) > 0:
		return "routes other than HTTPRoutes"
	case len(s.BackendTLSPolicies)+len(s.XBackendTrafficPolicies)+len(s.XTelemetryPolicies)+len(s.ImplementationPolicies) > 0:
		return "policies"
	case len(s.XBackends)+len(s.Pods)+len(s.XMeshes) > 0:
		return "XBackends, Pods or XMeshes"
	case len(s.Ingresses)+len(s.IngressClasses) > 0:
		return "Ingresses"
	case len(t.mesh)+len(t.meshFronts) > 0:
		return "mesh routes"
	case len(t.inc.inputs) != len(t.routes):
		return "routes not kept"
	}
	for _, g := range t.gateways {
		if _, ok := t.hooksOf(g).(TableContributor); ok || g.backendCert != nil {
			return "a Gateway's profile or client certificate edits its table"
		}
	}
	for _, r := range t.routes {
		if defaultScope(r.useDefaultGateways) != "" {
			return "routes on default Gateways"
		}
	}
	return ""
}

// routeDelta is the difference between a patchable translation's routes
// and a snapshot's.
type routeDelta struct {
	// gone are the previous translation's routes that were removed or
	// changed, added the snapshot's routes that are new or changed.
	gone  map[*routeState]bool
	added []*gwv1.HTTPRoute
}

// diffRoutes compares the previous translation's HTTPRoutes with the
// snapshot's, both in namespace/name order: a route is changed when its
// object or its source is not the same. ok is false when they cannot be
// compared (not in order, two of one name) or more than max differ.
//
// An unchanged route is the same object at the same place in both lists,
// so the walk reads no name but the changed routes' (and their
// neighbours', to check the order): at 10,000 routes reading every
// route's name showed in profiles.
func (st *tableState) diffRoutes(s *Snapshot, max int) (d routeDelta, ok bool) {
	prev, inputs, in := st.t.routes, st.t.inc.inputs, s.HTTPRoutes
	d.gone = map[*routeState]bool{}
	i, j := 0, 0
	lastSame := false // in[j-1] is the same object as one of inputs
	for i < len(prev) || j < len(in) {
		if i < len(prev) && j < len(in) && inputs[i] == in[j] {
			if j > 0 && !lastSame && byName(in[j-1], in[j]) >= 0 {
				return d, false
			}
			if !sameSource(*prev[i].src, s.SourceOf(prev[i].key)) {
				d.gone[prev[i]] = true
				d.added = append(d.added, in[j])
			}
			i, j, lastSame = i+1, j+1, true
			continue
		}
		c := 0
		switch {
		case i == len(prev):
			c = 1
		case j == len(in):
			c = -1
		default:
			c = strings.Compare(prev[i].key.Namespace, in[j].Namespace)
			if c == 0 {
				c = strings.Compare(prev[i].key.Name, in[j].Name)
			}
		}
		if c >= 0 { // in[j] is taken: new or changed
			if j > 0 && byName(in[j-1], in[j]) >= 0 {
				return d, false
			}
			d.added = append(d.added, in[j])
			j, lastSame = j+1, false
		}
		if c <= 0 { // prev[i] is gone or changed
			d.gone[prev[i]] = true
			i++
		}
		if len(d.gone)+len(d.added) > max {
			return d, false
		}
	}
	return d, true
}

// hostRules are the rules of one listener's hostnames: the new routes'
// ones, and which hostnames changed.
type hostRules map[*listenerState]map[string][]rulePosition

func (h hostRules) touch(l *listenerState, host string) map[string][]rulePosition {
	m := h[l]
	if m == nil {
		m = map[string][]rulePosition{}
		h[l] = m
	}
	if _, ok := m[host]; !ok {
		m[host] = nil
	}
	return m
}

// patchTable returns the table of snap built from prev's, with only the
// virtual hosts the changed routes touch rebuilt, and how many it rebuilt;
// nil when prev cannot be patched (see the top of this file).
func patchTable(prev *Result, snap *Snapshot, opts Options) (*Table, int) {
	st, cache := prev.tables, prev.routeCache
	if st == nil || cache == nil || prev.Table == nil {
		return nil, 0
	}
	pt := st.t
	if len(snap.GRPCRoutes)+len(snap.TLSRoutes)+len(snap.TCPRoutes)+len(snap.UDPRoutes) > 0 ||
		!sameObjects(nonRouteObjects(snap, cache.others), cache.others) || !reflect.DeepEqual(cacheOptions(opts), cache.opts) {
		return nil, 0
	}
	d, ok := st.diffRoutes(snap, max(8, len(pt.routes)/4))
	if !ok {
		return nil, 0
	}
	// A translator of its own for the new routes (compiling and attaching
	// note findings and memoise profile verdicts), sharing the previous
	// one's read-only indices, listeners and Gateways.
	nt := *pt
	nt.notes, nt.effects, nt.conditionOwners, nt.xbackends = nil, nil, nil, nil
	nt.words = parentWords{} // the patch's own, pt's read only
	nt.routes, nt.inc = nil, incremental{}
	nt.prof = profileRun{byClass: maps.Clone(pt.prof.byClass), routeVerdicts: map[routeProfileKey]string{}, runs: maps.Clone(pt.prof.runs)}

	changed := hostRules{}
	for r := range d.gone {
		for _, p := range r.parents {
			for _, a := range p.attachments { // the accepted ones (finishParent)
				for _, h := range a.hosts {
					changed.touch(a.l, h)
				}
			}
		}
	}
	for _, o := range d.added {
		rt := RouteOf(o)
		r := newRouteState(rt, -1, snap.sourceRef(rt.Key()))
		if defaultScope(r.useDefaultGateways) != "" {
			return nil, 0
		}
		for _, ref := range r.parentRefs {
			if isCoreService(parentGroupKind(ref)) {
				return nil, 0
			}
		}
		nt.compileRoute(r)
		if !cacheable(r) {
			return nil, 0
		}
		for i, ref := range r.parentRefs {
			p := nt.attachRoute(r, i, ref)
			if p == nil || !decideAccepted(r, p) {
				continue
			}
			for _, a := range p.attachments {
				for _, h := range a.hosts {
					m := changed.touch(a.l, h)
					m[h] = r.appendPositions(m[h], h)
				}
			}
		}
	}
	return nt.patchListeners(prev.Table, changed, d.gone)
}

// patchListeners copies tab with the changed hostnames' virtual hosts
// rebuilt: the listeners holding them, their ports and Gateways are new
// copies, everything else is shared. It returns how many virtual hosts it
// rebuilt, added or removed.
func (t *translator) patchListeners(tab *Table, changed hostRules, gone map[*routeState]bool) (*Table, int) {
	out := &Table{Gateways: slices.Clone(tab.Gateways)}
	n := 0
	for l, hosts := range changed {
		if l.protocol != gwv1.HTTPProtocolType && l.protocol != gwv1.HTTPSProtocolType {
			return nil, 0 // an HTTPRoute is never attached there; be sure
		}
		gi, pi, li := findListener(out, l)
		if gi < 0 {
			continue // not programmed: not in the table, then or now
		}
		gt := *out.Gateways[gi]
		gt.Ports = slices.Clone(gt.Ports)
		pt := *gt.Ports[pi]
		pt.Listeners = slices.Clone(pt.Listeners)
		lt := *pt.Listeners[li]
		lt.VirtualHosts = t.patchVirtualHosts(&lt, l, hosts, gone)
		n += len(hosts)
		pt.Listeners[li] = &lt
		gt.Ports[pi] = &pt
		out.Gateways[gi] = &gt
	}
	return out, n
}

// findListener locates l's entry in tab (-1s: none).
func findListener(tab *Table, l *listenerState) (gi, pi, li int) {
	name := l.tableName()
	for gi, gt := range tab.Gateways {
		if gt.Mesh != nil || gt.Gateway != l.gateway.key {
			continue
		}
		for pi, pt := range gt.Ports {
			for li, lt := range pt.Listeners {
				if lt.Name == name {
					return gi, pi, li
				}
			}
		}
	}
	return -1, -1, -1
}

// patchVirtualHosts is lt's virtual hosts with those of the changed hosts
// rebuilt from l's previous rules for them (byHost) without the gone
// routes' and with the new ones (added), in virtualHosts' order.
func (t *translator) patchVirtualHosts(lt *ListenerTable, l *listenerState, added map[string][]rulePosition, gone map[*routeState]bool) []*VirtualHost {
	rebuilt := make(map[string]*VirtualHost, len(added))
	for h, rs := range added {
		var keep []rulePosition
		for _, p := range l.byHost[h] {
			if !gone[p.route] {
				keep = append(keep, p)
			}
		}
		keep = append(keep, rs...)
		if len(keep) == 0 {
			rebuilt[h] = nil
			continue
		}
		rebuilt[h] = t.virtualHost(lt.Name, l, h, keep)
	}
	out := make([]*VirtualHost, 0, len(lt.VirtualHosts)+len(rebuilt))
	for _, vh := range lt.VirtualHosts {
		if nv, ok := rebuilt[vh.Hostname]; ok {
			delete(rebuilt, vh.Hostname)
			if nv == nil {
				continue
			}
			vh = nv
		}
		out = append(out, vh)
	}
	for h, vh := range rebuilt {
		if vh == nil {
			continue
		}
		at := rankedHost{h, hostnameRank(h)}
		i, _ := slices.BinarySearchFunc(out, at, func(v *VirtualHost, at rankedHost) int {
			return compareRankedHosts(rankedHost{v.Hostname, hostnameRank(v.Hostname)}, at)
		})
		out = slices.Insert(out, i, vh)
	}
	if len(out) == 0 {
		return nil // as virtualHosts leaves it
	}
	return out
}
