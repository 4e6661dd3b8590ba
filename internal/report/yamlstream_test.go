package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// writeYAMLDocs writes the same bytes with any number of workers, for
// object counts around its chunk size, and stops at the first object that
// cannot be rendered, writing none after it (issue 42, part 3).
func TestWriteYAMLDocsParallelSameBytes(t *testing.T) {
	objs := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"kind": "Thing", "metadata": map[string]any{"name": fmt.Sprintf("t-%d", i)},
				"spec": map[string]any{"text": strings.Repeat("word ", i%40), "n": i}}
		}
		return out
	}
	for _, n := range []int{0, 1, yamlChunk, yamlChunk + 1, 5*yamlChunk + 7} {
		var want bytes.Buffer
		if err := writeYAMLDocs(&want, objs(n), 1); err != nil {
			t.Fatal(err)
		}
		if n > 0 && !bytes.HasPrefix(want.Bytes(), []byte("---\nkind: Thing\n")) {
			t.Fatalf("%d objects: %.40q", n, want.String())
		}
		for _, workers := range []int{2, 3, 8} {
			var got bytes.Buffer
			if err := writeYAMLDocs(&got, objs(n), workers); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%d objects, %d workers: %d bytes differ from one worker's %d", n, workers, got.Len(), want.Len())
			}
		}
	}
	bad := objs(6 * yamlChunk)
	bad[3*yamlChunk+5] = map[string]any{"f": func() {}} // encoding/json refuses a func
	var out bytes.Buffer
	err := writeYAMLDocs(&out, bad, 3)
	var unsupported *json.UnsupportedTypeError
	if !errors.As(err, &unsupported) {
		t.Fatalf("an object JSON cannot encode: err %v", err)
	}
	if strings.Count(out.String(), "---\n") > 3*yamlChunk+5 {
		t.Errorf("documents after the one that failed were written")
	}
}
