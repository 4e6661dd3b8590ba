package engine_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	_ "github.com/gwdev/gwdev/engine/ingressnginx" // registers the ingress-nginx front end (the ingress-* cases)
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.out.yaml from the current engine")

// goldenNow is the fixed clock of every golden case.
var goldenNow = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

// translateFile loads one manifest file and translates it. Load problems
// are an error: golden inputs must be valid manifests (invalid ones belong
// in the watch package's tests).
func translateFile(t testing.TB, path string) *engine.Result {
	t.Helper()
	return engine.Translate(loadGolden(t, path), engine.Options{Now: goldenNow})
}

// loadGolden loads a golden input, its columns dropped (see translateFile).
func loadGolden(t testing.TB, path string) *engine.Snapshot {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lr := testkit.Project(t).LoadBytes(filepath.Base(path), data)
	for _, p := range lr.Problems {
		t.Errorf("load problem: %s", p)
	}
	dropColumns(lr.Snapshot)
	return lr.Snapshot
}

// dropColumns clears the columns of the snapshot's sources: the goldens
// locate findings and routes by file and line, so that they read as before
// columns were recorded. The loader's columns are tested in watch
// (TestFieldLines) and, through the findings, in cmd/gwdev
// (TestCheckFindingColumns).
func dropColumns(s *engine.Snapshot) {
	drop := func(src *engine.Source) {
		src.Column = 0
		if src.Fields != nil {
			fields := make(map[string]engine.FieldPos, len(src.Fields))
			for p, pos := range src.Fields {
				fields[p] = engine.FieldPos{Line: pos.Line}
			}
			src.Fields = fields
		}
	}
	for k, src := range s.Sources {
		drop(&src)
		s.Sources[k] = src
	}
	for i := range s.SourceList {
		drop(&s.SourceList[i].Source)
	}
}

// matchGoldenFile compares got with the golden file out, or writes it
// there under -update (and returns false: nothing more to check).
func matchGoldenFile(t *testing.T, out string, got []byte) bool {
	t.Helper()
	if *update {
		if err := os.WriteFile(out, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return false
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("%v (run go test ./engine -update)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", out, d)
	}
	return true
}

// TestGolden translates every testdata/*.in.yaml and compares the result with
// the matching *.out.yaml. Run `go test ./engine -update` to regenerate.
func TestGolden(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) == 0 {
		t.Fatal("no golden cases in testdata")
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			res := translateFile(t, in)
			if err := res.Table.Validate(); err != nil {
				t.Errorf("table does not validate: %v", err)
			}
			got, err := report.ResultYAML(res)
			if err != nil {
				t.Fatal(err)
			}
			if !matchGoldenFile(t, strings.TrimSuffix(in, ".in.yaml")+".out.yaml", got) {
				return
			}
			// Translating twice gives the same bytes: the engine is deterministic.
			again, _ := report.ResultYAML(translateFile(t, in))
			if !bytes.Equal(got, again) {
				t.Error("second translation differs from the first")
			}
		})
	}
}
