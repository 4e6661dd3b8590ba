package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// FuzzTranslate feeds arbitrary manifests through the loader and the engine:
// nothing may panic, and every table must validate.
func FuzzTranslate(f *testing.F) {
	ins, _ := filepath.Glob("testdata/*.in.yaml")
	for _, in := range ins {
		data, err := os.ReadFile(in)
		if err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("kind: Gateway\napiVersion: gateway.networking.k8s.io/v1\n"))
	l := testkit.Project(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		lr := l.LoadBytes("fuzz.yaml", data)
		res := engine.Translate(lr.Snapshot, engine.Options{Now: goldenNow})
		if err := res.Table.Validate(); err != nil {
			t.Fatalf("invalid table: %v", err)
		}
		if _, err := json.Marshal(res.Table); err != nil {
			t.Fatalf("marshal: %v", err)
		}
		checkGraph(t, res.Graph())
		if res.Objects.Len() != lr.Snapshot.Len() {
			t.Fatalf("translation has %d objects, input %d", res.Objects.Len(), lr.Snapshot.Len())
		}
	})
}
