package engine

import (
	corev1 "k8s.io/api/core/v1"
)

// routeTransport is the Service port protocol a route kind's traffic uses:
// UDP for UDPRoute, TCP for every other kind.
func routeTransport(routeKind string) corev1.Protocol {
	if RoutesDatagrams(routeKind) {
		return corev1.ProtocolUDP
	}
	return corev1.ProtocolTCP
}

// servicePort finds the Service port a backendRef of the route kind uses:
// the port number with the route's transport protocol (a Service may
// declare one number for TCP and UDP). other is a port with the number but
// another protocol, when there is no match.
func servicePort(svc *Service, port int32, routeKind string) (sp, other *corev1.ServicePort) {
	want := routeTransport(routeKind)
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.Port != port {
			continue
		}
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		if proto == want {
			return p, nil
		}
		if other == nil {
			other = p
		}
	}
	return nil, other
}
