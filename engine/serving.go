package engine

import "sort"

// RouteServing is what the routing table does with one route: which table
// entries serve its rules and where, and which rules gwdev left out. The
// engine records it while translating so that the TUI, `check` and
// `explain` read it instead of walking the table again.
type RouteServing struct {
	// Entries are the route's table entries, each once: HTTPRoute and
	// GRPCRoute entries in rule and match order, TLSRoute, TCPRoute and
	// UDPRoute entries in table order (empty: the route is not served).
	Entries []*ServedEntry
	// Places are the virtual hosts (HTTP and GRPC routes) or listeners
	// (TLS, TCP and UDP routes) serving an entry of the route, each once, in
	// table order.
	Places []Place
	// Dropped are the rules left out of the table because gwdev cannot
	// implement them, in rule order (nil: none).
	Dropped []DroppedRule
}

// ServedEntry is one table entry of a route with where it is served.
type ServedEntry struct {
	// Name is the entry's table name (".../rule/<i>[/match/<j>]").
	Name string
	// Rule is the index of the rule in spec.rules (-1: the entry is a
	// front end's, such as an Ingress path's location).
	Rule int
	// Match is the index of the match in the rule's matches (-1: the kind
	// has no matches, or a front end's entry).
	Match int
	// HTTP, SNI or Stream is the entry as the table holds it (its first
	// occurrence), by kind: HTTPRoute and GRPCRoute, TLSRoute, TCPRoute and
	// UDPRoute.
	HTTP   *RouteRule
	SNI    *SNIRoute
	Stream *StreamRoute
	// ServedOn names the virtual hosts or listeners serving the entry, in
	// table order (a name once per occurrence).
	ServedOn []string
}

// Place is a virtual host or listener that serves a route.
type Place struct {
	// Listener is the listener's table name.
	Listener string
	// Port is the listener's port.
	Port int32
	// VirtualHost is the virtual host's table name ("": the route is served
	// by the listener itself, as TLS, TCP and UDP routes are).
	VirtualHost string
	// Hostname is the virtual host's hostname ("": any host, or no virtual
	// host).
	Hostname string
}

// DroppedRule is a rule left out of the table, with why.
type DroppedRule struct {
	// Rule is the index of the rule in spec.rules.
	Rule int
	// Name is the rule's spec name ("": none).
	Name string
	// Why says what gwdev cannot implement, with the field path.
	Why string
}

// entryIndex is the rule and match index of the table entry name.
type entryIndex struct {
	rule, match int
}

// entryAt returns the rule and match index of the entry name among the
// route's compiled entries (zero when unknown). Each compiled entry knows
// its own (Index); a list of names beside them was 0.9 MB for 10,000
// HTTPRoutes.
func (r *routeState) entryAt(name string) entryIndex {
	for _, e := range r.rules {
		if e.Name == name && e.Index != nil {
			return entryIndex{e.Index.Rule, e.Index.Match}
		}
	}
	for _, e := range r.sni {
		if e.Name == name && e.Index != nil {
			return entryIndex{e.Index.Rule, e.Index.Match}
		}
	}
	for _, e := range r.stream {
		if e.Name == name && e.Index != nil {
			return entryIndex{e.Index.Rule, e.Index.Match}
		}
	}
	return entryIndex{}
}

// routeServing walks the table once and records, for every route, its
// entries, where they are served and the rules it dropped.
func (t *translator) routeServing(tab *Table) map[ObjectKey]*RouteServing {
	out := make(map[ObjectKey]*RouteServing, len(t.routes))
	states := make(map[ObjectKey]*routeState, len(t.routes))
	for _, r := range t.routes {
		rs := &RouteServing{}
		for _, d := range r.dropped {
			rs.Dropped = append(rs.Dropped, DroppedRule{Rule: d.index, Name: d.name, Why: d.why})
		}
		out[r.key] = rs
		states[r.key] = r
	}
	entries := map[string]*ServedEntry{}
	serve := func(route ObjectKey, name string, pl Place, on string, set func(*ServedEntry)) {
		rs := out[route]
		if rs == nil {
			if route.Kind == "" {
				return
			}
			// A front end's object (an Ingress, an IngressClass's default
			// backend): served by the table, its entries not compiled from
			// route rules.
			rs = &RouteServing{}
			out[route] = rs
		}
		e := entries[name]
		if e == nil {
			at := entryIndex{-1, -1}
			if st := states[route]; st != nil {
				at = st.entryAt(name)
			}
			e = &ServedEntry{Name: name, Rule: at.rule, Match: at.match}
			set(e)
			entries[name] = e
			rs.Entries = append(rs.Entries, e)
		}
		e.ServedOn = append(e.ServedOn, on)
		rs.Places = appendPlace(rs.Places, pl)
	}
	for _, g := range tab.Gateways {
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				for _, vh := range l.VirtualHosts {
					pl := Place{Listener: l.Name, Port: p.Port, VirtualHost: vh.Name, Hostname: vh.Hostname}
					for _, r := range vh.Rules {
						serve(r.Route, r.Name, pl, vh.Name, func(e *ServedEntry) { e.HTTP = r })
					}
				}
				pl := Place{Listener: l.Name, Port: p.Port}
				for _, r := range l.TLSRoutes {
					serve(r.Route, r.Name, pl, l.Name, func(e *ServedEntry) { e.SNI = r })
				}
				for _, r := range l.StreamRoutes {
					serve(r.Route, r.Name, pl, l.Name, func(e *ServedEntry) { e.Stream = r })
				}
			}
		}
	}
	for _, rs := range out {
		sort.SliceStable(rs.Entries, func(i, j int) bool {
			a, b := rs.Entries[i], rs.Entries[j]
			if a.HTTP == nil || b.HTTP == nil {
				return false
			}
			return a.Rule < b.Rule || a.Rule == b.Rule && a.Match < b.Match
		})
	}
	return out
}

// appendPlace adds pl unless it is listed already.
func appendPlace(ps []Place, pl Place) []Place {
	for _, p := range ps {
		if p == pl {
			return ps
		}
	}
	return append(ps, pl)
}
