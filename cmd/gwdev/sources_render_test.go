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

// helmProject copies testdata/helm-shop (a chart, values-dev.yaml and a
// gwdev.yaml whose render: runs `helm template`) into a temporary folder,
// with the Gateway on port, and puts a real helm on PATH.
func helmProject(t *testing.T, port int) string {
	t.Helper()
	onPath(t, "helm", externalTool(t, "helm"))
	dir := t.TempDir()
	src := filepath.Join("testdata", "helm-shop")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"values-dev.yaml": devValues(port, "shop-dev")})
	return dir
}

func devValues(port int, service string) string {
	return fmt.Sprintf("port: %d\nhostname: shop.dev.example.com\nservice: %s\n", port, service)
}

// TestUpServesAHelmChartThroughRender: up on a folder whose gwdev.yaml
// renders a chart with helm serves the rendered routes; a values change
// renders again; a failing render keeps the last good routes and shows
// helm's stderr; a new command in gwdev.yaml runs at once.
func TestUpServesAHelmChartThroughRender(t *testing.T) {
	port := freePort(t)
	dir := helmProject(t, port)
	out := runUp(t, &upOptions{debounce: 10 * time.Millisecond, kustomize: true, noTUI: true, trust: true}, dir)
	client := &http.Client{Timeout: 5 * time.Second}
	waitForUp(t, out, "the chart's route served", func() bool {
		c, s := echoGet(client, port, "shop.dev.example.com")
		return c == 200 && s == "shop-dev"
	})
	writeFiles(t, dir, map[string]string{"values-dev.yaml": devValues(port, "shop-v2")})
	waitForUp(t, out, "the new values served", func() bool {
		_, s := echoGet(client, port, "shop.dev.example.com")
		return s == "shop-v2"
	})
	// gwdev.yaml here holds render: only: up says where its settings come
	// from, not "backends from".
	if want := "gwdev: settings from " + filepath.Join(dir, "gwdev.yaml") + " (reloaded when it changes)\n"; !strings.Contains(out.String(), want) {
		t.Errorf("up does not say %q:\n%s", want, out)
	}
	// The reload line is printed after the new table serves.
	waitForOutput(t, out, "(render[0]: helm template shop ./chart -f values-dev.yaml)")
	route := filepath.Join(dir, "chart", "templates", "route.yaml")
	good, err := os.ReadFile(route)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"chart/templates/route.yaml": strings.Replace(string(good), ".Values.service }}", ".Values.missing.service }}", 1)})
	waitForOutput(t, out, "command failed: exit status 1; stderr:")
	waitForOutput(t, out, "nil pointer evaluating")
	// Printed on the line after the problem's.
	waitForOutput(t, out, "still serving the last good version from render[0]: helm template shop ./chart -f values-dev.yaml")
	if _, s := echoGet(client, port, "shop.dev.example.com"); s != "shop-v2" {
		t.Errorf("a failing render: served %q, want the last good shop-v2", s)
	}
	writeFiles(t, dir, map[string]string{"chart/templates/route.yaml": string(good), "values-dev.yaml": devValues(port, "shop-v3")})
	waitForUp(t, out, "the fixed chart served", func() bool {
		_, s := echoGet(client, port, "shop.dev.example.com")
		return s == "shop-v3"
	})
	// A new command in gwdev.yaml runs at once.
	writeFiles(t, dir, map[string]string{"gwdev.yaml": "render:\n  - command: helm template shop ./chart -f values-dev.yaml --set service=shop-cfg\n    watch: [chart, values-dev.yaml]\n"})
	waitForUp(t, out, "gwdev.yaml's new command served", func() bool {
		_, s := echoGet(client, port, "shop.dev.example.com")
		return s == "shop-cfg"
	})
}

// TestCheckRenderProblemNamesTheCommandAndLine: check runs the render and
// places a problem in its output at the command and line, naming the
// template helm says the document came from.
func TestCheckRenderProblemNamesTheCommandAndLine(t *testing.T) {
	dir := helmProject(t, 8080)
	writeFiles(t, dir, map[string]string{"values-dev.yaml": "port: 8080\nhostname: Shop_Dev\nservice: shop\n"})
	stdout, stderr, code := runGwdev(t, "", "check", "--trust", dir)
	want := "render[0]: helm template shop ./chart -f values-dev.yaml:"
	if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "Shop_Dev") ||
		!strings.Contains(stdout, "(from template shop/templates/route.yaml)") {
		t.Fatalf("exit %d, want 1 and a problem at %s…:\n%s%s", code, want, stdout, stderr)
	}
}

// TestExplainRunsTheRenderCommands: explain serves its answer from the
// rendered routes, naming the command and line.
func TestExplainRunsTheRenderCommands(t *testing.T) {
	dir := helmProject(t, 8080)
	stdout, stderr, code := runGwdev(t, "", "explain", "--trust", dir, "http://shop.dev.example.com:8080/")
	if code != 0 || !strings.Contains(stdout, "route:         HTTPRoute/default/shop") ||
		!strings.Contains(stdout, "source:        render[0]: helm template shop ./chart -f values-dev.yaml:") {
		t.Fatalf("explain: exit %d\n%s%s", code, stdout, stderr)
	}
}
