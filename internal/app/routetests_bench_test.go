package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/internal/project"
)

// BenchmarkRunTests1000CasesOn1000Routes runs 1,000 routing test cases
// (each a request with a header match, its route, rule, status and a
// header the route's filter sets checked) on bench/genroutes' folder of
// 1,000 HTTPRoutes: loading, translating, serving and every request
// through the data plane. Issue 37 asks for under 10 s on the CI machine.
func BenchmarkRunTests1000CasesOn1000Routes(b *testing.B) {
	dir := b.TempDir()
	cmd := exec.Command("go", "run", "../../bench/genroutes", "-n", "1000", "-o", dir, "-port", "8080")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("genroutes: %v\n%s", err, out)
	}
	var t strings.Builder
	t.WriteString("cases:\n")
	for i := range 1000 {
		fmt.Fprintf(&t, `- request: {url: "http://app-%[1]d.example.com:8080/api/v1/x", headers: {x-canary: "true"}}
  expect:
    route: {kind: HTTPRoute, namespace: team-%[2]d, name: app-%[1]d, rule: 0}
    status: 200
    received: {headers: {x-route: app-%[1]d}}
`, i, i%10)
	}
	if err := os.WriteFile(filepath.Join(dir, "all.gwtest.yaml"), []byte(t.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		run, err := RunTests(context.Background(), dir, project.Flags{}, TestOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if n, failed := run.Counts(); n != 1000 || failed != 0 {
			b.Fatalf("%d cases, %d failed: %+v", n, failed, run.Files[0].Cases[0])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
}
