package guard

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyUnused are packages gwdev's binary once carried for a few types:
// each loads into every command (issue 42). client-go's discovery package
// registers every built-in kind (kubernetes/scheme: 50 k8s.io/api groups,
// the OpenAPI client, go-restful); the typed clientset is more of the
// same. pull and check --cluster read through the dynamic client and a
// REST client with the meta/v1 types (watch/cluster.go).
var heavyUnused = map[string]string{
	"k8s.io/client-go/kubernetes":        "the typed clientset: read through the dynamic client",
	"k8s.io/client-go/kubernetes/scheme": "client-go's scheme of every built-in kind: decode with a scheme of the types read",
	"k8s.io/client-go/discovery":         "it registers client-go's scheme: ask through a REST client (watch/cluster.go, discoveryClient)",
	// go-graphviz's init compiles all of Graphviz's WebAssembly with wazero
	// at program start, in every command (gwdev version: 35 -> 61 MB of
	// RSS), and writes a compilation cache under $TMPDIR; its memory grows
	// with every layout (goccy/go-graphviz#111).
	"github.com/goccy/go-graphviz":  "Graphviz in Go compiles its WebAssembly in every command: the web view lays out in the browser (@viz-js/viz), graph --format svg|png runs dot",
	"github.com/tetratelabs/wazero": "a WebAssembly runtime in every command: lay graphs out in the browser or with Graphviz's dot",
	// jsonschema/v6's init compiles the meta-schemas of all five drafts
	// (1.7 MB of heap, 22,000 allocations) in every command: gwdev version
	// 39.6 -> 35.0 MB of RSS without it. Routing-test files are validated by
	// internal/routetest/schema.go, held to the library in its tests.
	"github.com/santhosh-tekuri/jsonschema": "its init compiles every draft's meta-schema in every command: routetest validates with schema.go (the library stays in tests)",
}

// TestBinaryCarriesOnlyWhatItUses fails when the gwdev command depends on
// a package of heavyUnused or one under it (bench/binsize.sh says what
// each weighs).
func TestBinaryCarriesOnlyWhatItUses(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/gwdev")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/gwdev: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for heavy, why := range heavyUnused {
			if p == heavy || strings.HasPrefix(p, heavy+"/") { // a package or one under it
				t.Errorf("cmd/gwdev depends on %s: %s", p, why)
			}
		}
	}
}

// TestMakeBuildBuildsAsARelease fails when `make build` does not build as
// `make release` does: static (with cgo, kustomize's plugin loader makes
// the linker keep every exported method: 79 MB instead of 48), without
// symbol table and DWARF, without the builder's paths, the version
// stamped.
func TestMakeBuildBuildsAsARelease(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not on PATH")
	}
	cmd := exec.Command("make", "-n", "build", "VERSION=v9.9.9")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	line := strings.TrimSpace(string(out))
	for _, want := range []string{"CGO_ENABLED=0 ", " -trimpath ", `-ldflags "-s -w -X main.version=v9.9.9"`, " ./cmd/gwdev"} {
		if !strings.Contains(line, want) {
			t.Errorf("make build runs %q: it lacks %q", line, want)
		}
	}
}
