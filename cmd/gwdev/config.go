package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/watch"
)

// projectConfig is gwdev.yaml in the project root.
type projectConfig struct {
	// Backends maps "namespace/service:port" (or "service:port" in default)
	// to a local "host:port" that serves it.
	Backends map[string]string `json:"backends,omitempty"`
	// Profiles maps GatewayClass names to implementation profiles
	// (profiles.go).
	Profiles map[string]string `json:"profiles,omitempty"`
	// YCCertificates gives the local PEM files of gwin YCCertificate
	// references, keyed by "namespace/name" (profiles.go).
	YCCertificates map[string]ycCertificateFiles `json:"ycCertificates,omitempty"`
}

// backendKey matches "ns/name:port" or "name:port".
var backendKey = regexp.MustCompile(`^(?:([a-z0-9]([-a-z0-9]*[a-z0-9])?)/)?([a-z0-9]([-a-z0-9]*[a-z0-9])?):([0-9]{1,5})$`)

// loadProjectConfig reads gwdev.yaml (or gwdev.yml) from dir; a missing file
// is an empty config.
func loadProjectConfig(dir string) (*projectConfig, string, error) {
	for _, name := range []string{"gwdev.yaml", "gwdev.yml"} {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, p, err
		}
		// The decoder refuses an alias bomb too, but after some work and
		// without a position; this check words it with file:line.
		if err := watch.CheckAliases(p, data); err != nil {
			return nil, p, err
		}
		var c projectConfig
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			return nil, p, fmt.Errorf("%s: %w", p, err)
		}
		return &c, p, nil
	}
	return &projectConfig{}, "", nil
}

// backendMappings merges gwdev.yaml backends with --backend flags
// ("ns/name:port=host:port"; flags win) into engine keys "ns/name:port".
func backendMappings(cfg *projectConfig, flags []string) (map[string]string, error) {
	out := map[string]string{}
	add := func(key, target, where string) error {
		m := backendKey.FindStringSubmatch(key)
		if m == nil {
			return fmt.Errorf("%s: %q is not namespace/service:port", where, key)
		}
		ns := m[1]
		if ns == "" {
			ns = "default"
		}
		if !strings.Contains(target, ":") {
			return fmt.Errorf("%s: target %q is not host:port", where, target)
		}
		out[ns+"/"+m[3]+":"+m[5]] = target
		return nil
	}
	for k, v := range cfg.Backends {
		if err := add(k, v, "gwdev.yaml backends"); err != nil {
			return nil, err
		}
	}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("--backend %q: want namespace/service:port=host:port", f)
		}
		if err := add(k, v, "--backend"); err != nil {
			return nil, err
		}
	}
	return out, nil
}
