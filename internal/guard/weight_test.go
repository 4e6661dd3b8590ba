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
}

// TestBinaryCarriesOnlyWhatItUses fails when the gwdev command depends on
// a package of heavyUnused (bench/binsize.sh says what each weighs).
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
		if why, ok := heavyUnused[p]; ok {
			t.Errorf("cmd/gwdev depends on %s: %s", p, why)
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
