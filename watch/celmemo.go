package watch

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// CEL rules are pure functions of self on create (there is no oldSelf), so
// a node whose own rules all passed for one value passes for every equal
// value. Manifests repeat themselves a lot (the same parentRefs, path
// matches and backendRef shapes in every route), so each rule node keeps a
// bounded set of small values known to pass and skips evaluation for them.
// Failures are never cached: their messages are always computed afresh.

const (
	// maxMemoKey bounds the canonical encoding of a cached value (bytes).
	maxMemoKey = 1024
	// maxMemoEntries bounds the values remembered per rule node.
	maxMemoEntries = 4096
)

// celMemo remembers values that passed a node's rules.
type celMemo struct {
	passed sync.Map // canonical value -> struct{}
	size   atomic.Int64
	// lookups and hits decide whether the memo is worth its keys: values
	// at the top of an object (a whole route's spec) rarely repeat, and
	// encoding them costs more than the hits save.
	lookups, hits atomic.Int64
}

const (
	// memoTrial is how many lookups a node's memo gets before its hit rate
	// is judged.
	memoTrial = 256
	// memoMinHitRate is the fraction of hits (1/memoMinHitRate) below which
	// a node stops using its memo.
	memoMinHitRate = 8
)

// useful reports whether looking values up is still worth it.
func (m *celMemo) useful() bool {
	n := m.lookups.Load()
	return n < memoTrial || m.hits.Load()*memoMinHitRate >= n
}

// known reports whether key is remembered as passing.
func (m *celMemo) known(key string) bool {
	m.lookups.Add(1)
	_, ok := m.passed.Load(key)
	if ok {
		m.hits.Add(1)
	}
	return ok
}

// remember records that key passed, while there is room.
func (m *celMemo) remember(key string) {
	if m.size.Load() >= maxMemoEntries {
		return
	}
	if _, loaded := m.passed.LoadOrStore(key, struct{}{}); !loaded {
		m.size.Add(1)
	}
}

// memoKey encodes v canonically (map keys sorted, types tagged), or returns
// false when the encoding would exceed maxMemoKey.
//
// validateRules encodes into a buffer of its own instead, and looks the key
// up through bytesView: a string per lookup was 2.7 MB for 1,000 routes.
func memoKey(v any) (string, bool) {
	b := make([]byte, 0, 128)
	b, ok := appendCanonical(b, v)
	if !ok {
		return "", false
	}
	return string(b), true
}

func appendCanonical(b []byte, v any) ([]byte, bool) {
	if len(b) > maxMemoKey {
		return b, false
	}
	switch v := v.(type) {
	case nil:
		b = append(b, 'n')
	case bool:
		if v {
			b = append(b, 't')
		} else {
			b = append(b, 'f')
		}
	case string:
		if len(b)+len(v) > maxMemoKey {
			return b, false // do not copy a long string only to drop the key
		}
		b = appendString(append(b, 's'), v)
	case int64:
		b = append(b, 'i')
		b = strconv.AppendInt(b, v, 10)
	case float64:
		b = append(b, 'd')
		b = strconv.AppendUint(b, math.Float64bits(v), 16)
	case []any:
		b = append(b, '[')
		for _, item := range v {
			var ok bool
			if b, ok = appendCanonical(b, item); !ok {
				return b, false
			}
			b = append(b, ',')
		}
		b = append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for _, k := range keys {
			b = appendString(b, k)
			var ok bool
			if b, ok = appendCanonical(b, v[k]); !ok {
				return b, false
			}
			b = append(b, ',')
		}
		b = append(b, '}')
	default:
		return b, false
	}
	return b, len(b) <= maxMemoKey
}

// appendString writes s length-prefixed, which is unambiguous without
// escaping.
func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// bytesView is b as a string without a copy, for a lookup that keeps no
// reference to it (sync.Map.Load): b must not change while it is in use.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
