package main

import (
	"bytes"
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
