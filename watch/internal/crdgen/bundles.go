package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// bundleReleases are the Gateway API releases whose CRDs gwdev embeds as
// bundles (`gwdev check --crds v1.5.1-standard`): the newest patch of every
// minor release from v1.4 on. Each gives two bundles, one per channel.
var bundleReleases = []string{"v1.4.1", "v1.5.1", "v1.6.3", "v1.7.0"}

// bundleChannels are the release channels of config/crd in the module.
var bundleChannels = []string{"standard", "experimental"}

// newGoToolchain is the toolchain crdgen asks the go command to use, for
// the download only, when a release's go.mod needs a newer Go than the one
// running (v1.7.0 says go 1.27).
const newGoToolchain = "go1.27.3"

// bundleGroups are the API groups whose CRDs go into a bundle.
var bundleGroups = []string{"gateway.networking.k8s.io", "gateway.networking.x-k8s.io"}

// bundle is the JSON form of one embedded bundle (watch/crdbundle.go reads
// it): the CRDs of one release and channel, each version's schema without
// descriptions.
type bundle struct {
	Release string      `json:"release"`
	Channel string      `json:"channel"`
	CRDs    []bundleCRD `json:"crds"`
}

type bundleCRD struct {
	Group      string          `json:"group"`
	Kind       string          `json:"kind"`
	Plural     string          `json:"plural"`
	Namespaced bool            `json:"namespaced"`
	Versions   []bundleVersion `json:"versions"`
}

type bundleVersion struct {
	Name    string                           `json:"name"`
	Served  bool                             `json:"served"`
	Storage bool                             `json:"storage"`
	Schema  *apiextensionsv1.JSONSchemaProps `json:"schema"`
}

// runBundles writes one gzip-compressed JSON file per release and channel
// to out, <release>-<channel>.json.gz.
func runBundles(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, rel := range bundleReleases {
		zipPath, err := moduleZip("sigs.k8s.io/gateway-api", rel)
		if err != nil {
			return err
		}
		files, err := readCRDsFromZip(zipPath)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		for _, ch := range bundleChannels {
			b, err := makeBundle(rel, ch, files[ch])
			if err != nil {
				return fmt.Errorf("%s %s: %w", rel, ch, err)
			}
			data, err := encodeBundle(b)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(out, rel+"-"+ch+".json.gz"), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// moduleZip asks the go command for the module zip of path@version,
// downloading it when needed. A release whose go.mod needs a newer Go than
// the one running is downloaded with newGoToolchain (the zip is all crdgen
// reads; nothing is built with it).
func moduleZip(mod, version string) (string, error) {
	zipPath, err := goModDownload(mod, version, "local")
	if err != nil && strings.Contains(err.Error(), "requires go >=") {
		zipPath, err = goModDownload(mod, version, newGoToolchain)
	}
	return zipPath, err
}

// goModDownload runs `go mod download -json mod@version` with GOTOOLCHAIN
// set to toolchain. The go command reports the zip even when it refuses the
// module's go line, once the zip is in the module cache: that is enough.
func goModDownload(mod, version, toolchain string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", "mod", "download", "-json", mod+"@"+version)
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+toolchain, "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Zip, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v: %s", mod, version, runErr, stderr.String())
	}
	if info.Zip != "" {
		if _, err := os.Stat(info.Zip); err == nil {
			return info.Zip, nil
		}
	}
	if info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", mod, version, info.Error)
	}
	return "", fmt.Errorf("go mod download %s@%s: no zip: %v: %s", mod, version, runErr, stderr.String())
}

// readCRDsFromZip returns the YAML files of config/crd/<channel>/ in a
// module zip, by channel then file name.
func readCRDsFromZip(zipPath string) (map[string]map[string][]byte, error) {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out := map[string]map[string][]byte{}
	for _, f := range zr.File {
		// sigs.k8s.io/gateway-api@vX/config/crd/<channel>/<file>.yaml
		_, rest, ok := strings.Cut(f.Name, "/config/crd/")
		if !ok || !strings.HasSuffix(rest, ".yaml") {
			continue
		}
		ch, name := path.Split(rest)
		ch = strings.TrimSuffix(ch, "/")
		if !slices.Contains(bundleChannels, ch) {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		if out[ch] == nil {
			out[ch] = map[string][]byte{}
		}
		out[ch][name] = data
	}
	for _, ch := range bundleChannels {
		if len(out[ch]) == 0 {
			return nil, fmt.Errorf("%s has no config/crd/%s", zipPath, ch)
		}
	}
	return out, nil
}

// makeBundle decodes the CRDs of one channel (files by name; other
// documents, such as a ValidatingAdmissionPolicy, are left out).
func makeBundle(release, channel string, files map[string][]byte) (*bundle, error) {
	b := &bundle{Release: release, Channel: channel}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		for _, doc := range bytes.Split(files[n], []byte("\n---")) {
			var head struct{ Kind string }
			if err := yaml.Unmarshal(doc, &head); err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			if head.Kind != "CustomResourceDefinition" {
				continue
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			if !slices.Contains(bundleGroups, crd.Spec.Group) {
				continue
			}
			b.CRDs = append(b.CRDs, compactBundleCRD(&crd))
		}
	}
	if len(b.CRDs) == 0 {
		return nil, errors.New("no CRDs")
	}
	return b, nil
}

func compactBundleCRD(crd *apiextensionsv1.CustomResourceDefinition) bundleCRD {
	c := bundleCRD{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, Plural: crd.Spec.Names.Plural,
		Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped}
	for _, v := range crd.Spec.Versions {
		bv := bundleVersion{Name: v.Name, Served: v.Served, Storage: v.Storage}
		if v.Served && v.Schema != nil {
			dropDescriptions(v.Schema.OpenAPIV3Schema)
			bv.Schema = v.Schema.OpenAPIV3Schema
		}
		c.Versions = append(c.Versions, bv)
	}
	return c
}

// encodeBundle writes b as gzip-compressed JSON, byte for byte the same for
// the same input (no name or time in the gzip header).
func encodeBundle(b *bundle) ([]byte, error) {
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
