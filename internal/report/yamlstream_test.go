package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// YAMLEncoder writes each value's JSON into a buffer it reuses: encoding
// allocates less than json.Marshal's text and its YAML do together, by
// Marshal's copy (issue 42, part 3: 20 MB of check -o yaml's garbage for
// 10,000 HTTPRoutes with their Services).
func TestYAMLEncoderReusesJSONBuffer(t *testing.T) {
	if raceDetector {
		t.Skip("allocation counts move under the race detector; make test runs this without it")
	}
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "team"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8080}}}}
	j, err := json.Marshal(svc)
	if err != nil {
		t.Fatal(err)
	}
	var (
		tree jsonTree
		em   yamlEmitter
		buf  []byte
		e    YAMLEncoder
	)
	marshal := testing.AllocsPerRun(20, func() { _, _ = json.Marshal(svc) })
	emit := testing.AllocsPerRun(20, func() { buf, _ = appendJSONYAML(&tree, &em, buf[:0], j) })
	encode := testing.AllocsPerRun(20, func() { _, _ = e.Encode(svc) })
	if encode > marshal+emit-1 {
		t.Errorf("Encode: %v allocations; json.Marshal %v and the YAML of its text %v", encode, marshal, emit)
	}
	want, err := YAML(svc)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := e.Encode(svc); !bytes.Equal(got, want) {
		t.Errorf("Encode after reuse:\n%s\nwant\n%s", got, want)
	}
}
