package engine

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// Backends that loop into gwdev: a backend, mirror, ExternalAuth or error
// backend, or an XTelemetryPolicy's OTLP receiver, whose target address (a --backend mapping, an EndpointSlice, an
// ExternalName) is the address and port of one of the table's own
// listeners sends its requests back into gwdev. Chaining one Gateway into
// another can be meant, so it is a warning, not a refusal; the data plane
// bounds the loop (a request that passed through gwdev is never mirrored
// again, and after a few passes it is answered 508 Loop Detected). The
// comparison needs both the Gateways' addresses (assignAddresses) and the
// resolved targets (backendTarget), so it runs on the built table.

// ReasonLoopsIntoGwdev is the Reason of the findings about a backend that
// resolves to one of gwdev's own listeners (a gwdev finding, not a status
// condition reason).
const ReasonLoopsIntoGwdev = "LoopsIntoGwdev"

// otlpReceiver names an XTelemetryPolicy's receiver in the findings.
const otlpReceiver = "OTLP receiver"

// ownListener is a listener port of the table, by the address clients
// reach it at.
type ownListener struct {
	gateway *GatewayTable
	port    *PortTable
	// offset is set when the address is the port's fallback (port +
	// PortOffset), where the data plane serves a port it cannot bind.
	offset bool
}

// portOffset is the data plane's fallback offset Options asks for (0:
// table.DefaultPortOffset; negative: none).
func (o Options) portOffset() int32 {
	switch {
	case o.PortOffset < 0:
		return 0
	case o.PortOffset == 0:
		return table.DefaultPortOffset
	}
	return o.PortOffset
}

// noteSelfTargets warns about every backend of the table whose target is
// one of the table's own listeners.
func (t *translator) noteSelfTargets(tab *Table) {
	if tab == nil {
		return
	}
	own := ownListeners(tab, t.opts.portOffset())
	if len(own) == 0 {
		return
	}
	seen := map[string]bool{}
	check := func(route ObjectKey, src Source, idx *table.RuleIndex, what string, b *Backend) {
		if b == nil || b.Target == nil {
			return
		}
		for _, addr := range b.Target.Addresses {
			ol, ok := own[ownAddress(addr)]
			if !ok {
				continue
			}
			key := route.String() + "\x00" + b.Name + "\x00" + addr
			if seen[key] {
				continue // one rule served by several listeners
			}
			seen[key] = true
			scope, field := "", ""
			if idx != nil {
				scope, field = fmt.Sprintf("rules[%d]", idx.Rule), fmt.Sprintf("spec.rules[%d]", idx.Rule)
			}
			t.notes = append(t.notes, Finding{Severity: SeverityWarning, Object: route, Source: src, Scope: scope, Field: field,
				Reason: ReasonLoopsIntoGwdev, Message: selfTargetMessage(what, b, addr, ol)})
		}
	}
	rule := func(r *RouteRule) {
		for _, b := range r.Backends {
			check(r.Route, r.Source, r.Index, "backend", b)
			for _, m := range b.Mirrors {
				check(r.Route, r.Source, r.Index, "mirror", m)
			}
		}
		for _, m := range r.Mirrors {
			check(r.Route, r.Source, r.Index, "mirror", m)
		}
		for _, a := range r.ExternalAuth {
			check(r.Route, r.Source, r.Index, "ExternalAuth backend", a.Backend)
		}
		if r.ErrorPages != nil {
			check(r.Route, r.Source, r.Index, "error backend", r.ErrorPages.Backend)
		}
	}
	for _, g := range tab.Gateways {
		if g == nil || g.Tracing == nil || g.Tracing.Exporter.Target == nil {
			continue
		}
		// Each export is a request gwdev serves, spans and exports again.
		e := g.Tracing.Exporter
		ns, name, _ := strings.Cut(g.Tracing.Policy, "/")
		policy := ObjectKey{Kind: "XTelemetryPolicy", Namespace: ns, Name: name}
		check(policy, t.source(policy), nil, otlpReceiver, &Backend{Service: e.Service, Port: e.Port, Target: e.Target})
	}
	EachListener(tab, func(l *ListenerTable) {
		for _, vh := range l.VirtualHosts {
			for _, r := range vh.Rules {
				rule(r)
			}
		}
		for _, s := range l.TLSRoutes {
			for _, b := range s.Backends {
				check(s.Route, s.Source, s.Index, "backend", b)
			}
		}
		for _, s := range l.StreamRoutes {
			for _, b := range s.Backends {
				check(s.Route, s.Source, s.Index, "backend", b)
			}
		}
	})
}

// ownListeners maps the addresses of the table's listener ports
// ("ip:port", and "ip:port+offset" for the fallback) to the port.
func ownListeners(tab *Table, offset int32) map[string]ownListener {
	own := map[string]ownListener{}
	for _, g := range tab.Gateways {
		if g == nil || g.Address == "" {
			continue
		}
		for _, p := range g.Ports {
			if p == nil || len(p.Listeners) == 0 {
				continue
			}
			exact := net.JoinHostPort(g.Address, strconv.Itoa(int(p.Port)))
			own[ownAddress(exact)] = ownListener{gateway: g, port: p}
			if offset > 0 && p.Port+offset <= 65535 {
				k := ownAddress(net.JoinHostPort(g.Address, strconv.Itoa(int(p.Port+offset))))
				if _, taken := own[k]; !taken {
					own[k] = ownListener{gateway: g, port: p, offset: true}
				}
			}
		}
	}
	return own
}

// ownAddress is a host:port as compared with the listeners' addresses:
// "localhost" is 127.0.0.1, an IPv4-mapped IPv6 address its IPv4 form.
func ownAddress(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip != nil {
		if v4 := ip.To4(); v4 != nil {
			host = v4.String()
		}
	}
	return net.JoinHostPort(host, port)
}

// selfTargetMessage words a finding: the target and how it resolved, the
// listener it loops into, what gwdev does about it and how to fix it.
func selfTargetMessage(what string, b *Backend, addr string, ol ownListener) string {
	l := ol.port.Listeners[0]
	where := fmt.Sprintf("%s %s/%s listener %q (%s port %d at %s)", l.Owner.Kind, l.Owner.Namespace, l.Owner.Name, l.SectionName,
		l.Protocol, ol.port.Port, net.JoinHostPort(ol.gateway.Address, strconv.Itoa(int(ol.port.Port))))
	if ol.offset {
		where += ", served on " + addr + " when gwdev cannot bind port " + strconv.Itoa(int(ol.port.Port))
	}
	then := "its requests come back into gwdev, and a route that sends them there again loops (gwdev never mirrors a request twice " +
		"and answers 508 Loop Detected after a few passes); map the Service to the real backend (gwdev.yaml backends: or --backend " +
		"ns/name:port=host:port) unless chaining into that listener is meant"
	if what == otlpReceiver {
		then = "every export is a request through gwdev that makes a span of its own, so exports never stop; " +
			"map the Service to a real OTLP receiver (gwdev.yaml backends: or --backend ns/name:port=host:port)"
	}
	return fmt.Sprintf("%s %s/%s:%d resolves to %s (%s), which is gwdev's own %s: %s",
		what, b.Service.Namespace, b.Service.Name, b.Port, addr, b.Target.Why, where, then)
}
