package engine

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// meshAddressKey is the key of a mesh frontend in Result.addresses: it
// cannot clash with a Gateway's "<ns>/<name>" (names hold no ':').
func meshAddressKey(svc *Service, client string) string {
	k := "mesh:" + svc.Namespace + "/" + svc.Name
	if client != "" {
		k += "@" + client
	}
	return k
}

// meshFrontend is one loopback address of a Service: the one every client
// uses (client ""), or the one of a namespace with consumer routes.
type meshFrontend struct {
	ms     *meshService
	client string
	addr   string
}

// planMeshFrontends lists the frontends of the Services that keep mesh
// routes and gives each its address (t.meshFronts, t.meshAddresses).
func (t *translator) planMeshFrontends() {
	var fronts []*meshFrontend
	for _, ms := range t.meshServices() {
		fronts = append(fronts, &meshFrontend{ms: ms})
		for _, ns := range ms.clientNamespaces() {
			fronts = append(fronts, &meshFrontend{ms: ms, client: ns})
		}
	}
	t.assignMeshAddresses(fronts)
	t.meshFronts = fronts
}

// meshTables builds the mesh part of the routing table: for each Service a
// mesh route binds, one entry for every client, plus one per namespace with
// consumer routes for it (GEP-1294, "Multiple routes for a Service":
// requests from a namespace with consumer routes use those routes, requests
// from other namespaces the producer routes). Each entry serves every TCP
// port of the Service.
func (t *translator) meshTables() []*GatewayTable {
	out := make([]*GatewayTable, 0, len(t.meshFronts))
	for _, f := range t.meshFronts {
		out = append(out, t.meshTable(f))
	}
	return out
}

// assignMeshAddresses gives each frontend a loopback address from
// 127.0.10.1 on, away from the Gateways' (127.0.0.1 on, one per Gateway):
// the address it had in the previous translation when still free (as a
// Service keeps its ClusterIP), else the next free one in order.
func (t *translator) assignMeshAddresses(fronts []*meshFrontend) {
	used := map[string]bool{}
	for _, a := range t.addresses {
		used[a] = true
	}
	if t.addresses == nil {
		t.addresses = map[string]string{}
	}
	t.meshAddresses = map[string]string{}
	for _, f := range fronts {
		key := meshAddressKey(f.ms.svc, f.client)
		if prev := t.opts.previous[key]; prev != "" && !used[prev] {
			f.addr = prev
			used[prev] = true
			t.addresses[key] = prev
			t.meshAddresses[key] = prev
		}
	}
	next := 10*254 + 1 // 127.0.10.1
	for _, f := range fronts {
		if f.addr != "" {
			continue
		}
		f.addr = freeLoopback(used, &next)
		t.addresses[meshAddressKey(f.ms.svc, f.client)] = f.addr
		t.meshAddresses[meshAddressKey(f.ms.svc, f.client)] = f.addr
	}
}

