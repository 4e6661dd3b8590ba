package watch

import (
	"reflect"
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
	return wrapCELValue(common.UnstructuredToVal(v, s), v, s, nil, nil)
}

// tracedCELValue is celValue recording the reads of v in tr (celtrace.go).
func tracedCELValue(v any, s common.Schema, tr *celTracer) ref.Val {
	val := common.UnstructuredToVal(v, s)
	w := wrapCELValue(val, v, s, tr, []celPathElem{})
	if w == val {
		// Not wrapped: reads of it are not traced.
		tr.add(celStep{op: obsWhole}, v)
	}
	return w
}

// wrapCELValue wraps val, the CEL view of v under s, when it is an object
// with properties or a list; with a tracer, the wrapper records the reads
// of v, which is at path below self.
func wrapCELValue(val ref.Val, v any, s common.Schema, tr *celTracer, path []celPathElem) ref.Val {
	switch x := val.(type) {
	case traits.Mapper:
		m, ok := v.(map[string]any)
		if props := s.Properties(); ok && props != nil && !s.IsXEmbeddedResource() {
			return &celObject{Mapper: x, value: m, props: props, tr: tr, path: path}
		}
	case traits.Lister:
		items, ok := v.([]any)
		if is := s.Items(); ok && is != nil {
			return &celList{Lister: x, items: items, itemSchema: is, tr: tr, path: path}
		}
	}
	return val
}

// celObject is an object with properties.
type celObject struct {
	traits.Mapper
	value map[string]any
	props map[string]common.Schema
	// tr records the reads of value, at path (nil: not traced).
	tr   *celTracer
	path []celPathElem
}

// whole records that the whole object was read.
func (o *celObject) whole() {
	if o.tr != nil {
		o.tr.add(celStep{path: o.path, op: obsWhole}, o.value)
	}
}

// ConvertToNative, ConvertToType, Value, Iterator and Size read the whole
// object.
func (o *celObject) ConvertToNative(t reflect.Type) (any, error) {
	o.whole()
	return o.Mapper.ConvertToNative(t)
}

func (o *celObject) ConvertToType(t ref.Type) ref.Val {
	o.whole()
	return o.Mapper.ConvertToType(t)
}

func (o *celObject) Value() any {
	o.whole()
	return o.Mapper.Value()
}

func (o *celObject) Iterator() traits.Iterator {
	o.whole()
	return o.Mapper.Iterator()
}

func (o *celObject) Size() ref.Val {
	o.whole()
	return o.Mapper.Size()
}

// Find looks a field up like the apiserver's unstructuredMap.Find: absent
// and null fields are not found, and fields the schema does not declare
// are not found either.
func (o *celObject) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok || strings.Contains(string(k), "__") {
		o.whole()
		return o.Mapper.Find(key)
	}
	v, ok := o.value[string(k)]
	if !ok || v == nil {
		if o.tr != nil {
			o.tr.add(celStep{path: o.path, op: obsField, key: string(k)}, o.value)
		}
		return nil, false
	}
	s, ok := o.props[string(k)]
	if !ok {
		if o.tr != nil {
			o.tr.add(celStep{path: o.path, op: obsField, key: string(k), whole: true}, o.value)
		}
		return nil, false
	}
	if o.tr == nil {
		return celValue(v, s), true
	}
	val := common.UnstructuredToVal(v, s)
	w := wrapCELValue(val, v, s, o.tr, child(o.path, celPathElem{key: string(k), idx: -1}))
	o.tr.add(celStep{path: o.path, op: obsField, key: string(k), whole: w == val}, o.value)
	return w, true
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
	// tr records the reads of items, at path (nil: not traced).
	tr   *celTracer
	path []celPathElem
}

// whole records that the whole list was read.
func (l *celList) whole() {
	if l.tr != nil {
		l.tr.add(celStep{path: l.path, op: obsWhole}, l.items)
	}
}

// length records that the list's length was read.
func (l *celList) length() {
	if l.tr != nil {
		l.tr.add(celStep{path: l.path, op: obsLen}, l.items)
	}
}

// item wraps val, item i, recording that it was read.
func (l *celList) item(val ref.Val, i int) ref.Val {
	if l.tr == nil {
		return wrapCELValue(val, l.items[i], l.itemSchema, nil, nil)
	}
	w := wrapCELValue(val, l.items[i], l.itemSchema, l.tr, child(l.path, celPathElem{idx: i}))
	l.tr.add(celStep{path: l.path, op: obsItem, idx: i, whole: w == val}, l.items)
	return w
}

// ConvertToNative, ConvertToType, Value, Add and Contains read the whole
// list; Size reads its length.
func (l *celList) ConvertToNative(t reflect.Type) (any, error) {
	l.whole()
	return l.Lister.ConvertToNative(t)
}

func (l *celList) ConvertToType(t ref.Type) ref.Val {
	l.whole()
	return l.Lister.ConvertToType(t)
}

func (l *celList) Value() any {
	l.whole()
	return l.Lister.Value()
}

func (l *celList) Add(other ref.Val) ref.Val {
	l.whole()
	if ol, ok := other.(*celList); ok {
		ol.whole()
	}
	return l.Lister.Add(other)
}

func (l *celList) Contains(v ref.Val) ref.Val {
	l.whole()
	return l.Lister.Contains(v)
}

func (l *celList) Size() ref.Val {
	l.length()
	return l.Lister.Size()
}

func (l *celList) Get(idx ref.Val) ref.Val {
	l.length()
	val := l.Lister.Get(idx)
	if types.IsUnknownOrError(val) {
		return val
	}
	i, ok := idx.(types.Int)
	if !ok || i < 0 || int(i) >= len(l.items) {
		return val
	}
	return l.item(val, int(i))
}

func (l *celList) Iterator() traits.Iterator {
	l.length()
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
	return it.list.item(val, i)
}

// Equal compares with the apiserver's code; two wrapped objects are
// compared unwrapped, because the apiserver's equality falls back to its
// own concrete type for fields the schema does not declare (metadata).
func (o *celObject) Equal(other ref.Val) ref.Val {
	o.whole()
	if oo, ok := other.(*celObject); ok {
		oo.whole()
		return o.Mapper.Equal(oo.Mapper)
	}
	return o.Mapper.Equal(other)
}

// Equal compares with the apiserver's code, unwrapped.
func (l *celList) Equal(other ref.Val) ref.Val {
	l.whole()
	if ol, ok := other.(*celList); ok {
		ol.whole()
		return l.Lister.Equal(ol.Lister)
	}
	return l.Lister.Equal(other)
}
