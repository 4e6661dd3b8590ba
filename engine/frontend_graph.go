package engine

import "fmt"

// ingressClasses adds the ingress-nginx classes of the routing table: the
// class (ID "ingressclass//<name>", with its address) → its listeners →
// the Ingresses served on them (labelled with the host) → one node per
// location rule → backend Services. The default backend's rules hang from
// the listener itself.
func (b *graphBuilder) ingressClasses(r *Result) {
	if r.Table == nil {
		return
	}
	for _, gt := range r.Table.Gateways {
		if gt.Gateway.Kind != "IngressClass" {
			continue
		}
		cid := graphID(gt.Gateway)
		b.node(&GraphNode{ID: cid, Kind: "IngressClass", Label: "IngressClass " + gt.Gateway.Name + " (ingress-nginx)", Detail: gt.Address, Object: gt.Gateway})
		for _, p := range gt.Ports {
			for _, l := range p.Listeners {
				b.node(&GraphNode{ID: l.Name, Kind: "Listener", Label: "listener " + l.SectionName, Detail: fmt.Sprintf("%s %d", l.Protocol, p.Port), Object: gt.Gateway})
				b.edge(GraphEdge{From: cid, To: l.Name})
				for _, vh := range l.VirtualHosts {
					for _, rr := range vh.Rules {
						b.ingressRule(l.Name, vh, rr)
					}
				}
			}
		}
	}
}

// ingressRule adds one rule of an ingress-nginx virtual host under its
// Ingress (or the listener, for the default backend).
func (b *graphBuilder) ingressRule(listener string, vh *VirtualHost, rr *RouteRule) {
	parent := listener
	host := vh.Hostname
	if host == "" {
		host = "any host"
	}
	if rr.Route.Kind == "Ingress" {
		parent = graphID(rr.Route)
		b.node(&GraphNode{ID: parent, Kind: "Ingress", Label: "Ingress " + rr.Route.Namespace + "/" + rr.Route.Name, Object: rr.Route})
		b.edge(GraphEdge{From: listener, To: parent, Label: host})
	}
	n := &GraphNode{ID: rr.Name, Kind: "Rule", Label: describeMatch(rr, nil), Detail: host, Object: rr.Route}
	switch {
	case rr.DirectStatus == 404:
		n.Detail += ", answered 404 (default backend)"
	case rr.DirectStatus != 0:
		n.Problem = rr.DirectReason
	}
	b.node(n)
	b.edge(GraphEdge{From: parent, To: rr.Name})
	b.backends(rr.Name, rr.Backends)
}
