package watch

import (
	"strconv"
	"sync"
	"sync/atomic"
)

// A node's rules read a few fields of self, and those are often the same
// from object to object when self as a whole never is: the rules on an
// HTTPRoute rule read its filters' types and its matches, not its backends'
// names, so celMemo, keyed by the whole value, never hits there. The rules
// are pure functions of what they read, so each passing evaluation is
// traced: every observation the rules make of self (a field's value or
// absence, a list's length, a whole value compared or converted) is
// recorded with its path, through the wrappers of celvalue.go, which every
// read of self goes through. An object that shows the same values at the
// same paths, in the same order, makes the evaluation take the same steps,
// so it passes too. The paths of a trace (its shape) are kept once; each
// shape keeps the observed values of the evaluations that passed with it.
// Failures are never remembered.

const (
	// maxTraceShapes bounds the shapes remembered per rule node.
	maxTraceShapes = 16
	// maxTraceSteps bounds the observations of one trace.
	maxTraceSteps = 256
)

// celPathElem is one step down from self: a field (idx < 0) or a list item.
type celPathElem struct {
	key string
	idx int
}

// Observation kinds, with how the observed value is written.
const (
	obsField = 'f' // the raw value at path.key: absent, a kind, or the value
	obsItem  = 'i' // the raw list item at path[idx]: a kind, or the value
	obsLen   = 'n' // the length of the list at path
	obsWhole = 'w' // the whole value at path
)

// celStep is one observation: what was looked at, and whether a value
// seen there was written whole or only as its kind (an object or list
// whose own reads are traced further).
type celStep struct {
	path  []celPathElem
	op    byte
	key   string // obsField's field
	idx   int    // obsItem's index
	whole bool   // obsField, obsItem: the value was written whole
}

// celTracer records the observations of one evaluation.
type celTracer struct {
	steps []celStep
	vals  []byte
	bad   bool // too long or not encodable: not remembered
}

func (t *celTracer) add(s celStep, v any) {
	if t.bad {
		return
	}
	if len(t.steps) >= maxTraceSteps {
		t.bad = true
		return
	}
	t.steps = append(t.steps, s)
	var ok bool
	if t.vals, ok = appendObservation(t.vals, s, v); !ok {
		t.bad = true
	}
}

// appendObservation writes what s observes of v, the value at s.path.
func appendObservation(b []byte, s celStep, v any) ([]byte, bool) {
	b = append(b, s.op)
	switch s.op {
	case obsLen:
		l, ok := v.([]any)
		if !ok {
			return b, false
		}
		return strconv.AppendInt(b, int64(len(l)), 10), true
	case obsWhole:
		return appendCanonical(b, v)
	case obsField:
		m, ok := v.(map[string]any)
		if !ok {
			return b, false
		}
		x, ok := m[s.key]
		if !ok || x == nil {
			return append(b, 'a'), true
		}
		v = x
	case obsItem:
		l, ok := v.([]any)
		if !ok || s.idx >= len(l) {
			return b, false
		}
		v = l[s.idx]
	}
	if s.whole {
		return appendCanonical(append(b, 'v'), v)
	}
	switch v.(type) {
	case map[string]any:
		return append(b, 'o'), true
	case []any:
		return append(b, 'l'), true
	}
	return appendCanonical(append(b, 'v'), v)
}

// at is the value at path below root, or false when there is none.
func at(root any, path []celPathElem) (any, bool) {
	v := root
	for _, e := range path {
		if e.idx < 0 {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[e.key]; !ok || v == nil {
				return nil, false
			}
		} else {
			l, ok := v.([]any)
			if !ok || e.idx >= len(l) {
				return nil, false
			}
			v = l[e.idx]
		}
	}
	return v, true
}

// celShape is the paths of a trace, with the observed values of the
// evaluations that passed with them.
type celShape struct {
	steps  []celStep
	passed sync.Map // observed values -> struct{}
	size   atomic.Int64
}

// replay writes what obj shows along the shape's steps (false: obj does
// not have the shape's paths).
// It appends to b, which the caller gives (a buffer on its stack: a string
// per replay was 6 MB for 1,000 routes).
func (s *celShape) replay(b []byte, obj any) ([]byte, bool) {
	for _, st := range s.steps {
		v, ok := at(obj, st.path)
		if !ok {
			return b, false
		}
		if b, ok = appendObservation(b, st, v); !ok || len(b) > maxMemoKey {
			return b, false
		}
	}
	return b, true
}

// celTraceMemo holds a node's shapes.
type celTraceMemo struct {
	mu     sync.Mutex
	shapes atomic.Pointer[[]*celShape]
	// lookups and hits decide, as celMemo's do, whether tracing pays.
	lookups, hits atomic.Int64
}

func (m *celTraceMemo) useful() bool {
	n := m.lookups.Load()
	return n < memoTrial || m.hits.Load()*memoMinHitRate >= n
}

// known reports whether obj shows the values of a passing trace.
func (m *celTraceMemo) known(obj any) bool {
	m.lookups.Add(1)
	p := m.shapes.Load()
	if p == nil {
		return false
	}
	var buf [128]byte
	for _, s := range *p {
		if key, ok := s.replay(buf[:0], obj); ok {
			if _, hit := s.passed.Load(bytesView(key)); hit {
				m.hits.Add(1)
				return true
			}
		}
	}
	return false
}

// remember records the trace of a passing evaluation.
func (m *celTraceMemo) remember(t *celTracer) {
	if t.bad || len(t.vals) > maxMemoKey {
		return
	}
	s := m.shape(t.steps)
	if s == nil || s.size.Load() >= maxMemoEntries {
		return
	}
	if _, loaded := s.passed.LoadOrStore(string(t.vals), struct{}{}); !loaded {
		s.size.Add(1)
	}
}

// shape returns the node's shape of steps, adding it while there is room.
func (m *celTraceMemo) shape(steps []celStep) *celShape {
	m.mu.Lock()
	defer m.mu.Unlock()
	var list []*celShape
	if p := m.shapes.Load(); p != nil {
		list = *p
	}
	for _, s := range list {
		if sameSteps(s.steps, steps) {
			return s
		}
	}
	if len(list) >= maxTraceShapes {
		return nil
	}
	s := &celShape{steps: steps}
	next := append(append([]*celShape(nil), list...), s)
	m.shapes.Store(&next)
	return s
}

func sameSteps(a, b []celStep) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.op != y.op || x.key != y.key || x.idx != y.idx || x.whole != y.whole || len(x.path) != len(y.path) {
			return false
		}
		for j := range x.path {
			if x.path[j] != y.path[j] {
				return false
			}
		}
	}
	return true
}

// child is path with e appended, in a slice of its own.
func child(path []celPathElem, e celPathElem) []celPathElem {
	out := make([]celPathElem, len(path)+1)
	copy(out, path)
	out[len(path)] = e
	return out
}
