package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/internal/app"
)

// TestSpecReasonsMatchTheAPI keeps app.SpecReasons equal to the
// *ConditionReason constants of the gateway-api module gwdev builds with.
func TestSpecReasonsMatchTheAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("finding the gateway-api module: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "apis", "v1", "*.go"))
	re := regexp.MustCompile(`(?m)^\s*\w+\s+\w+ConditionReason\s*=\s*"(\w+)"`)
	var want []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			want = append(want, m[1])
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	var got []string
	for r := range app.SpecReasons {
		got = append(got, r)
	}
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("app.SpecReasons = %v\nthe API's reasons = %v", got, want)
	}
}
