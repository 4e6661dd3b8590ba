package engine

// meshFrontends adds one node per Service that has mesh frontends in the
// routing table (ID "service/<ns>/<name>", apart from the backend nodes'
// "service/<ns>/<name>:<port>"): the parent its mesh routes hang from, with
// the addresses gwdev serves it on.
func (b *graphBuilder) meshFrontends(r *Result) {
	if r.Table == nil {
		return
	}
	for _, gt := range r.Table.Gateways {
		if gt.Mesh == nil {
			continue
		}
		svc := gt.Mesh.Service
		id := graphID(svc)
		n := b.nodes[id]
		if n == nil {
			n = b.node(&GraphNode{ID: id, Kind: "Mesh", Label: "Mesh Service " + svc.Namespace + "/" + svc.Name, Object: svc})
		}
		addr := gt.Address
		if gt.Mesh.ClientNamespace != "" {
			addr += " (from " + gt.Mesh.ClientNamespace + ")"
		}
		if n.Detail != "" {
			addr = n.Detail + ", " + addr
		}
		n.Detail = addr
	}
}
