package engine

import (
	"fmt"
	"runtime"
	"testing"
	"weak"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Findings read a condition set in list's order without copying it (issue
// 42, part 3: status and findings both read every set), and a condition
// added later is read in order too; list's copies are the caller's.
func TestConditionSortReadsWithoutCopy(t *testing.T) {
	c := newConditionSet(1, metav1.Time{})
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
			svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("svc-%05d", i)}}
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
	c := newConditionSet(1, metav1.Time{})
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
	if empty := newConditionSet(1, metav1.Time{}).handOut(); empty == nil {
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
