package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine/table"
)

// ExplainNotDone lists what explain did not do that the data plane would,
// for the decision in t, and what the data plane's answer then depends on:
// the ExternalAuth servers explain did not ask, the backend it did not
// dial (nor its TLS handshake), the mirrors it did not send. gwdev's echo
// backend answers in process and needs no line. The lines are printed
// under "not done:" and are the JSON answer's notDone.
func ExplainNotDone(tab *table.Table, t *emulator.Trace) []string {
	if tab == nil || t == nil {
		return nil
	}
	var out []string
	if l := tableListener(tab, t.Listener); l != nil {
		for _, a := range l.PreRoutingAuth {
			if a != nil && askedBy(t, a.Name) {
				out = append(out, fmt.Sprintf("ExternalAuth at %s would be asked before routing (listener filters): explain does not call it; the data plane does, and a denial answers 403, as does an auth server that cannot be reached, times out or fails; the headers it allows are on the request when routes are matched",
					authTarget(a)))
			}
		}
	}
	rule := tableRule(tab, t.Rule)
	b := tableBackend(tab, t.Backend)
	if t.Status == 0 || t.Status/100 == 3 { // forwarded or redirected: past the filters
		var auths []*table.ExternalAuth
		if rule != nil {
			auths = append(auths, rule.ExternalAuth...)
		}
		if b != nil {
			auths = append(auths, b.ExternalAuth...)
		}
		for _, a := range auths {
			if a != nil && askedBy(t, a.Name) {
				out = append(out, fmt.Sprintf("ExternalAuth at %s would be asked: explain does not call it; the data plane does, and a denial answers 403, as does an auth server that cannot be reached, times out or fails",
					authTarget(a)))
			}
		}
	}
	if t.Status != 0 || b == nil || t.End == emulator.EndRefused {
		return out // the gateway answers itself: no backend is reached
	}
	if rule != nil {
		for _, m := range append(append([]*table.Backend{}, rule.Mirrors...), b.Mirrors...) {
			if m != nil && m.Target != nil {
				out = append(out, fmt.Sprintf("mirror to %s not sent: explain does not send it; the data plane sends a copy and ignores its answer", backendAt(m)))
			}
		}
	}
	if b.Target == nil {
		return out
	}
	tlsNote := ""
	if b.TLS != nil {
		tlsNote = fmt.Sprintf("the TLS handshake of BackendTLSPolicy %s not made: explain does not connect; a backend certificate that does not verify answers 502", b.TLS.Policy)
	}
	if b.Target.Kind == table.TargetPods { // each Pod's echo answers in process, in clear text
		return out
	}
	if b.Target.Kind == table.TargetEcho { // answers in process, but over TLS for real
		if tlsNote != "" {
			out = append(out, "echo backend "+backendAt(b)+": "+tlsNote)
		}
		return out
	}
	what, fails := "backend", "if nothing answers there the data plane answers 502"
	switch {
	case t.Proto == "UDP":
		what, fails = "UDP backend", "the data plane sends the datagrams there and relays the answers"
	case t.Method == "":
		fails = "if it cannot connect the data plane closes the client's connection"
	}
	line := fmt.Sprintf("%s %s not dialled: explain does not connect; %s", what, backendAt(b), fails)
	if tlsNote != "" {
		line += "; " + tlsNote
	}
	return append(out, line)
}

// askedBy reports whether the trace queued the ExternalAuth check named
// name.
func askedBy(t *emulator.Trace, name string) bool { return slices.Contains(t.AuthAsked, name) }

// authTarget names an ExternalAuth backend, where it is and the protocol.
func authTarget(a *table.ExternalAuth) string {
	if a.Backend == nil {
		return "(no backend) over " + a.Protocol
	}
	s := backendAt(a.Backend) + " over " + a.Protocol
	if tg := a.Backend.Target; tg != nil && tg.Kind == table.TargetEcho && tg.EchoAuthHeader != "" {
		s += " (gwdev's demo auth server: it allows requests with header " + tg.EchoAuthHeader + ")"
	}
	return s
}

// backendAt is "ns/name:port (kind addr, …)" for a resolved backend.
func backendAt(b *table.Backend) string {
	s := fmt.Sprintf("%s/%s:%d", b.Service.Namespace, b.Service.Name, b.Port)
	if tg := b.Target; tg != nil {
		where := tg.Kind
		if len(tg.Addresses) > 0 {
			where += " " + strings.Join(tg.Addresses, ", ")
		}
		s += " (" + where + ")"
	}
	return s
}

// tableRule finds the route rule match called name in tab (nil: none).
// tableListener finds the listener named name in the table (nil: none).
func tableListener(tab *table.Table, name string) *table.ListenerTable {
	var found *table.ListenerTable
	eachListener(tab, func(l *table.ListenerTable) {
		if found == nil && name != "" && l.Name == name {
			found = l
		}
	})
	return found
}

func tableRule(tab *table.Table, name string) *table.RouteRule {
	if name == "" {
		return nil
	}
	var found *table.RouteRule
	eachListener(tab, func(l *table.ListenerTable) {
		for _, vh := range l.VirtualHosts {
			for _, r := range vh.Rules {
				if found == nil && r != nil && r.Name == name {
					found = r
				}
			}
		}
	})
	return found
}

// tableBackend finds the backend called name in tab's route rules, TLS
// routes and stream routes (nil: none).
func tableBackend(tab *table.Table, name string) *table.Backend {
	if name == "" {
		return nil
	}
	var found *table.Backend
	pick := func(bs []*table.Backend) {
		for _, b := range bs {
			if found == nil && b != nil && b.Name == name {
				found = b
			}
		}
	}
	eachListener(tab, func(l *table.ListenerTable) {
		for _, vh := range l.VirtualHosts {
			for _, r := range vh.Rules {
				if r != nil {
					pick(r.Backends)
				}
			}
		}
		for _, r := range l.TLSRoutes {
			pick(r.Backends)
		}
		for _, r := range l.StreamRoutes {
			pick(r.Backends)
		}
	})
	return found
}

// eachListener calls f for every listener of tab.
func eachListener(tab *table.Table, f func(*table.ListenerTable)) {
	for _, g := range tab.Gateways {
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				if l != nil {
					f(l)
				}
			}
		}
	}
}
