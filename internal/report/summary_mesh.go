package report

import (
	"fmt"
	"io"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

// isMeshParent reports whether a route parent status is gwdev's mesh's (the
// parent is a Service).
func isMeshParent(p gwv1.RouteParentStatus) bool {
	return string(p.ControllerName) == engine.MeshControllerName
}

// meshParents splits a route's parent statuses into Gateway ones and mesh
// ones, keeping their order.
func meshParents(ps []gwv1.RouteParentStatus) (gateway, mesh []gwv1.RouteParentStatus) {
	for _, p := range ps {
		if isMeshParent(p) {
			mesh = append(mesh, p)
		} else {
			gateway = append(gateway, p)
		}
	}
	return gateway, mesh
}

// printMesh writes the mesh section of `gwdev check`: each Service a mesh
// route binds with its frontend addresses and ports (from the routing
// table: what `gwdev up` serves), then every route with a Service parent
// and that parent's status.
func printMesh(w io.Writer, res *engine.Result) {
	var rs []routeView
	res.Objects.EachRoute(func(r engine.Route) {
		if _, mesh := meshParents(r.RouteStatus().Parents); len(mesh) > 0 {
			k := r.Key()
			rs = append(rs, routeView{k.Kind, k.Namespace, k.Name, r.Hostnames(), mesh})
		}
	})
	if len(rs) == 0 && len(res.Objects.XMeshes) == 0 {
		return
	}
	fmt.Fprintln(w, "\nMesh (routes whose parent is a Service, controller "+engine.MeshControllerName+"):")
	for _, m := range res.Objects.XMeshes {
		state := "not gwdev's (controller " + string(m.Spec.ControllerName) + ")"
		if string(m.Spec.ControllerName) == engine.MeshControllerName {
			state = Badges(m.Status.Conditions, "Accepted")
		}
		fmt.Fprintf(w, "  XMesh %s  %s\n", m.Name, state)
	}
	for _, g := range res.Table.Gateways {
		if g.Mesh == nil {
			continue
		}
		var ports []string
		for _, p := range g.Ports {
			proto := "-"
			if len(p.Listeners) > 0 {
				proto = string(p.Listeners[0].Protocol)
			}
			ports = append(ports, fmt.Sprintf("%d (%s)", p.Port, proto))
		}
		who := "clients in every namespace without consumer routes for it"
		if g.Mesh.ClientNamespace != "" {
			who = "clients in namespace " + g.Mesh.ClientNamespace + " (its consumer routes)"
		}
		fmt.Fprintf(w, "  Service %s/%s  address %s  ports %s  for %s\n", g.Mesh.Service.Namespace, g.Mesh.Service.Name,
			g.Address, strings.Join(ports, ", "), who)
	}
	for _, r := range rs {
		fmt.Fprintf(w, "  %s %s/%s\n", r.kind, r.ns, r.name)
		for _, p := range r.parents {
			ns := r.ns
			if p.ParentRef.Namespace != nil {
				ns = string(*p.ParentRef.Namespace)
			}
			role := "producer route"
			if ns != r.ns {
				role = "consumer route: requests from " + r.ns
			}
			target := fmt.Sprintf("Service %s/%s%s", ns, p.ParentRef.Name, parentPortText(p.ParentRef))
			fmt.Fprintf(w, "    → %s  (%s)  %s\n", target, role, Badges(p.Conditions, "Accepted", "ResolvedRefs"))
		}
	}
}

// parentPortText renders a parentRef's sectionName and port (" port 80").
func parentPortText(ref gwv1.ParentReference) string {
	s := ""
	if ref.SectionName != nil {
		s += " sectionName " + string(*ref.SectionName)
	}
	if ref.Port != nil {
		s += fmt.Sprintf(" port %d", *ref.Port)
	}
	return s
}
