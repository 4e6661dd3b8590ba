package report

import (
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// BenchmarkWriteObjectsYAML10000HTTPRoutes is `gwdev check -o yaml`'s
// stream of every object with its status (and then the findings), on a
// folder of 10,000 HTTPRoutes with their Services from bench/genroutes:
// the rendering alone, after loading and translating once.
func BenchmarkWriteObjectsYAML10000HTTPRoutes(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "routes")
	if out, err := exec.Command("go", "run", "../../bench/genroutes", "-n", "10000", "-o", dir).CombinedOutput(); err != nil {
		b.Fatalf("genroutes: %v\n%s", err, out)
	}
	lr := testkit.Project(b).LoadDir(dir)
	res := engine.Translate(lr.Snapshot, engine.Options{Now: metav1.Now()})
	b.ResetTimer()
	for b.Loop() {
		if err := WriteObjectsYAML(io.Discard, res); err != nil {
			b.Fatal(err)
		}
		if err := WriteFindingsYAML(io.Discard, Findings(lr, res)); err != nil {
			b.Fatal(err)
		}
	}
}
