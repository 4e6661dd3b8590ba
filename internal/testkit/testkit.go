// Package testkit is the test scaffolding the packages' tests share: one
// manifest loader per test process, the path from YAML manifests through
// the loader to engine.Translate, and traffic more than one package's
// tests send (HugeHeaderFlood). Only _test.go files import it
// (TestOnlyTestsImport checks that): it sits above engine and watch, so
// production code importing it would invert the floors.
package testkit

import (
	"sync"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

var (
	loaderOnce sync.Once
	loader     *watch.Loader
	loaderErr  error
)

// Loader returns the test process's manifest loader, made on first use
// (watch.NewLoader compiles every CRD schema, which is worth doing once).
// A Loader is safe for concurrent use.
func Loader(t testing.TB) *watch.Loader {
	t.Helper()
	loaderOnce.Do(func() { loader, loaderErr = watch.NewLoader() })
	if loaderErr != nil {
		t.Fatal(loaderErr)
	}
	return loader
}

// Load loads manifests as one file named file and returns the snapshot. A
// load problem fails the test: inputs of engine, emulator and CLI tests
// must be valid manifests (invalid ones belong in watch's tests).
func Load(t testing.TB, file string, manifests []byte) *engine.Snapshot {
	t.Helper()
	lr := Loader(t).LoadBytes(file, manifests)
	if len(lr.Problems) > 0 {
		t.Fatalf("loading %s: %v", file, lr.Problems)
	}
	return lr.Snapshot
}

// Translate loads manifests as one file named file (see Load) and
// translates them with opts.
func Translate(t testing.TB, file string, manifests []byte, opts engine.Options) *engine.Result {
	t.Helper()
	return engine.Translate(Load(t, file, manifests), opts)
}

// ErrorFindings lists a result's error findings as "Kind ns/name
// Condition: message", for tests that want none.
func ErrorFindings(res *engine.Result) []string {
	var out []string
	for _, f := range res.Findings {
		if f.Severity == engine.SeverityError {
			out = append(out, f.Object.String()+" "+f.Condition()+": "+f.Message)
		}
	}
	return out
}
