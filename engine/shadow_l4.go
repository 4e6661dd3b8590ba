package engine

import (
	"fmt"
)

// Shadowed L4 rules: on a TCP or UDP listener only the first rule of the
// first route (the oldest, then by namespace/name) serves connections; on a
// TLS listener, of the entries for one SNI hostname only the first (the
// oldest route) does. The others are Accepted, counted in attachedRoutes,
// and never get a connection: a warning finding each, like shadowed HTTP
// matches.

// noteShadowedL4 adds the warnings for every listener of the table.
func (t *translator) noteShadowedL4(tab *Table) {
	EachListener(tab, func(l *ListenerTable) {
		place := shadowPlace(l, &VirtualHost{Hostname: l.Hostname})
		if len(l.StreamRoutes) > 1 {
			first := l.StreamRoutes[0]
			for _, s := range l.StreamRoutes[1:] {
				t.noteL4(s.Route, s.Source, s.Name, first.Route, first.Name, place,
					"only the first rule of a "+string(l.Protocol)+" listener serves connections; "+l4Order(first.Route, first.Name, s.Route, s.Name, t.routeObject))
			}
		}
		firstFor := map[string]*SNIRoute{}
		for _, s := range l.TLSRoutes {
			h := s.Hostnames[0]
			w := firstFor[h]
			if w == nil {
				firstFor[h] = s
				continue
			}
			t.noteL4(s.Route, s.Source, s.Name, w.Route, w.Name, fmt.Sprintf("%s, SNI %q", place, displayVHost(h)),
				"the first TLSRoute for a hostname serves its connections; "+l4Order(w.Route, w.Name, s.Route, s.Name, t.routeObject))
		}
	})
}

// noteL4 records one shadowed L4 rule.
func (t *translator) noteL4(route ObjectKey, src Source, name string, winner ObjectKey, winnerName, place, why string) {
	i, _ := ruleIndexes(name)
	wi, _ := ruleIndexes(winnerName)
	t.notes = append(t.notes, Finding{Severity: SeverityWarning, Object: route, Source: src, Scope: fmt.Sprintf("rules[%d]", i),
		Field: fmt.Sprintf("spec.rules[%d]", i), Reason: ReasonShadowed, Message: fmt.Sprintf("%s rules[%d] never receives a connection on %s: %s rules[%d] takes them all; %s",
			routeRef(route), i, place, routeRef(winner), wi, why)})
}

// l4Order says why rule a comes before rule b: the same route's rule
// order, the older route, or namespace/name.
func l4Order(a ObjectKey, an string, b ObjectKey, bn string, route func(ObjectKey) object) string {
	if a == b {
		i, _ := ruleIndexes(an)
		j, _ := ruleIndexes(bn)
		return fmt.Sprintf("rules[%d] comes before rules[%d]", i, j)
	}
	ra, rb := route(a), route(b)
	if ra == nil || rb == nil {
		return "table order decides"
	}
	return olderRouteReason(a, b, ra, rb)
}
