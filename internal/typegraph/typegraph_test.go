package typegraph

import (
	"reflect"
	"sync"
	"testing"
)

type node struct {
	Next     *node
	Children []node
	Name     string
}

// info is what the test's fill records of a type: its kind and the
// infos of the types it holds.
type info struct {
	kind  reflect.Kind
	elems []*info
}

func fillInfo(t reflect.Type, v *info, of func(reflect.Type) *info) {
	v.kind = t.Kind()
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		v.elems = append(v.elems, of(t.Elem()))
	case reflect.Struct:
		for i := range t.NumField() {
			v.elems = append(v.elems, of(t.Field(i).Type))
		}
	}
}

// A recursive type ends, its values link to one another, each type is
// filled once, and concurrent callers get the same values.
func TestCacheRecursiveTypes(t *testing.T) {
	var c Cache[info]
	fills := map[reflect.Type]int{}
	var mu sync.Mutex
	fill := func(t reflect.Type, v *info, of func(reflect.Type) *info) {
		mu.Lock()
		fills[t]++
		mu.Unlock()
		fillInfo(t, v, of)
	}
	var wg sync.WaitGroup
	got := make([]*info, 8)
	for i := range got {
		wg.Go(func() { got[i] = c.Of(reflect.TypeFor[node](), fill) })
	}
	wg.Wait()
	for _, g := range got[1:] {
		if g != got[0] {
			t.Fatal("callers got different values for one type")
		}
	}
	n := got[0]
	if n.kind != reflect.Struct || len(n.elems) != 3 {
		t.Fatalf("node: %+v", n)
	}
	if ptr := n.elems[0]; ptr.kind != reflect.Pointer || ptr.elems[0] != n {
		t.Errorf("*node's element is not node's value")
	}
	if sl := n.elems[1]; sl.kind != reflect.Slice || sl.elems[0] != n {
		t.Errorf("[]node's element is not node's value")
	}
	if c.Of(reflect.TypeFor[*node](), fill) != n.elems[0] {
		t.Errorf("*node looked up later is not the value made with node")
	}
	for typ, k := range fills {
		if k != 1 {
			t.Errorf("%v filled %d times", typ, k)
		}
	}
}
