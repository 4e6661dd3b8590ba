package engine_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestTranslateTableFirst: for every golden input, the table that
// TranslateTableFirst returns can be read (here: serialised, which reads
// every field) while finish runs on another goroutine — under -race this
// fails if finish writes to the table — and the finished result is the one
// Translate gives, byte for byte.
func TestTranslateTableFirst(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, in := range ins {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		lr := testkit.Project(t).LoadBytes(filepath.Base(in), data)
		opts := engine.Options{Now: goldenNow}
		want, err := report.ResultYAML(engine.Translate(lr.Snapshot, opts))
		if err != nil {
			t.Fatal(err)
		}
		res, finish := engine.TranslateTableFirst(nil, lr.Snapshot, opts)
		done := make(chan struct{})
		go func() {
			defer close(done)
			finish()
		}()
		if _, err := json.Marshal(res.Table); err != nil {
			t.Fatal(err)
		}
		<-done
		got, err := report.ResultYAML(res)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the table-first result differs from Translate's", in)
		}
	}
}
