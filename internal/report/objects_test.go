package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestObjectsOutputMatchesWholeResult checks that the streamed -o yaml
// and -o json are byte for byte what the reference encoders give
// (sigs.k8s.io/yaml.Marshal of each object; json.MarshalIndent of the
// whole List), on every sample and on the engine's golden inputs.
func TestObjectsOutputMatchesWholeResult(t *testing.T) {
	samples, _ := filepath.Glob("../../samples/*")
	inputs, _ := filepath.Glob("../../engine/testdata/*.in.yaml")
	proj := testkit.Project(t)
	n := 0
	for _, src := range append(append(samples, inputs...), t.TempDir()) { // and an empty folder
		lr := proj.LoadDir(src)
		res := engine.Translate(lr.Snapshot, engine.Options{Now: metav1.Now()})
		var want bytes.Buffer
		var items []any
		err := res.EachOutput(func(o any) error {
			b, err := yaml.Marshal(o)
			want.WriteString("---\n")
			want.Write(b)
			items = append(items, o)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteObjectsYAML(&got, res); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: -o yaml differs:\ngot:\n%s\nwant:\n%s", src, got.String(), want.String())
		}
		list := struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Items      []any  `json:"items"`
		}{"v1", "List", append([]any{}, items...)}
		wantJSON, _ := json.MarshalIndent(list, "", "  ")
		got.Reset()
		if err := WriteObjectsJSON(&got, res, nil); err != nil {
			t.Fatal(err)
		}
		if got.String() != string(wantJSON)+"\n" {
			t.Errorf("%s: -o json differs:\ngot:\n%s\nwant:\n%s", src, got.String(), wantJSON)
		}
		n++
	}
	if n < 50 {
		t.Fatalf("checked %d inputs, want at least 50", n)
	}
}
