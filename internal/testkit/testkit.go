// Package testkit is the test scaffolding the packages' tests share: the
// project pipeline (internal/project) opened once per test process, the
// path from YAML manifests through it to the translation, and traffic more
// than one package's tests send (HugeHeaderFlood). Only _test.go files
// import it (TestOnlyTestsImport checks that): it sits above engine, watch
// and internal/project, so production code importing it would invert the
// floors.
package testkit

import (
	"sync"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/project"
)

var (
	projOnce sync.Once
	proj     *project.Project
	projErr  error
)

// Project returns the test process's project: no sources and no
// gwdev.yaml, judged against the newest CRDs, opened with project.Open as
// every command opens its own. It is opened on first use (its loader
// compiles every CRD schema, which is worth doing once) and is safe for
// concurrent use; tests load with its LoadBytes and LoadDir.
func Project(t testing.TB) *project.Project {
	t.Helper()
	projOnce.Do(func() { proj, projErr = project.Open(nil, project.Flags{}) })
	if projErr != nil {
		t.Fatal(projErr)
	}
	return proj
}

// Load loads manifests as one file named file and returns the snapshot. A
// load problem fails the test: inputs of engine, emulator and CLI tests
// must be valid manifests (invalid ones belong in watch's tests).
func Load(t testing.TB, file string, manifests []byte) *engine.Snapshot {
	t.Helper()
	lr := Project(t).LoadBytes(file, manifests)
	if len(lr.Problems) > 0 {
		t.Fatalf("loading %s: %v", file, lr.Problems)
	}
	return lr.Snapshot
}

// Translate loads manifests as one file named file (see Load) and
// translates them with opts through the pipeline (project.Translate).
func Translate(t testing.TB, file string, manifests []byte, opts engine.Options) *engine.Result {
	t.Helper()
	return project.Translate(Load(t, file, manifests), opts)
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
