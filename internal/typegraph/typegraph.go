// Package typegraph keeps a value worked out once per Go type for types
// that refer to one another: the reflection plans by which watch decodes
// objects into Go types and report encodes them as YAML.
package typegraph

import (
	"reflect"
	"sync"
)

// Cache holds one *T per type. A type's value and the values of the types
// it holds are made together under one lock and published whole, so that a
// reader never sees one half made; a type met again while its value is
// being made (a recursive type) gets that value. The zero Cache is ready.
type Cache[T any] struct {
	done sync.Map   // reflect.Type -> *T, complete
	mu   sync.Mutex // one graph made at a time
}

// Of returns t's value. On first use fill fills in v for t and calls of
// for the value of each type t holds.
func (c *Cache[T]) Of(t reflect.Type, fill func(t reflect.Type, v *T, of func(reflect.Type) *T)) *T {
	if v, ok := c.done.Load(t); ok {
		return v.(*T)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	made := map[reflect.Type]*T{}
	var of func(reflect.Type) *T
	of = func(t reflect.Type) *T {
		if v, ok := c.done.Load(t); ok {
			return v.(*T)
		}
		if v, ok := made[t]; ok {
			return v
		}
		v := new(T)
		made[t] = v
		fill(t, v, of)
		return v
	}
	v := of(t)
	for t, v := range made {
		c.done.Store(t, v)
	}
	return v
}
