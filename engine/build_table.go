package engine

import (
	"cmp"
	"slices"
	"sort"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// buildTable assembles the routing table from programmed listeners and the
// routes attached to them.
func (t *translator) buildTable() *Table {
	tab := &Table{Gateways: []*GatewayTable{}}
	for _, g := range t.gateways {
		if g.addr == "" || !g.accepted() || g.cond.isFalse(string(gwv1.GatewayConditionProgrammed)) {
			continue
		}
		gt := &GatewayTable{Name: "gateway/" + g.key.Namespace + "/" + g.key.Name, Gateway: g.key,
			Source: t.source(g.key), Address: g.addr, Ports: []*PortTable{}}
		ports := map[string]*PortTable{}
		for _, l := range g.merged {
			if !l.programmed() {
				continue
			}
			tr := transportOf(l.protocol)
			pk := tr + "/" + itoa(int(l.port))
			pt := ports[pk]
			if pt == nil {
				pt = &PortTable{Port: l.port, Transport: tr}
				ports[pk] = pt
				gt.Ports = append(gt.Ports, pt)
			}
			pt.Listeners = append(pt.Listeners, t.listenerTable(l))
		}
		sort.SliceStable(gt.Ports, func(i, j int) bool {
			if gt.Ports[i].Port != gt.Ports[j].Port {
				return gt.Ports[i].Port < gt.Ports[j].Port
			}
			return gt.Ports[i].Transport < gt.Ports[j].Transport
		})
		for _, pt := range gt.Ports {
			sort.SliceStable(pt.Listeners, func(i, j int) bool { return hostnameLess(pt.Listeners[i].Hostname, pt.Listeners[j].Hostname) })
		}
		if g.backendCert != nil {
			presentClientCertificate(gt, g.backendCert)
		}
		t.profileGatewayTable(g, gt)
		gt.Tracing = t.tracing[g.key] // xtelemetrypolicy.go
		tab.Gateways = append(tab.Gateways, gt)
	}
	tab.Gateways = append(tab.Gateways, t.meshTables()...)
	tab.Gateways = append(tab.Gateways, t.frontEndTables()...) // frontend.go
	return tab
}

// listenerTable builds one listener's table entry.
func (t *translator) listenerTable(l *listenerState) *ListenerTable {
	owner := l.ownerKey()
	lt := &ListenerTable{Name: l.tableName(), Owner: owner, SectionName: l.name, Source: t.sourceAt(owner, "spec.listeners["+itoa(l.index)+"]"),
		Protocol: table.ProtocolType(l.protocol), Hostname: l.hostname, TLS: l.tlsTable,
		PreRoutingAuth: l.preAuth, PreRoutingRefused: l.preRefused}
	switch l.protocol {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType:
		lt.VirtualHosts = t.virtualHosts(lt.Name, l)
	case gwv1.TLSProtocolType:
		lt.TLSRoutes = t.sniRoutes(l)
	case gwv1.TCPProtocolType, gwv1.UDPProtocolType:
		lt.StreamRoutes = t.streamRoutes(l)
	}
	t.profileListenerTable(l, lt)
	return lt
}

// virtualHosts groups the rules of attached HTTP and gRPC routes by the
// hostname they serve on this listener, most specific hostname first.
func (t *translator) virtualHosts(listener string, l *listenerState) []*VirtualHost {
	byHost := l.rulesByHost()
	// Sorted as hostnameLess orders them, each host's rank computed once
	// (at 10,000 hosts, sort.Slice calling hostnameLess was a quarter of
	// this function).
	hosts := make([]rankedHost, 0, len(byHost))
	for h := range byHost {
		hosts = append(hosts, rankedHost{h, hostnameRank(h)})
	}
	slices.SortFunc(hosts, compareRankedHosts)
	var out []*VirtualHost
	if len(hosts) > 0 {
		out = make([]*VirtualHost, 0, len(hosts))
	}
	for _, rh := range hosts {
		out = append(out, t.virtualHost(listener, l, rh.name, byHost[rh.name]))
	}
	// Kept for the next translation, which rebuilds only the hosts whose
	// routes changed (incremental_table.go); each list is sorted by now.
	// A translation that keeps no cache (Translate, check) has no next
	// one: 2 MB for 10,000 routes' rules is not held to its end.
	if t.inc.next != nil {
		l.byHost = byHost
	}
	return out
}

// rulesByHost groups the rules of the HTTP and gRPC routes attached to l
// by the hostname they serve there (unsorted).
func (l *listenerState) rulesByHost() map[string][]rulePosition {
	byHost := make(map[string][]rulePosition, len(l.attachments)) // a size hint: often one host per route
	for _, a := range l.attachments {
		if !RoutesRequests(a.route.kind) {
			continue
		}
		for _, h := range a.hosts {
			if len(a.route.rules) > 0 { // a host no rule serves has no vhost
				byHost[h] = a.route.appendPositions(byHost[h], h)
			}
		}
	}
	return byHost
}

// appendPositions appends to rs the route's rules as served on hostname h.
func (r *routeState) appendPositions(rs []rulePosition, h string) []rulePosition {
	rank := hostnameRank(routeHostnameFor(r, h))
	// Grown once: a host's first route's rules were one allocation per
	// doubling (0.5 MB more for 10,000 routes of two rules, at the end of
	// check's translation).
	rs = slices.Grow(rs, len(r.rules))
	for i, rr := range r.rules {
		rs = append(rs, rulePosition{rule: rr, route: r, order: i, pathLen: r.pathLens[i], hostRank: rank})
	}
	return rs
}

// virtualHost builds the virtual host of hostname h on listener l from the
// rules that serve h there, which it sorts by precedence.
func (t *translator) virtualHost(listener string, l *listenerState, h string, rs []rulePosition) *VirtualHost {
	sortRules(rs)
	vh := &VirtualHost{Name: listener + "/vhost/" + displayVHost(h), Hostname: h, Rules: make([]*RouteRule, 0, len(rs))}
	for _, p := range rs {
		vh.Rules = append(vh.Rules, t.profileRule(l, h, p.route, p.rule))
	}
	return vh
}

// rankedHost is a virtual host's hostname with its hostnameRank.
type rankedHost struct {
	name string
	rank int
}

// compareRankedHosts orders virtual hosts as hostnameLess orders their
// hostnames: most specific first.
func compareRankedHosts(a, b rankedHost) int {
	return cmp.Or(cmp.Compare(b.rank, a.rank), cmp.Compare(a.name, b.name))
}

func displayVHost(h string) string {
	if h == "" {
		return "*"
	}
	return h
}

// sniRoutes lists TLSRoute rules for a TLS listener, one entry per served
// hostname, most specific hostname first, then oldest route; so the first
// entry whose hostname matches a connection's SNI is the one to use, even
// when one route serves both an exact and a wildcard hostname.
func (t *translator) sniRoutes(l *listenerState) []*SNIRoute {
	type entry struct {
		r     *SNIRoute
		route *routeState
		best  string
		rank  int // hostnameRank of the route's own hostname (routeHostnameFor)
	}
	var es []entry
	for _, a := range l.attachments {
		if RouteFamilyOf(a.route.kind) != RouteFamilySNI {
			continue
		}
		for _, h := range a.hosts {
			for _, s := range a.route.sni {
				c := *s
				c.Hostnames = []string{h}
				es = append(es, entry{&c, a.route, h, hostnameRank(routeHostnameFor(a.route, h))})
			}
		}
	}
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].best != es[j].best {
			return hostnameLess(es[i].best, es[j].best)
		}
		if es[i].rank != es[j].rank { // GatewayRouteHostnameIntersectionPrecedence, as sortRules
			return es[i].rank > es[j].rank
		}
		return es[i].route != es[j].route && olderFirst(es[i].route.obj, es[j].route.obj)
	})
	out := make([]*SNIRoute, 0, len(es))
	for _, e := range es {
		out = append(out, e.r)
	}
	return out
}

// streamRoutes lists TCPRoute/UDPRoute rules, oldest route first.
func (t *translator) streamRoutes(l *listenerState) []*StreamRoute {
	var rs []*routeState
	for _, a := range l.attachments {
		if RouteFamilyOf(a.route.kind) == RouteFamilyStream {
			rs = append(rs, a.route)
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return olderFirst(rs[i].obj, rs[j].obj) })
	var out []*StreamRoute
	for _, r := range rs {
		if RoutesDatagrams(r.kind) != (l.protocol == gwv1.UDPProtocolType) {
			continue
		}
		out = append(out, r.stream...)
	}
	return out
}
