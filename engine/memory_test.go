package engine

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// Findings read a condition set in list's order without copying it (issue
// 42, part 3: status and findings both read every set), and a condition
// added later is read in order too; list's copies are the caller's.
func TestConditionSortReadsWithoutCopy(t *testing.T) {
	c := newConditionSet(1, nil)
	c.fail("ResolvedRefs", "BackendNotFound", "gone")
	c.setDefault("Accepted", metav1.ConditionTrue, "Accepted", "ok")
	want := c.list()
	if n := testing.AllocsPerRun(10, func() { _ = c.sort() }); n != 0 {
		t.Errorf("reading the set in order: %v allocations, want 0", n)
	}
	if got := c.sort(); got[0].Type != "Accepted" || got[1].Type != "ResolvedRefs" || len(got) != len(want) {
		t.Fatalf("sort: %v, want the order of list: %v", got, want)
	}
	want[0].Message = "changed by the caller"
	c.setDefault("Programmed", metav1.ConditionTrue, "Programmed", "ok")
	c.fail("Conflicted", "HostnameConflict", "taken")
	got := c.sort()
	var types []string
	for _, cond := range got {
		types = append(types, cond.Type)
	}
	if len(types) != 4 || types[0] != "Accepted" || types[1] != "Programmed" || types[2] != "ResolvedRefs" || types[3] != "Conflicted" {
		t.Errorf("after adding conditions: %v", types)
	}
	if got[0].Message != "ok" {
		t.Errorf("a caller's change to list's copy reached the set: %q", got[0].Message)
	}
}

// The translator finds Services in the output's sorted slice rather than
// a map of its own, which held 1.5 MB for 20,000 Services at check's peak
// (issue 42, part 3): setting up a translation of 2,000 Services allocates
// no more than of 2; the last of two Services with one name wins, as the
// map's last write did.
func TestTranslatorKeepsNoServiceIndex(t *testing.T) {
	snap := func(n int) *Snapshot {
		s := &Snapshot{}
		for i := range n {
			svc := &Service{Namespace: "ns", Name: fmt.Sprintf("svc-%05d", i)}
			s.Services = append(s.Services, svc)
		}
		return s
	}
	small, large := snap(2), snap(2000)
	a := testing.AllocsPerRun(5, func() { newTranslator(small, Options{}) })
	b := testing.AllocsPerRun(5, func() { newTranslator(large, Options{}) })
	if b > a {
		t.Errorf("a translator of 2,000 Services: %v allocations, of 2: %v", b, a)
	}
	tr := newTranslator(large, Options{})
	if got := tr.service("ns", "svc-01234"); got == nil || got.Name != "svc-01234" {
		t.Errorf("service(ns, svc-01234) = %v", got)
	}
	if got := tr.service("ns", "svc-2"); got != nil {
		t.Errorf("service(ns, svc-2) = %v, want nil", got.Name)
	}
	dup := snap(3)
	second := dup.Services[1].DeepCopy()
	second.Labels = map[string]string{"which": "second"}
	dup.Services = append(dup.Services, second)
	if got := newTranslator(dup, Options{}).service("ns", "svc-00001"); got == nil || got.Labels["which"] != "second" {
		t.Errorf("of two Services ns/svc-00001 the translator found %v, want the last", got)
	}
}

// A route parent's status takes the set's own conditions (handOut), no
// copy: 1.9 MB for 10,000 routes until check has written them (issue 42,
// part 3). A change to the set afterwards leaves the status as it was.
func TestConditionHandOutWithoutCopy(t *testing.T) {
	c := newConditionSet(1, nil)
	c.setDefault("ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs", "resolved")
	c.setDefault("Accepted", metav1.ConditionTrue, "Accepted", "ok")
	c.sort()
	if n := testing.AllocsPerRun(10, func() { _ = c.handOut() }); n != 0 {
		t.Errorf("handOut: %v allocations, want 0", n)
	}
	status := c.handOut()
	c.fail("Accepted", "NotAllowedByListeners", "no")
	c.setDefault("PartiallyInvalid", metav1.ConditionTrue, "UnsupportedValue", "dropped")
	if status[0].Type != "Accepted" || status[0].Status != metav1.ConditionTrue || len(status) != 2 {
		t.Errorf("the status changed with the set: %+v", status)
	}
	if got := c.sort(); len(got) != 3 || got[0].Status != metav1.ConditionFalse {
		t.Errorf("the set after the changes: %+v", got)
	}
	if empty := newConditionSet(1, nil).handOut(); empty == nil {
		t.Error("an empty set handed out nil")
	}
}

