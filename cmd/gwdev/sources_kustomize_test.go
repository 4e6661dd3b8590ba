package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeFiles writes files (slash paths relative to dir) by rename, as
// editors save.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
}

// kustomizeProject is a base (Gateway, HTTPRoute, Service) and an overlay
// that moves it to namespace dev and patches the route's hostname.
func kustomizeProject(port int, service string) map[string]string {
	return map[string]string{
		"base/kustomization.yaml": "resources: [gateway.yaml, route.yaml]\n",
		"base/gateway.yaml":       fmt.Sprintf(upGateway, port),
		"base/route.yaml": fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop}
spec:
  parentRefs: [{name: web}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: %s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: %s}
spec: {ports: [{port: 80}]}
`, service, service),
		"overlays/dev/kustomization.yaml": "namespace: dev\nresources: [../../base]\npatches: [{path: hostname.yaml}]\n",
		"overlays/dev/hostname.yaml": `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop}
spec:
  hostnames: [shop.dev.example.com]
`,
	}
}

// TestUpServesAKustomizeOverlay: `gwdev up overlays/dev` serves what the
// overlay builds (its patch changes the hostname), a save of the base's
// file (outside the watched folder) reloads, and a broken base keeps the
// last good routes serving with the reason shown.
func TestUpServesAKustomizeOverlay(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	writeFiles(t, dir, kustomizeProject(port, "shop"))
	overlay := filepath.Join(dir, "overlays", "dev")
	out := runUp(t, &upOptions{debounce: 10 * time.Millisecond, kustomize: true, noTUI: true}, overlay)
	client := &http.Client{Timeout: 5 * time.Second}
	waitForUp(t, out, "the overlay's hostname served", func() bool {
		c, s := echoGet(client, port, "shop.dev.example.com")
		return c == 200 && s == "shop"
	})
	if c, _ := echoGet(client, port, "shop.example.com"); c != 404 {
		t.Errorf("the base's hostname, which the patch replaced, answered %d, want 404", c)
	}
	writeFiles(t, dir, map[string]string{"base/route.yaml": kustomizeProject(port, "shop-v2")["base/route.yaml"]})
	waitForUp(t, out, "the base's new backend served", func() bool {
		_, s := echoGet(client, port, "shop.dev.example.com")
		return s == "shop-v2"
	})
	// The reload line is printed after the new table serves.
	waitForOutput(t, out, "reload #1 (kustomize build "+overlay+")")
	writeFiles(t, dir, map[string]string{"base/kustomization.yaml": "resources: [gateway.yaml, route.yaml, missing.yaml]\n"})
	waitForOutput(t, out, "kustomize build failed")
	if _, s := echoGet(client, port, "shop.dev.example.com"); s != "shop-v2" {
		t.Errorf("a failing build: served %q, want the last good shop-v2", s)
	}
	// The build's problem, then what keeps serving, each its own line.
	waitForOutput(t, out, "still serving the last good version")
	if !strings.Contains(out.String(), "missing.yaml") {
		t.Errorf("the failing build is not reported with its reason:\n%s", out)
	}
}

// TestCheckKustomizeOverlayProblemAtThePatch: check on an overlay whose
// patch writes a bad value names the patch file and line; --kustomize=false
// reads the files one by one.
func TestCheckKustomizeOverlayProblemAtThePatch(t *testing.T) {
	dir := t.TempDir()
	files := kustomizeProject(8080, "shop")
	files["overlays/dev/hostname.yaml"] = strings.Replace(files["overlays/dev/hostname.yaml"], "shop.dev.example.com", "Shop_Dev", 1)
	writeFiles(t, dir, files)
	overlay := filepath.Join(dir, "overlays", "dev")
	stdout, _, code := runGwdev(t, "", "check", overlay)
	want := filepath.Join(overlay, "hostname.yaml") + ":5:"
	if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "Shop_Dev") {
		t.Fatalf("exit %d, want 1 and a problem at %s…:\n%s", code, want, stdout)
	}
	stdout, _, _ = runGwdev(t, "", "check", "--kustomize=false", overlay)
	if !strings.Contains(stdout, "kustomization.yaml") || !strings.Contains(stdout, "apiVersion") {
		t.Errorf("--kustomize=false should read kustomization.yaml as a manifest:\n%s", stdout)
	}
}
