package tui

import (
	"fmt"
	"strconv"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

// routeObject is a route of any kind, reduced to what the Routes view shows.
type routeObject struct {
	key        engine.ObjectKey
	hostnames  []gwv1.Hostname
	parentRefs []gwv1.ParentReference
	parents    []gwv1.RouteParentStatus
	http       *gwv1.HTTPRoute // set for HTTPRoutes, to show rules that are not served
	// servedBy is, for an Ingress, the IngressClass table entry serving it
	// (nil: not served, or not an Ingress).
	servedBy *engine.GatewayTable
}

// eachRoute calls fn for every route of the snapshot, kind by kind.
func eachRoute(s *engine.Snapshot, fn func(routeObject)) {
	s.EachRoute(func(r engine.Route) {
		http, _ := r.Object().(*gwv1.HTTPRoute)
		fn(routeObject{key: r.Key(), hostnames: r.Hostnames(), parentRefs: r.ParentRefs(),
			parents: r.RouteStatus().Parents, http: http})
	})
}

// entryLabel names a table entry of a route: "rule 3 · match 1", or
// "rule 3" for kinds without matches.
func entryLabel(e *engine.ServedEntry) string {
	if e.Rule < 0 {
		return "location" // a front end's entry (an Ingress path)
	}
	if e.Match < 0 {
		return "rule " + strconv.Itoa(e.Rule)
	}
	return "rule " + strconv.Itoa(e.Rule) + " · match " + strconv.Itoa(e.Match)
}

// parentName renders a parentRef as Kind ns/name[/section][:port].
func parentName(routeNS string, p gwv1.ParentReference) string {
	kind := "Gateway"
	if p.Kind != nil {
		kind = string(*p.Kind)
	}
	ns := routeNS
	if p.Namespace != nil {
		ns = string(*p.Namespace)
	}
	s := kind + " " + ns + "/" + string(p.Name)
	if p.SectionName != nil {
		s += "/" + string(*p.SectionName)
	}
	if p.Port != nil {
		s += ":" + strconv.Itoa(int(*p.Port))
	}
	return s
}

// parentCell renders a parentRef for a table cell: ns/name[/section][:port]
// for a Gateway, the kind first for anything else.
func parentCell(routeNS string, p gwv1.ParentReference) string {
	s := parentName(routeNS, p)
	return strings.TrimPrefix(s, "Gateway ")
}

// describeMatch renders an HTTP or gRPC match on one line.
func describeMatch(r *engine.RouteRule) string {
	var parts []string
	if m := r.HTTP; m != nil {
		parts = append(parts, m.Path.String())
		if m.Method != "" {
			parts = append(parts, "method "+m.Method)
		}
		for _, h := range m.Headers {
			parts = append(parts, "header "+h.Name+"="+h.Value)
		}
		for _, q := range m.QueryParams {
			parts = append(parts, "query "+q.Name+"="+q.Value)
		}
	}
	if m := r.GRPC; m != nil {
		if m.Service != "" || m.Method != "" {
			svc, meth := "*", "*"
			if m.Service != "" {
				svc = m.Service
			}
			if m.Method != "" {
				meth = m.Method
			}
			parts = append(parts, "gRPC "+svc+"/"+meth)
		} else {
			parts = append(parts, "gRPC any method")
		}
		for _, h := range m.Headers {
			parts = append(parts, "header "+h.Name+"="+h.Value)
		}
	}
	if len(parts) == 0 {
		return "any request"
	}
	return strings.Join(parts, ", ")
}

// describeBackend renders a backend and what it resolved to.
func describeBackend(b *engine.Backend) (string, bool) {
	svc := strings.TrimPrefix(b.Service.String(), "Service/")
	if b.Port != 0 {
		svc += ":" + strconv.Itoa(int(b.Port))
	}
	s := fmt.Sprintf("Service %s weight %d", svc, b.Weight)
	if b.Invalid != "" {
		return s + " ✗ " + b.Invalid, false
	}
	if t := b.Target; t != nil {
		s += " → " + t.Kind
		if len(t.Addresses) > 0 {
			s += " " + strings.Join(t.Addresses, ",")
		}
		if t.Why != "" {
			s += " (" + t.Why + ")"
		}
	}
	if b.TLS != nil {
		s += " · TLS " + b.TLS.SNI + " (" + b.TLS.Policy + ")"
	}
	return s, true
}
