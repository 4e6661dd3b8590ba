package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/watch"
)

// FuzzPullFileName: whatever apiVersion, kind, namespace and name a server
// returns for a kind pull asked for, pull writes only inside DIR, a file
// named after the kind asked for (its resource in the kinds table) in a
// folder named after a valid namespace — or it refuses. It runs pull's
// naming and writing without ReadCluster's checks of the object, which
// refuse most of these before (watch's FuzzCheckListed).
func FuzzPullFileName(f *testing.F) {
	for _, s := range [][4]string{
		{"gateway.networking.k8s.io/v1", "../../../../x", "default", "g"},
		{"gateway.networking.k8s.io/v1", "HTTPRoute", "../x", "r"},
		{"gateway.networking.k8s.io/v1", "HTTPRoute", "/etc", "r"},
		{"gateway.networking.k8s.io/v1", "HTTPRoute", "..", "r"},
		{"gateway.networking.k8s.io/v1", "HTTPRoute", ".", "r"},
		{"gateway.networking.k8s.io/v1", "HTTPRoute", "a/../../b", "r"},
		{"gateway.networking.k8s.io/v1", "HTTPRoute", "default\x00", "r"},
		{"gateway.networking.k8s.io/v1", "HTTPRoute", "cluster", "r"},
		{"v1", "Namespace", "", "../../n"},
		{"v1", "Namespace", "default", "n"},
		{"apps/v1", "Deployment", strings.Repeat("a", 64), "d"},
	} {
		for which := range uint8(3) {
			f.Add(which, s[0], s[1], s[2], s[3])
		}
	}
	var kinds []*engine.Kind
	for _, k := range engine.Kinds() {
		if k.Resource != "" {
			kinds = append(kinds, k)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, apiVersion, kind, namespace, name string) {
		k := kinds[int(which)%len(kinds)]
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"namespace": namespace, "name": name}}}
		objs := &watch.ClusterObjects{Objects: []*unstructured.Unstructured{u}, Listed: []*engine.Kind{k}}
		files, err := app.PulledFiles(objs, "# pulled\n")
		if err != nil {
			return
		}
		top := t.TempDir()
		dir := filepath.Join(top, "a", "b", "DIR")
		if err := app.WritePulled(io.Discard, dir, files, 0o644); err != nil {
			return
		}
		folder := "cluster"
		if k.Namespaced {
			folder = namespace
		}
		want := filepath.Join(dir, folder, k.Resource+".yaml")
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && p != want {
				t.Errorf("kind %s, object (%q, %q, %q, %q): pull wrote %s, want only %s", k.Kind, apiVersion, kind, namespace, name, p, want)
			}
			return nil
		})
		if _, err := os.Stat(want); err != nil {
			t.Errorf("kind %s, namespace %q: %v", k.Kind, namespace, err)
		}
	})
}
