package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestTranslateLeavesInputAlone translates every golden input, once as
// loaded and once with apiVersion and kind cleared (as a Snapshot built in
// Go may be), reads the whole result, and checks that the input is still
// what it was: the Result shares what the engine only reads, so a write to
// a shared object would show here. It also checks that a later translation
// of the same input leaves an earlier Result as it was.
func TestTranslateLeavesInputAlone(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, clearTypeMeta := range []bool{false, true} {
				snap := testkit.Project(t).LoadBytes(filepath.Base(in), data).Snapshot
				if clearTypeMeta {
					snap.Each(func(_ engine.ObjectKey, o metav1.Object) {
						o.(runtime.Object).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
					})
				}
				before := snapshotJSON(t, snap)
				res := engine.Translate(snap, engine.Options{Now: goldenNow})
				first, err := report.ResultYAML(res)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(before, snapshotJSON(t, snap)); d != "" {
					t.Errorf("Translate changed its input (clearTypeMeta %v) (-before +after):\n%s", clearTypeMeta, d)
				}
				// A second translation with other options writes other
				// status; the first result must not see it.
				engine.Translate(snap, engine.Options{ControllerName: "example.com/other"})
				if again, _ := report.ResultYAML(res); string(again) != string(first) {
					t.Errorf("a later translation changed an earlier result (clearTypeMeta %v)", clearTypeMeta)
				}
			}
		})
	}
}

// snapshotJSON renders every object list of s (every slice field), without
// setting apiVersion and kind as Snapshot.Each would.
func snapshotJSON(t *testing.T, s *engine.Snapshot) string {
	t.Helper()
	var b strings.Builder
	v := reflect.ValueOf(s).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).Kind() != reflect.Slice {
			continue
		}
		j, err := json.MarshalIndent(v.Field(i).Interface(), "", " ")
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(v.Type().Field(i).Name + ": ")
		b.Write(j)
		b.WriteString("\n")
	}
	return b.String()
}
