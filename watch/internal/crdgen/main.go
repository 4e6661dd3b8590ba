// Command crdgen copies the Gateway API CustomResourceDefinitions that gwdev
// validates against from the sigs.k8s.io/gateway-api module (the version in
// go.mod, experimental channel) into watch/crds. Run it with `go generate
// ./watch` after bumping the module.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// crdFiles are the experimental-channel CRDs of the kinds gwdev loads.
var crdFiles = []string{
	"gateway.networking.k8s.io_backendtlspolicies.yaml",
	"gateway.networking.k8s.io_gatewayclasses.yaml",
	"gateway.networking.k8s.io_gateways.yaml",
	"gateway.networking.k8s.io_grpcroutes.yaml",
	"gateway.networking.k8s.io_httproutes.yaml",
	"gateway.networking.k8s.io_listenersets.yaml",
	"gateway.networking.k8s.io_referencegrants.yaml",
	"gateway.networking.k8s.io_tcproutes.yaml",
	"gateway.networking.k8s.io_tlsroutes.yaml",
	"gateway.networking.k8s.io_udproutes.yaml",
}

func main() {
	out := flag.String("out", "crds", "directory to write the CRDs to")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "crdgen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	dir, err := moduleDir("sigs.k8s.io/gateway-api")
	if err != nil {
		return err
	}
	src := filepath.Join(dir, "config", "crd", "experimental")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, name := range crdFiles {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return fmt.Errorf("reading CRD: %w", err)
		}
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return fmt.Errorf("writing CRD: %w", err)
		}
	}
	return nil
}

// moduleDir asks the go command where the module in go.mod lives.
func moduleDir(path string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go list -m %s: %w: %s", path, err, stderr.String())
	}
	dir := strings.TrimSpace(stdout.String())
	if dir == "" {
		return "", fmt.Errorf("module %s is not in the module cache (run go mod download)", path)
	}
	return dir, nil
}