// meshTable builds one frontend's table entry. A port gets, in order: the
// frontend's consumer routes bound to it, else the producer routes bound to
// it, else (no route binds it: "all traffic should implicitly work", GEP-1294
// "Route presence") the Service itself, over HTTP for an HTTP port and as a
// TCP stream otherwise.
func (t *translator) meshTable(f *meshFrontend) *GatewayTable {
	svc := f.ms.svc
	key := ObjectKey{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}
	name := "mesh/" + svc.Namespace + "/" + svc.Name
	if f.client != "" {
		name += "/from/" + f.client
	}
	gt := &GatewayTable{Name: name, Gateway: key, Source: t.source(key), Address: f.addr, Ports: []*PortTable{},
		Mesh: &table.MeshService{Service: key, ClientNamespace: f.client}}
	for i, sp := range svc.Spec.Ports {
		if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
			continue
		}
		lt := &ListenerTable{Name: name + "/port/" + itoa(int(sp.Port)), Owner: key, SectionName: sp.Name,
			Source: t.sourceAt(key, "spec.ports["+itoa(i)+"]"), Protocol: table.HTTPProtocolType}
		as := attachedOnPort(f.ms.consumers[f.client], sp.Port)
		if f.client == "" || len(as) == 0 {
			as = attachedOnPort(f.ms.producer, sp.Port)
		}
		switch {
		case len(as) > 0:
			lt.VirtualHosts = []*VirtualHost{meshVirtualHost(lt.Name, as)}
		case httpServicePort(sp):
			lt.VirtualHosts = []*VirtualHost{{Name: lt.Name + "/vhost/*", Rules: []*RouteRule{t.serviceItselfRule(lt, svc, sp)}}}
		default:
			lt.Protocol = table.TCPProtocolType
			lt.StreamRoutes = []*StreamRoute{{Name: lt.Name + "/service", Route: key, Source: lt.Source,
				Backends: []*Backend{t.serviceItself(lt.Name+"/service", svc, sp)}}}
		}
		gt.Ports = append(gt.Ports, &PortTable{Port: sp.Port, Transport: "TCP", Listeners: []*ListenerTable{lt}})
	}
	sort.SliceStable(gt.Ports, func(i, j int) bool { return gt.Ports[i].Port < gt.Ports[j].Port })
	return gt
}

// attachedOnPort lists the routes of as that apply to a Service port, each
// once.
func attachedOnPort(as []*meshAttachment, port int32) []*routeState {
	var out []*routeState
	seen := map[*routeState]bool{}
	for _, a := range as {
		for _, sp := range a.ports {
			if sp.Port == port && !seen[a.route] {
				seen[a.route] = true
				out = append(out, a.route)
			}
		}
	}
	return out
}

// meshVirtualHost holds the rules of the routes bound to one port, in the
// spec's precedence order; it matches any Host, since a mesh route matches
// by the Service's address.
func meshVirtualHost(listener string, routes []*routeState) *VirtualHost {
	var rs []rulePosition
	for _, r := range routes {
		for i, rr := range r.rules {
			rs = append(rs, rulePosition{rule: rr, route: r, order: i, pathLen: r.pathLens[i]})
		}
	}
	sortRules(rs)
	vh := &VirtualHost{Name: listener + "/vhost/*"}
	for _, p := range rs {
		vh.Rules = append(vh.Rules, p.rule)
	}
	return vh
}

// httpServicePort reports whether a Service port speaks HTTP (HTTP/1.1,
// h2c or gRPC), by its appProtocol or, without one, by its name
// ("http", "http-…", "grpc", "grpc-…", "h2c…").
func httpServicePort(sp corev1.ServicePort) bool {
	if sp.AppProtocol != nil {
		switch strings.ToLower(*sp.AppProtocol) {
		case "http", "http2", "h2c", "grpc", "kubernetes.io/h2c":
			return true
		}
		return false
	}
	n := strings.ToLower(sp.Name)
	for _, p := range []string{"http", "grpc", "h2c"} {
		if n == p || strings.HasPrefix(n, p+"-") {
			return true
		}
	}
	return false
}

// serviceItself is a backend that is the Service's own port: where a mesh
// sends a request no route takes.
func (t *translator) serviceItself(name string, svc *Service, sp corev1.ServicePort) *Backend {
	b := &Backend{Name: name + "/backend/0", Service: ObjectKey{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name},
		Port: sp.Port, Weight: 1, Target: t.backendTarget(svc, &sp, sp.Port)}
	if sp.AppProtocol != nil {
		b.AppProtocol = *sp.AppProtocol
	}
	return b
}

// serviceItselfRule is the one rule of an HTTP port no mesh route binds:
// every request goes to the Service itself.
func (t *translator) serviceItselfRule(lt *ListenerTable, svc *Service, sp corev1.ServicePort) *RouteRule {
	name := lt.Name + "/service"
	return &RouteRule{Name: name, Route: lt.Owner, Source: lt.Source,
		HTTP:     &table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix}}, // every path
		Backends: []*Backend{t.serviceItself(name, svc, sp)}}
}
