package engine

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
