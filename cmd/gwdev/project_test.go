package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gwdev/gwdev/internal/app"
)

// authIngress is an Ingress whose auth-url becomes an ExternalAuth filter,
// which the standard channel does not have.
const authIngress = `
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations:
    nginx.ingress.kubernetes.io/auth-url: "http://auth.default.svc.cluster.local/check"
spec:
  rules:
  - host: shop.example
    http:
      paths:
      - pathType: Prefix
        path: /
        backend: {service: {name: web, port: {number: 80}}}
`

// TestMigrateCRDs: migrate's output is judged against the CRDs of --crds
// (or gwdev.yaml's crds:), as the folder is: v1.4.1-standard has no
// ExternalAuth filter, so the converted route is refused, named with its
// line, and migrate and --compare exit 1. Without --crds the output loads
// and the channel note says what it needs.
func TestMigrateCRDs(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ing.yaml", ingressClassNginx+authIngress+ingressServices("web", "auth"))
	_, stderr, code := runGwdev(t, "", "migrate", dir)
	if code != 0 || !strings.Contains(stderr, "experimental channel only") {
		t.Fatalf("migrate without --crds: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runGwdev(t, "", "migrate", "--crds", "v1.4.1-standard", dir)
	if code != exitProblems || !strings.Contains(stderr, "judged against the CRDs v1.4.1-standard") ||
		!strings.Contains(stderr, `<stdout>:46:7: HTTPRoute/default/shop-example: spec.rules[0].filters[0].type: Unsupported value: "ExternalAuth"`) {
		t.Errorf("migrate --crds v1.4.1-standard: exit %d\n%s", code, stderr)
	}
	// gwdev.yaml's crds: says the same.
	write(t, dir, "gwdev.yaml", "crds: v1.4.1-standard\n")
	_, stderr, code = runGwdev(t, "", "migrate", dir)
	if code != exitProblems || !strings.Contains(stderr, "judged against the CRDs v1.4.1-standard") {
		t.Errorf("migrate with gwdev.yaml crds: v1.4.1-standard: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := runGwdev(t, "", "migrate", "--compare", "--format", "json", dir)
	var rep struct {
		Problems []struct {
			File, Message string
			Line          int
		} `json:"convertedProblems"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitProblems || len(rep.Problems) == 0 ||
		rep.Problems[0].File != app.MigratedFile {
		t.Errorf("migrate --compare with crds v1.4.1-standard: exit %d, %v, %+v\n%s%s", code, err, rep.Problems, stdout, stderr)
	}
}

// TestMigrateCompareBackendMapping: --compare honours gwdev.yaml's
// backends: both sides' requests for the mapped Service reach the local
// server (before, the conversion and both sides ignored gwdev.yaml and
// answered from the echo backend).
func TestMigrateCompareBackendMapping(t *testing.T) {
	var hits atomic.Int64
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("local"))
	}))
	defer local.Close()
	dir := t.TempDir()
	write(t, dir, "ing.yaml", ingressClassNginx+ingress("web", "shop.example", nil, "Prefix / web", "Exact /health web")+ingressServices("web"))
	write(t, dir, "gwdev.yaml", "backends:\n  default/web:80: "+strings.TrimPrefix(local.URL, "http://")+"\n")
	stdout, stderr, _ := runGwdev(t, "", "migrate", "--compare", "--format", "json", dir)
	var rep struct {
		Requests int `json:"requests"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	// Every request either reaches the backend on both sides or is
	// answered by a redirect; most reach it.
	if n := hits.Load(); n < int64(rep.Requests) {
		t.Errorf("the mapped backend got %d requests of %d sent to each side\n%s", n, rep.Requests, stdout)
	}
}

// TestMigrateCompareEveryClass: --compare sends each Ingress's requests to
// its own IngressClass and to the Gateway converted from it. The second
// class's rewrite (not carried over) must show; before, every request went
// to the first class, where both sides answered the second class's hosts
// with 404 alike.
func TestMigrateCompareEveryClass(t *testing.T) {
	dir := t.TempDir()
	internal := strings.NewReplacer("name: nginx", "name: internal",
		"    ingressclass.kubernetes.io/is-default-class: \"true\"\n", "", "  annotations:\n", "").Replace(ingressClassNginx)
	manifests := ingressClassNginx + "---\n" + internal +
		ingress("web", "shop.example", nil, "Prefix / web") +
		ingress("legacy", "old.internal", append(nginxAnn("rewrite-target", "/$2"), "kubernetes.io/ingress.class", "internal"),
			"ImplementationSpecific /legacy(/|$)(.*) web") +
		ingressServices("web")
	write(t, dir, "ing.yaml", manifests)
	stdout, stderr, code := runGwdev(t, "", "migrate", "--compare", "--format", "json", dir)
	var rep struct {
		Differences []struct {
			Request struct {
				Class, Host, Path string
			} `json:"request"`
			Ingress struct{ Status int } `json:"ingress"`
			Gateway struct {
				Status int
				Error  string
			} `json:"gateway"`
		} `json:"differences"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitProblems {
		t.Fatalf("exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	found := false
	for _, d := range rep.Differences {
		if d.Gateway.Error != "" {
			t.Errorf("%s%s: %s", d.Request.Host, d.Request.Path, d.Gateway.Error)
		}
		if d.Request.Host == "old.internal" && d.Request.Path == "/LEGACY" {
			found = d.Request.Class == "internal" && d.Ingress.Status == 200 && d.Gateway.Status == 404
		}
		if d.Request.Host == "shop.example" && d.Request.Class != "nginx" {
			t.Errorf("shop.example compared as class %q", d.Request.Class)
		}
	}
	if !found {
		t.Errorf("the internal class's case-insensitive regex (200 vs 404 for /LEGACY) is not reported:\n%s", stdout)
	}
}

// TestMigrateCompareKeepsFolderVersion: a converted route the folder holds
// (migrate's output kept beside the Ingresses, then edited) is what the
// Gateway side serves: fixing the difference there makes it go away.
func TestMigrateCompareKeepsFolderVersion(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ing.yaml", ingressClassNginx+ingress("web", "shop.example", nil, "Prefix / web", "Prefix /api api")+ingressServices("web", "api"))
	stdout, stderr, code := runGwdev(t, "", "migrate", dir)
	if code != 0 {
		t.Fatalf("migrate: exit %d\n%s", code, stderr)
	}
	// The user sends /api to web by mistake in the kept copy: the
	// comparison must see it.
	edited := strings.Replace(stdout, "name: api\n", "name: web\n", 1)
	if edited == stdout {
		t.Fatalf("no backendRef api in:\n%s", stdout)
	}
	write(t, dir, "gateway.yaml", edited)
	out, stderr, code := runGwdev(t, "", "migrate", "--compare", dir)
	if code != exitProblems || !strings.Contains(out, "GET http://shop.example/api ") || !strings.Contains(out, `backend:  ingress-nginx "default/api"`) ||
		!strings.Contains(out, "The folder's own version of") || !strings.Contains(out, "gateway.yaml:") {
		t.Errorf("exit %d: the edited copy's wrong backend is not reported:\n%s%s", code, out, stderr)
	}
}

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
