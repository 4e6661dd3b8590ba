package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/watch"
)

// clusterCRDs builds what `kubectl get crd -o yaml` prints on a cluster
// with the CRDs of an embedded bundle installed (read from its file in
// watch/crdbundles), plus a CRD of another project: a v1 List of
// CustomResourceDefinitions with the metadata and status an API server
// adds. multiDoc gives the items as documents separated by --- instead.
func clusterCRDs(t *testing.T, bundle string, multiDoc bool) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "watch", "crdbundles", bundle+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		CRDs []struct {
			Group, Kind, Plural string
			Namespaced          bool
			Versions            []struct {
				Name            string
				Served, Storage bool
				Schema          json.RawMessage
			}
		}
	}
	if err := json.NewDecoder(zr).Decode(&b); err != nil {
		t.Fatal(err)
	}
	crd := func(group, kind, plural string, namespaced bool, versions []map[string]any) map[string]any {
		scope := "Cluster"
		if namespaced {
			scope = "Namespaced"
		}
		var stored []string
		for _, v := range versions {
			if v["storage"] == true {
				stored = append(stored, v["name"].(string))
			}
		}
		names := map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind)}
		return map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": plural + "." + group, "resourceVersion": "4242", "uid": "0b9d3f8e-1111-2222-3333-444455556666",
				"creationTimestamp": "2026-01-01T00:00:00Z", "generation": 1,
				"annotations": map[string]any{"gateway.networking.k8s.io/channel": "standard"}},
			"spec": map[string]any{"group": group, "names": names, "scope": scope, "versions": versions},
			"status": map[string]any{"acceptedNames": names, "storedVersions": stored,
				"conditions": []any{map[string]any{"type": "Established", "status": "True", "reason": "InitialNamesAccepted"}}},
		}
	}
	var items []any
	for _, c := range b.CRDs {
		var versions []map[string]any
		for _, v := range c.Versions {
			m := map[string]any{"name": v.Name, "served": v.Served, "storage": v.Storage, "subresources": map[string]any{"status": map[string]any{}}}
			if len(v.Schema) > 0 && string(v.Schema) != "null" {
				var s any
				if err := json.Unmarshal(v.Schema, &s); err != nil {
					t.Fatal(err)
				}
				m["schema"] = map[string]any{"openAPIV3Schema": s}
			}
			versions = append(versions, m)
		}
		items = append(items, crd(c.Group, c.Kind, c.Plural, c.Namespaced, versions))
	}
	// Another project's CRD, of a kind gwdev knows the name of: ignored.
	items = append(items, crd("example.com", "HTTPRoute", "httproutes", true, []map[string]any{{"name": "v1", "served": true, "storage": true,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}))
	if !multiDoc {
		out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var buf bytes.Buffer
	for _, it := range items {
		out, err := yaml.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(out)
	}
	return buf.Bytes()
}

// TestCheckCRDsFromCluster runs gwdev check --crds FILE on samples with the
// output of kubectl get crd -o yaml built from the v1.5.1 standard bundle
// (a v1 List, then the same CRDs as separate documents): gwdev says what
// it says with --crds v1.5.1-standard, the file's name in place of the
// bundle's.
func TestCheckCRDsFromCluster(t *testing.T) {
	dir := t.TempDir()
	for _, multi := range []bool{false, true} {
		file := filepath.Join(dir, fmt.Sprintf("cluster-crds-%v.yaml", multi))
		if err := os.WriteFile(file, clusterCRDs(t, "v1.5.1-standard", multi), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, sample := range []string{"tcp-udp", "default-gateway", "listenerset", "tls-passthrough"} {
			src := filepath.Join("..", "..", "samples", sample)
			want, _, wantCode := runGwdev(t, "", "check", "--now", "2026-01-01T00:00:00Z", "--crds", "v1.5.1-standard", src)
			got, errOut, code := runGwdev(t, "", "check", "--now", "2026-01-01T00:00:00Z", "--crds", file, src)
			want = durations.ReplaceAllString(want, "in D")
			got = strings.ReplaceAll(durations.ReplaceAllString(got, "in D"), filepath.Base(file), "v1.5.1-standard")
			if got != want || code != wantCode {
				t.Errorf("%s (multi-doc %v): --crds FILE exit %d, --crds v1.5.1-standard exit %d\n--- FILE:\n%s%s--- bundle:\n%s", sample, multi, code, wantCode, got, errOut, want)
			}
		}
	}
	// The file's own CRDs decide, not gwdev's: TCPRoute is not served.
	out, _, code := runGwdev(t, "", "check", "--crds", filepath.Join(dir, "cluster-crds-false.yaml"), filepath.Join("..", "..", "samples", "tcp-udp"))
	if code != exitProblems || !strings.Contains(out, `no matches for kind "TCPRoute" in version "gateway.networking.k8s.io/v1" (cluster-crds-false.yaml does not serve it; it is served in the standard channel from v1.6 (v1.6.3-standard and newer))`) {
		t.Errorf("exit %d, want %d and TCPRoute not served:\n%s", code, exitProblems, out)
	}
	// A file with no Gateway API CRD is a usage error, said as such.
	empty := filepath.Join(dir, "none.yaml")
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: List\nitems: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runGwdev(t, "", "check", "--crds", empty, filepath.Join("..", "..", "samples", "basic"))
	if code != exitUsage || !strings.Contains(errOut, "none.yaml holds no Gateway API CustomResourceDefinition") {
		t.Errorf("exit %d, stderr %q; want a usage error naming the file", code, errOut)
	}
	_, errOut, code = runGwdev(t, "", "check", "--crds", "v1.3.0-standard", filepath.Join("..", "..", "samples", "basic"))
	if code != exitUsage || !strings.Contains(errOut, `--crds: "v1.3.0-standard" is neither an embedded bundle (v1.4.1-standard, `) {
		t.Errorf("exit %d, stderr %q; want a usage error listing the bundles", code, errOut)
	}
}

// TestCheckCRDsInProjectConfig checks gwdev.yaml's crds: (an embedded
// bundle, or a file relative to gwdev.yaml) and that --crds wins over it.
func TestCheckCRDsInProjectConfig(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"app.yaml", "platform.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "samples", "default-gateway", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pruned := `unknown field "spec.useDefaultGateways" in v1.6.3-standard`
	for _, cfg := range []string{"crds: v1.6.3-standard\n", "crds: crds/cluster.yaml\n"} {
		if err := os.MkdirAll(filepath.Join(dir, "crds"), 0o755); err != nil {
			t.Fatal(err)
		}
		// The folder is loaded too: its CRDs are kinds gwdev skips.
		if err := os.WriteFile(filepath.Join(dir, "crds", "cluster.yaml"), clusterCRDs(t, "v1.6.3-standard", false), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "gwdev.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runGwdev(t, "", "check", dir)
		got := strings.ReplaceAll(out, "cluster.yaml", "v1.6.3-standard")
		if code != exitProblems || !strings.Contains(got, pruned) {
			t.Errorf("%q: exit %d, want %d and %q:\n%s%s", cfg, code, exitProblems, pruned, out, errOut)
		}
		out, _, code = runGwdev(t, "", "check", "--crds", "v1.6.3-experimental", dir)
		if code != 0 || strings.Contains(out, "unknown field") {
			t.Errorf("%q with --crds v1.6.3-experimental: exit %d, want 0:\n%s", cfg, code, out)
		}
	}
}

// TestCheckStrictPassesNotes checks that the channel notes of a check
// without --crds are notes: --strict does not fail on them.
func TestCheckStrictPassesNotes(t *testing.T) {
	out, _, code := runGwdev(t, "", "check", "--strict", filepath.Join("..", "..", "samples", "default-gateway"))
	if code != 0 || !strings.Contains(out, "HTTPRoute/shop/shop: experimental channel only: v1.7.0-standard does not have field spec.useDefaultGateways") {
		t.Errorf("exit %d, want 0 with the note:\n%s", code, out)
	}
}

// TestCRDsList golden-tests gwdev crds list.
func TestCRDsList(t *testing.T) {
	out, errOut, code := runGwdev(t, "", "crds", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "crds-list.txt", out)
}

// TestUpCRDsServesWhatTheClusterStores runs gwdev up on the default-gateway
// sample with a free port, with and without --crds v1.6.3-standard, and
// sends a real request: the standard cluster stores the route without
// useDefaultGateways and the Gateway without defaultScope, so the route
// attaches to nothing and the request gets 404; the experimental CRDs
// serve it from the echo backend.
func TestUpCRDsServesWhatTheClusterStores(t *testing.T) {
	for _, tc := range []struct {
		crds string
		want int
	}{{"v1.6.3-standard", http.StatusNotFound}, {"", http.StatusOK}} {
		t.Run("crds="+tc.crds, func(t *testing.T) {
			dir := t.TempDir()
			port := freePort(t)
			app, err := os.ReadFile(filepath.Join("..", "..", "samples", "default-gateway", "app.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			platform, err := os.ReadFile(filepath.Join("..", "..", "samples", "default-gateway", "platform.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			platform = bytes.Replace(platform, []byte("port: 8080"), fmt.Appendf(nil, "port: %d", port), 1)
			for name, data := range map[string][]byte{"app.yaml": app, "platform.yaml": platform} {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := runUp(t, &upOptions{crds: tc.crds, debounce: 10 * time.Millisecond}, dir)
			client := &http.Client{Timeout: 5 * time.Second}
			var code int
			var svc string
			waitForUp(t, out, "the listener", func() bool { code, svc = echoGet(client, port, "shop.example.com"); return code > 0 })
			if code != tc.want {
				t.Errorf("GET shop.example.com: %d (%s), want %d; gwdev said:\n%s", code, svc, tc.want, out)
			}
			if tc.want == http.StatusOK && svc != "shop" {
				t.Errorf("served by %q, want the echo backend of shop/shop", svc)
			}
			if tc.crds != "" {
				// up serves the table before it prints the load's
				// problems: the listener may answer first.
				waitForOutput(t, out, `unknown field "spec.useDefaultGateways" in v1.6.3-standard`)
			}
		})
	}
}

// sampleCRDsLine is the line of a sample's README saying which cluster
// CRDs it needs.
var sampleCRDsLine = regexp.MustCompile("(?m)^Cluster CRDs: `(v[0-9.]+)-(standard|experimental)` or newer, (either channel|experimental channel only) ")

// TestSampleREADMEsSayTheirChannel checks every sample README's "Cluster
// CRDs:" line against the embedded bundles: the bundle named and every
// newer release (both channels for "either channel", experimental for
// "experimental channel only") load the sample without a problem, and the
// claim is tight: the standard bundle of the release before (or, for
// "experimental channel only", every standard bundle) does not.
func TestSampleREADMEsSayTheirChannel(t *testing.T) {
	dirs, _ := filepath.Glob("../../samples/*/README.md")
	if len(dirs) < 5 {
		t.Fatalf("found %d sample READMEs", len(dirs))
	}
	problems := func(bundle, dir string) []watch.Problem {
		b, err := watch.EmbeddedCRDBundle(bundle)
		if err != nil {
			t.Fatal(err)
		}
		l, err := watch.NewLoaderFor(b)
		if err != nil {
			t.Fatal(err)
		}
		return l.LoadDir(dir).Problems
	}
	for _, readme := range dirs {
		dir := filepath.Dir(readme)
		data, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		m := sampleCRDsLine.FindStringSubmatch(string(data))
		if m == nil {
			t.Errorf("%s has no line like \"Cluster CRDs: `v1.5.1-standard` or newer, either channel (…\"", readme)
			continue
		}
		release, channel, expOnly := m[1], m[2], m[3] == "experimental channel only"
		if expOnly != (channel == "experimental") {
			t.Errorf("%s: %s-%s with %q", readme, release, channel, m[3])
		}
		var previous string
		for _, name := range watch.CRDBundleNames() {
			rel, ch, _ := strings.Cut(name, "-")
			newer := watch.CompareReleases(rel, release) >= 0
			ps := problems(name, dir)
			switch {
			case newer && (!expOnly || ch == "experimental") && len(ps) > 0:
				t.Errorf("%s claims %s-%s or newer, but %s refuses it: %v", readme, release, channel, name, ps[0])
			case expOnly && ch == "standard" && len(ps) == 0:
				t.Errorf("%s claims the experimental channel only, but %s takes it", readme, name)
			}
			if ch == "standard" && watch.CompareReleases(rel, release) < 0 {
				previous = name
			}
		}
		if !expOnly && previous != "" && len(problems(previous, dir)) == 0 {
			t.Errorf("%s claims %s-%s or newer, but %s takes it too", readme, release, channel, previous)
		}
	}
}

// TestUpSaysWhenGwdevYAMLChangesCRDs: gwdev up makes its loader for the
// CRDs gwdev.yaml names at start; a later change to crds: is reported
// (with the file and field), not applied silently or ignored.
func TestUpSaysWhenGwdevYAMLChangesCRDs(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	writeFile(t, filepath.Join(dir, "routes.yaml"), fmt.Sprintf(upGateway, port)+"---\n"+routeFile("app", "app"))
	cfg := filepath.Join(dir, "gwdev.yaml")
	saveByRename(t, cfg, "crds: v1.6.3-standard\n")
	out := runUp(t, &upOptions{noTUI: true, debounce: 10 * time.Millisecond}, dir)
	client := &http.Client{Timeout: 5 * time.Second}
	waitForUp(t, out, "the route served", func() bool { c, _ := echoGet(client, port, "app.example.com"); return c == 200 })
	saveByRename(t, cfg, "crds: v1.4.1-standard\n")
	waitForOutput(t, out, `crds: changed from "v1.6.3-standard" to "v1.4.1-standard" while gwdev up runs: manifests are still judged against "v1.6.3-standard"; restart gwdev up to use the new CRDs`)
}

// TestDiffCRDs: gwdev diff judges both sides against --crds. A working
// tree that adds useDefaultGateways (experimental) with no default Gateway
// gets the engine's warning against gwdev's own CRDs; against
// v1.6.3-standard the field is a load problem and, pruned, warns of
// nothing.
func TestDiffCRDs(t *testing.T) {
	_, dir, git := gitRepoForTest(t)
	routes := filepath.Join(dir, "routes.yaml")
	original, err := os.ReadFile(routes)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Replace(original, []byte("spec:\n  parentRefs: [{name: gw}]"), []byte("spec:\n  useDefaultGateways: All\n  parentRefs: [{name: gw}]"), 1)
	if err := os.WriteFile(routes, data, 0o644); err != nil {
		t.Fatal(err)
	}
	warning := "new warning: useDefaultGateways: All, but no Gateway has defaultScope All"
	pruned := `unknown field "spec.useDefaultGateways" in v1.6.3-standard`
	out, errOut, code := runGwdev(t, "", "diff", "HEAD", dir)
	if code != exitProblems || !strings.Contains(out, warning) || strings.Contains(out, pruned) {
		t.Errorf("diff HEAD: exit %d, want %d and the engine's warning:\n%s%s", code, exitProblems, out, errOut)
	}
	out, errOut, code = runGwdev(t, "", "diff", "--crds", "v1.6.3-standard", "HEAD", dir)
	if code != exitProblems || !strings.Contains(out, "loaded without the field: "+pruned) || strings.Contains(out, warning) {
		t.Errorf("diff --crds v1.6.3-standard HEAD: exit %d, want %d and the pruned field (the route loads without it):\n%s%s", code, exitProblems, out, errOut)
	}
	// The other way round (the field removed again): the cluster no
	// longer drops it, which is better.
	git("commit", "-q", "-am", "useDefaultGateways")
	if err := os.WriteFile(routes, original, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runGwdev(t, "", "diff", "--crds", "v1.6.3-standard", "HEAD", dir)
	if code != 0 || !strings.Contains(out, "no longer dropped: "+pruned) {
		t.Errorf("diff --crds v1.6.3-standard HEAD, the field removed: exit %d, want 0 and the field no longer dropped:\n%s%s", code, out, errOut)
	}
}

// TestExplainCRDs: explain decides on what the cluster stores. Under
// v1.6.3-standard the default-gateway sample's route loses
// useDefaultGateways and attaches nowhere: the request is a 404, and
// explain says the files did not load cleanly.
func TestExplainCRDs(t *testing.T) {
	dir := "../../samples/default-gateway"
	out, errOut, code := runGwdev(t, "", "explain", "--dir", dir, "http://shop.example.com:8080/")
	if code != 0 || !strings.Contains(out, "httproute/shop/shop/rule/0") {
		t.Errorf("explain: exit %d, want the route's rule:\n%s%s", code, out, errOut)
	}
	out, errOut, code = runGwdev(t, "", "explain", "--dir", dir, "--crds", "v1.6.3-standard", "http://shop.example.com:8080/")
	if code != 1 || !strings.Contains(out, "404") || strings.Contains(out, "httproute/shop/shop/rule/0") || !strings.Contains(out, "note: 2 fields not in the cluster's CRDs (dropped, as that cluster stores the objects); run gwdev check --crds v1.6.3-standard ../../samples/default-gateway") {
		t.Errorf("explain --crds v1.6.3-standard: exit %d, want 1 (a 404) and the load problems noted:\n%s%s", code, out, errOut)
	}
}
