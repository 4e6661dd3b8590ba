package watch

import (
	"fmt"
	"testing"
)

func TestCELMemoGivesUpWhenValuesDoNotRepeat(t *testing.T) {
	var unique celMemo
	for i := range memoTrial {
		if !unique.useful() {
			t.Fatalf("memo judged useless after %d lookups, before its trial ended", i)
		}
		key, _ := memoKey(map[string]any{"name": fmt.Sprint("route-", i)})
		if unique.known(key) {
			t.Fatalf("unexpected hit for %q", key)
		}
		unique.remember(key)
	}
	if unique.useful() {
		t.Fatal("a memo that never hit is still used")
	}

	var repeated celMemo
	key, _ := memoKey(map[string]any{"name": "gw", "namespace": "infra"})
	repeated.remember(key)
	for range 4 * memoTrial {
		if !repeated.known(key) {
			t.Fatal("remembered key not found")
		}
	}
	if !repeated.useful() {
		t.Fatal("a memo that always hits was given up")
	}
}

func TestMemoKeyIsUnambiguous(t *testing.T) {
	pairs := [][2]any{
		{map[string]any{"a": "b,c"}, map[string]any{"a": "b", "c": nil}},
		{[]any{"a:b"}, []any{"a", "b"}},
		{"1", int64(1)},
		{map[string]any{"a": map[string]any{}}, map[string]any{"a": []any{}}},
	}
	for _, p := range pairs {
		k1, ok1 := memoKey(p[0])
		k2, ok2 := memoKey(p[1])
		if !ok1 || !ok2 {
			t.Fatalf("not memoizable: %v %v", p[0], p[1])
		}
		if k1 == k2 {
			t.Errorf("%v and %v share the key %q", p[0], p[1], k1)
		}
	}
	a, _ := memoKey(map[string]any{"x": int64(1), "y": "z"})
	b, _ := memoKey(map[string]any{"y": "z", "x": int64(1)})
	if a != b {
		t.Errorf("equal maps have different keys: %q %q", a, b)
	}
}
