package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/internal/routetest"
)

// TestRoutingTestsHumanSummary: the human summary counts cases and files
// in words ("1 file", not "1 files").
func TestRoutingTestsHumanSummary(t *testing.T) {
	for _, c := range []struct {
		files, cases int
		want         string
	}{
		{1, 1, "PASS  1 case in 1 file\n"},
		{2, 3, "PASS  6 cases in 2 files\n"},
	} {
		run := &routetest.Run{}
		for range c.files {
			f := routetest.FileResult{Path: "a.gwtest.yaml"}
			for range c.cases {
				f.Cases = append(f.Cases, routetest.CaseResult{Name: "x"})
			}
			run.Files = append(run.Files, f)
		}
		var b bytes.Buffer
		if err := WriteRoutingTests(&b, run, "human", "test"); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(b.String(), c.want) {
			t.Errorf("%d files of %d cases: %q, want it to end with %q", c.files, c.cases, b.String(), c.want)
		}
	}
}
