package project

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/gwin" // registers the gwin profile; its Options
)

// ycCertificateFiles locates the local PEM of a gwin YCCertificate.
type ycCertificateFiles struct {
	// Cert and Key are PEM files, relative to gwdev.yaml's directory.
	Cert string `json:"cert"`
	Key  string `json:"key"`
}

// profileOptions merges gwdev.yaml "profiles:" with --profile flags
// (CLASS=PROFILE; flags win) and reads the "ycCertificates:" PEM files,
// for engine.Options.Profiles and ProfileOptions (the gwin profile's
// gwin.Options; nil when gwdev.yaml gives no profile options).
func profileOptions(cfg *projectConfig, cfgDir string, flags []string) (map[string]string, map[string]any, error) {
	known := engine.ProfileNames()
	profiles := map[string]string{}
	add := func(class, profile, where string) error {
		if class == "" || !slices.Contains(known, profile) {
			return fmt.Errorf("%s: %q: want GATEWAYCLASS=PROFILE with PROFILE one of %s", where, class+"="+profile, strings.Join(known, ", "))
		}
		profiles[class] = profile
		return nil
	}
	for class, p := range cfg.Profiles {
		if err := add(class, p, cfg.where["profiles."+class].String()+": profiles"); err != nil {
			return nil, nil, err
		}
	}
	for _, f := range flags {
		class, p, _ := strings.Cut(f, "=")
		if err := add(class, p, "--profile"); err != nil {
			return nil, nil, err
		}
	}
	var certs map[string]gwin.PEMCertificate
	for ref, files := range cfg.YCCertificates {
		if !strings.Contains(ref, "/") {
			ref = "default/" + ref
		}
		read := func(name string) ([]byte, error) {
			if name == "" {
				return nil, fmt.Errorf("gwdev.yaml ycCertificates %s: cert and key are required", ref)
			}
			if !filepath.IsAbs(name) {
				name = filepath.Join(cfgDir, name)
			}
			b, err := os.ReadFile(name)
			if err != nil {
				return nil, fmt.Errorf("gwdev.yaml ycCertificates %s: %w", ref, err)
			}
			return b, nil
		}
		crt, err := read(files.Cert)
		if err != nil {
			return nil, nil, err
		}
		key, err := read(files.Key)
		if err != nil {
			return nil, nil, err
		}
		if certs == nil {
			certs = map[string]gwin.PEMCertificate{}
		}
		certs[ref] = gwin.PEMCertificate{CertPEM: crt, KeyPEM: key}
	}
	if len(profiles) == 0 {
		profiles = nil
	}
	var opts map[string]any
	if certs != nil {
		opts = map[string]any{gwin.Name: gwin.Options{YCCertificates: certs}}
	}
	return profiles, opts, nil
}
