// Command crdgen copies the Gateway API CustomResourceDefinitions that gwdev
// validates against from the sigs.k8s.io/gateway-api module (the version in
// go.mod, experimental channel) into watch/crds, and writes next to each
// <name>.yaml the compact form gwdev embeds, <name>.json: the
// openAPIV3Schema of every served version, by version name, without
// descriptions, as encoding/json writes it. Descriptions are most of the
// YAML and no validation reads them; the compact form decodes about ten
// times faster, one version at a time. Run it with `go generate ./watch`
// after bumping the module.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
)

// crdFiles are the experimental-channel CRDs of the kinds gwdev loads: one
// per Gateway API kind of engine's kind registry.
func crdFiles() []string {
	var out []string
	for _, k := range engine.Kinds() {
		if f := k.CRD(); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func main() {
	out := flag.String("out", "crds", "directory to write the CRDs to")
	bundles := flag.String("bundles", "", "write the bundles of every release in bundleReleases to this directory instead")
	flag.Parse()
	run := run
	if *bundles != "" {
		run, *out = runBundles, *bundles
	}
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
	for _, name := range crdFiles() {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return fmt.Errorf("reading CRD: %w", err)
		}
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return fmt.Errorf("writing CRD: %w", err)
		}
		compact, err := compactCRD(data)
		if err != nil {
			return fmt.Errorf("compacting CRD %s: %w", name, err)
		}
		jsonName := strings.TrimSuffix(name, ".yaml") + ".json"
		if err := os.WriteFile(filepath.Join(out, jsonName), compact, 0o644); err != nil {
			return fmt.Errorf("writing CRD: %w", err)
		}
	}
	return nil
}

// compactCRD decodes a CRD the way gwdev used to decode the YAML and
// encodes the schema of each served version without descriptions.
func compactCRD(data []byte) ([]byte, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, err
	}
	schemas := map[string]*apiextensionsv1.JSONSchemaProps{}
	for _, v := range crd.Spec.Versions {
		if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		dropDescriptions(v.Schema.OpenAPIV3Schema)
		schemas[v.Name] = v.Schema.OpenAPIV3Schema
	}
	out, err := json.Marshal(schemas)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// dropDescriptions clears Description in s and every schema below it.
func dropDescriptions(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	s.Description = ""
	each := func(list []apiextensionsv1.JSONSchemaProps) {
		for i := range list {
			dropDescriptions(&list[i])
		}
	}
	eachInMap := func(m map[string]apiextensionsv1.JSONSchemaProps) {
		for k, v := range m {
			dropDescriptions(&v)
			m[k] = v
		}
	}
	if s.Items != nil {
		dropDescriptions(s.Items.Schema)
		each(s.Items.JSONSchemas)
	}
	each(s.AllOf)
	each(s.OneOf)
	each(s.AnyOf)
	dropDescriptions(s.Not)
	eachInMap(s.Properties)
	eachInMap(s.PatternProperties)
	eachInMap(s.Definitions)
	if s.AdditionalProperties != nil {
		dropDescriptions(s.AdditionalProperties.Schema)
	}
	if s.AdditionalItems != nil {
		dropDescriptions(s.AdditionalItems.Schema)
	}
	for k, v := range s.Dependencies {
		dropDescriptions(v.Schema)
		s.Dependencies[k] = v
	}
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
