package watch

import (
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apiserver/pkg/cel/common"
)

// The apiserver's CEL view of unstructured objects (common.UnstructuredToVal)
// unescapes every field name a rule reads (self.spec → "spec") with a
// regular expression, even names that cannot be escaped, which took about a
// quarter of the time spent evaluating rules. celValue wraps those values:
// field lookups of names without "__" (the only names escaping changes) go
// straight to the map; everything else (equality, iteration order, escaped
// names, conversions, list semantics) is the apiserver's own code.

// celValue is common.UnstructuredToVal with faster field lookups.
func celValue(v any, s common.Schema) ref.Val {
	return wrapCELValue(common.UnstructuredToVal(v, s), v, s)
}

// wrapCELValue wraps val, the CEL view of v under s, when it is an object
// with properties or a list.
func wrapCELValue(val ref.Val, v any, s common.Schema) ref.Val {
	switch x := val.(type) {
	case traits.Mapper:
		m, ok := v.(map[string]any)
		if props := s.Properties(); ok && props != nil && !s.IsXEmbeddedResource() {
			return &celObject{Mapper: x, value: m, props: props}
		}
	case traits.Lister:
		items, ok := v.([]any)
		if is := s.Items(); ok && is != nil {
			return &celList{Lister: x, items: items, itemSchema: is}
		}
	}
	return val
}

// celObject is an object with properties.
type celObject struct {
	traits.Mapper
	value map[string]any
	props map[string]common.Schema
}

// Find looks a field up like the apiserver's unstructuredMap.Find: absent
// and null fields are not found, and fields the schema does not declare
// are not found either.
func (o *celObject) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok || strings.Contains(string(k), "__") {
		return o.Mapper.Find(key)
	}
	v, ok := o.value[string(k)]
	if !ok || v == nil {
		return nil, false
	}
	s, ok := o.props[string(k)]
	if !ok {
		return nil, false
	}
	return celValue(v, s), true
}

// Contains and Get are the apiserver's, over the faster Find.
func (o *celObject) Contains(key ref.Val) ref.Val {
	v, found := o.Find(key)
	if v != nil && types.IsUnknownOrError(v) {
		return v
	}
	return types.Bool(found)
}

func (o *celObject) Get(key ref.Val) ref.Val {
	if v, found := o.Find(key); found {
		return v
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

// celList is a list whose items are wrapped as they are read.
type celList struct {
	traits.Lister
	items      []any
	itemSchema common.Schema
}

func (l *celList) Get(idx ref.Val) ref.Val {
	val := l.Lister.Get(idx)
	if types.IsUnknownOrError(val) {
		return val
	}
	i, ok := idx.(types.Int)
	if !ok || i < 0 || int(i) >= len(l.items) {
		return val
	}
	return wrapCELValue(val, l.items[i], l.itemSchema)
}

func (l *celList) Iterator() traits.Iterator {
	return &celListIterator{Iterator: l.Lister.Iterator(), list: l}
}

// celListIterator wraps the items the apiserver's iterator returns, which
// come in order.
type celListIterator struct {
	traits.Iterator
	list *celList
	next int
}

func (it *celListIterator) Next() ref.Val {
	val := it.Iterator.Next()
	i := it.next
	it.next++
	if i >= len(it.list.items) || types.IsUnknownOrError(val) {
		return val
	}
	return wrapCELValue(val, it.list.items[i], it.list.itemSchema)
}

// Equal compares with the apiserver's code; two wrapped objects are
// compared unwrapped, because the apiserver's equality falls back to its
// own concrete type for fields the schema does not declare (metadata).
func (o *celObject) Equal(other ref.Val) ref.Val {
	if oo, ok := other.(*celObject); ok {
		return o.Mapper.Equal(oo.Mapper)
	}
	return o.Mapper.Equal(other)
}

// Equal compares with the apiserver's code, unwrapped.
func (l *celList) Equal(other ref.Val) ref.Val {
	if ol, ok := other.(*celList); ok {
		return l.Lister.Equal(ol.Lister)
	}
	return l.Lister.Equal(other)
}