// A translation that keeps no incremental cache holds none of its input's
// objects once it has copied them (issue 42, part 3): while the rest is
// computed, check lets go of the routes it replaced by status copies.
func TestTranslationHoldsNoInputObjects(t *testing.T) {
	route := &gwv1.HTTPRoute{TypeMeta: metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"}}
	snap := &Snapshot{HTTPRoutes: []*gwv1.HTTPRoute{route}}
	original := weak.Make(route)
	res, finish := translateTableFirst(snap, Options{}, nil)
	snap, route = nil, nil
	runtime.GC()
	if original.Value() != nil {
		t.Error("the input HTTPRoute is still held while the translation finishes")
	}
	finish()
	if n := len(res.Objects.HTTPRoutes); n != 1 {
		t.Errorf("%d HTTPRoutes in the result, want 1", n)
	}
}

// Finding the shadowed matches reuses one index for every virtual host
// (issue 42, part 3: at 10,000 routes it allocated 4.6 MB after the
// translation's last collection, all of it on check's peak): a table of
// 1,000 virtual hosts allocates no more than one of 10. The shadows found
// are those of each virtual host alone.
func TestShadowsReuseTheirIndex(t *testing.T) {
	if raceDetector {
		t.Skip("allocation counts move under the race detector; make test runs this without it")
	}
	tab := func(n int) *Table {
		l := &ListenerTable{Name: "l"}
		for i := range n {
			rule := func(typ table.MatchType, path string, j int) *RouteRule {
				return &RouteRule{Name: fmt.Sprintf("r%d/%d", i, j), HTTP: &table.HTTPMatch{Path: table.PathMatch{Type: typ, Value: path}}}
			}
			vh := &VirtualHost{Hostname: fmt.Sprintf("h%d.example", i), Rules: []*RouteRule{
				rule(table.MatchPathPrefix, "/api", 0), rule(table.MatchExact, "/api/x", 1), rule(table.MatchPathPrefix, "", 2)}}
			if i == n-1 { // one shadow: /api/x behind /api
				vh.Rules = []*RouteRule{rule(table.MatchPathPrefix, "/api", 0), rule(table.MatchExact, "/api/x", 1)}
			} else { // none: the more specific first
				vh.Rules[0], vh.Rules[1] = vh.Rules[1], vh.Rules[0]
			}
			l.VirtualHosts = append(l.VirtualHosts, vh)
		}
		return &Table{Gateways: []*GatewayTable{{Ports: []*PortTable{{Listeners: []*ListenerTable{l}}}}}}
	}
	none := func(ObjectKey) object { return nil }
	small, large := tab(10), tab(1000)
	a := testing.AllocsPerRun(5, func() { tableShadows(small, none) })
	b := testing.AllocsPerRun(5, func() { tableShadows(large, none) })
	if b > a {
		t.Errorf("the shadows of 1,000 virtual hosts: %v allocations, of 10: %v", b, a)
	}
	got := tableShadows(large, none)
	if len(got) != 1 || got[0].Loser.Name != "r999/1" || got[0].Winner.Name != "r999/0" {
		var names []string
		for _, s := range got {
			names = append(names, s.Winner.Name+" > "+s.Loser.Name)
		}
		t.Errorf("shadows %v, want r999/0 > r999/1", names)
	}
}

// A translation without an incremental cache keeps no listener's rules by
// hostname once its virtual hosts are built (2 MB for 10,000 routes held
// to check's peak, issue 42, part 3); one with a cache keeps them for the
// next translation's patch.
func TestHostIndexOnlyForTheNextTranslation(t *testing.T) {
	tr := newTranslator(&Snapshot{}, Options{})
	l := &listenerState{}
	tr.virtualHosts("l", l)
	if l.byHost != nil {
		t.Error("a translation without a cache kept the listener's rules by hostname")
	}
	tr = newTranslator(&Snapshot{}, Options{})
	tr.startIncremental(nil)
	tr.virtualHosts("l", l)
	if l.byHost == nil {
		t.Error("an incremental translation did not keep the listener's rules by hostname")
	}
}

// The shadow findings index the routes' objects only when a shadow needs
// explaining (issue 42, part 3: two indices of 10,000 routes, 2.3 MB, were
// made at the end of every translation, on check's peak); a shadow found
// is still explained by its routes' age.
func TestShadowNotesIndexRoutesOnlyWhenAsked(t *testing.T) {
	tr := newTranslator(&Snapshot{}, Options{})
	for i := range 10000 {
		k := ObjectKey{Kind: "HTTPRoute", Namespace: "ns", Name: fmt.Sprintf("r%05d", i)}
		obj := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}}
		tr.routes = append(tr.routes, &routeState{key: k, obj: obj})
	}
	rule := func(route, name, path string) *RouteRule {
		return &RouteRule{Route: ObjectKey{Kind: "HTTPRoute", Namespace: "ns", Name: route}, Name: name,
			HTTP: &table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix, Value: path}}}
	}
	l := &ListenerTable{Name: "l", Owner: ObjectKey{Kind: "Gateway", Namespace: "ns", Name: "gw"}, SectionName: "http",
		VirtualHosts: []*VirtualHost{{Hostname: "a.example", Rules: []*RouteRule{rule("r00001", "httproute/ns/r00001/rule/0/match/0", "/api")}}}}
	tab := &Table{Gateways: []*GatewayTable{{Ports: []*PortTable{{Listeners: []*ListenerTable{l}}}}}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tr.noteShadowedRules(tab)
	tr.noteShadowedL4(tab)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("finding no shadow among 10,000 routes allocated %d bytes", n)
	}
	if len(tr.notes) != 0 {
		t.Fatalf("notes %v, want none", tr.notes)
	}
	l.VirtualHosts[0].Rules = append(l.VirtualHosts[0].Rules, rule("r00002", "httproute/ns/r00002/rule/0/match/0", "/api"))
	tr.noteShadowedRules(tab)
	if len(tr.notes) != 1 || !strings.Contains(tr.notes[0].Message, "r00001") || !strings.Contains(tr.notes[0].Message, "ns/r00001 before ns/r00002") {
		t.Errorf("notes %v, want r00002 shadowed by r00001, the first by namespace/name", tr.notes)
	}
}

// A host's rules are appended in one allocation per route (issue 42, part
// 3: one per doubling was 0.5 MB more at 10,000 routes, at the end of
// check's translation).
func TestAppendPositionsGrowsOnce(t *testing.T) {
	if raceDetector {
		t.Skip("allocation counts move under the race detector; make test runs this without it")
	}
	r := &routeState{compiled: compiled{rules: []*RouteRule{{Name: "a"}, {Name: "b"}, {Name: "c"}}, pathLens: []int{1, 2, 3}}}
	if n := testing.AllocsPerRun(10, func() { _ = r.appendPositions(nil, "h.example") }); n != 1 {
		t.Errorf("appending a route's 3 rules: %v allocations, want 1", n)
	}
	if got := r.appendPositions(nil, "h.example"); len(got) != 3 || got[2].rule.Name != "c" || got[1].pathLen != 2 || got[2].order != 2 {
		t.Errorf("positions %+v", got)
	}
}
