package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestCRDsAreGenerated checks that watch/crds holds exactly what crdgen
// writes for the gateway-api version in go.mod.
func TestCRDsAreGenerated(t *testing.T) {
	out := t.TempDir()
	if err := run(out); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2*len(crdFiles()) {
		t.Errorf("crdgen wrote %d files, want %d", len(entries), 2*len(crdFiles()))
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "crds", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("watch/crds/%s is not what crdgen writes; run go generate ./watch", e.Name())
		}
	}
}

// TestBundlesAreGenerated checks that watch/crdbundles holds exactly what
// crdgen -bundles writes from the released modules. It needs the module
// zips (the module cache, or the network and, for v1.7.0, the go1.27
// toolchain download); it is skipped when they cannot be had.
func TestBundlesAreGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads modules")
	}
	for _, rel := range bundleReleases {
		if _, err := moduleZip("sigs.k8s.io/gateway-api", rel); err != nil {
			t.Skipf("gateway-api %s is not available here: %v", rel, err)
		}
	}
	out := t.TempDir()
	if err := runBundles(out); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(bundleReleases) * len(bundleChannels); len(entries) != want {
		t.Errorf("crdgen wrote %d bundles, want %d", len(entries), want)
	}
	committed, err := os.ReadDir(filepath.Join("..", "..", "crdbundles"))
	if err != nil {
		t.Fatal(err)
	}
	if len(committed) != len(entries) {
		t.Errorf("watch/crdbundles has %d files, crdgen writes %d; run go generate ./watch", len(committed), len(entries))
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "crdbundles", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		// The JSON inside is compared: gzip's bytes may differ between Go
		// releases for the same input.
		if !bytes.Equal(gunzip(t, got), gunzip(t, want)) {
			t.Errorf("watch/crdbundles/%s is not what crdgen writes; run go generate ./watch", e.Name())
		}
	}
}

// gunzip returns the decompressed contents of a gzip file's bytes.
func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
