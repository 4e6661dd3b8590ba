package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// migrateFixture is a host with Prefix paths, a trailing-slash path, TLS
// with the default HTTPS redirect, a canary by weight and header, a
// rewrite-target (not expressible) and a reported annotation.
func migrateFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	pki := newTestPKI(t, "migrate CA")
	crt, key := pki.issue("shop.example", false, "shop.example")
	manifests := ingressClassNginx +
		ingress("web", "shop.example", nginxAnn("limit-rps", "10"), "Prefix / web", "Prefix /api api", "Prefix /docs/ web") +
		"  tls:\n  - hosts: [shop.example]\n    secretName: shop-tls\n" +
		ingress("api-canary", "shop.example", nginxAnn("canary", "true", "canary-weight", "20", "canary-by-header", "X-Canary"), "Prefix /api api-v2") +
		ingress("legacy", "old.example", nginxAnn("rewrite-target", "/$2", "custom-http-errors", "503"), "ImplementationSpecific /legacy(/|$)(.*) api") +
		ingress("app", "app.example", nginxAnn("enable-cors", "true", "cors-allow-origin", "https://ui.example, https://*.ui.example",
			"affinity", "cookie", "session-cookie-max-age", "600", "proxy-read-timeout", "30", "custom-headers", "app-headers",
			"auth-type", "basic", "auth-secret", "app-users", "proxy-body-size", "8m", "mirror-target", "http://api-v2.default$request_uri"), "Prefix /app api") +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-headers}\ndata: {X-Frame-Options: DENY}\n" +
		"---\napiVersion: v1\nkind: Secret\nmetadata: {name: app-users}\ndata: {auth: " + b64([]byte("u:{PLAIN}p\n")) + "}\n" +
		ingressServices("web", "api", "api-v2") +
		"---\napiVersion: v1\nkind: Secret\nmetadata: {name: shop-tls}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: " +
		b64(crt) + "\n  tls.key: " + b64(key) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "ingress.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMigrate: migrate writes a Gateway and HTTPRoutes that gwdev check
// accepts next to the Services and Secrets, with what was not carried over
// as comments and on stderr.
func TestMigrate(t *testing.T) {
	dir := migrateFixture(t)
	out := filepath.Join(t.TempDir(), "migrated.yaml")
	_, stderr, code := runGwdev(t, "", "migrate", dir, "-o", out)
	if code != 0 {
		t.Fatalf("migrate: exit %d\n%s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"kind: Gateway", "gatewayClassName: nginx", "name: https", "name: shop-tls",
		"name: shop-example-http", "name: shop-example\n", "name: old-example",
		"type: RequestRedirect", "scheme: https", "statusCode: 308",
		"type: PathPrefix\n        value: /legacy", "replacePrefixMatch: /",
		"weight: 80", "weight: 20", "name: X-Canary",
		"# not carried over: nginx.ingress.kubernetes.io/rewrite-target",
		"# not carried over: ssl-redirect trailing slash",
		// Carried over: CORS, custom-headers, affinity, the timeouts.
		"type: CORS", "- https://ui.example", "- https://*.ui.example", "maxAge: 1728000", "allowCredentials: true",
		"type: ResponseHeaderModifier", "name: X-Frame-Options", "sessionPersistence:", "name: INGRESSCOOKIE", "path: /app",
		"lifetimeType: Permanent", "absoluteTimeout: 10m", "backendRequest: 1m35s", "# note: timeouts.backendRequest",
		"# not carried over: nginx.ingress.kubernetes.io/auth-type", "# not carried over: nginx.ingress.kubernetes.io/proxy-body-size",
		"# not carried over: nginx.ingress.kubernetes.io/custom-http-errors",
		"type: RequestMirror", "requestMirror:\n        backendRef:\n          name: api-v2", "# note: mirror-target became a RequestMirror",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("migrated manifests lack %q:\n%s", want, got)
		}
	}
	for _, want := range []string{
		"ingress.yaml:", "Ingress/default/web: not carried over: nginx.ingress.kubernetes.io/limit-rps",
		"Ingress/default/legacy: not carried over: nginx.ingress.kubernetes.io/rewrite-target",
		"Ingress/default/legacy: not carried over: nginx.ingress.kubernetes.io/custom-http-errors",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// gwdev check accepts the converted routes beside the Services and
	// Secret (the Ingresses removed: they are what the routes replace).
	checkDir := t.TempDir()
	all, _ := os.ReadFile(filepath.Join(dir, "ingress.yaml"))
	var keep []string
	for _, doc := range strings.Split(string(all), "---\n") {
		if !strings.Contains(doc, "kind: Ingress") {
			keep = append(keep, doc)
		}
	}
	if err := os.WriteFile(filepath.Join(checkDir, "rest.yaml"), []byte(strings.Join(keep, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkDir, "migrated.yaml"), got, 0o644); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, code := runGwdev(t, "", "check", checkDir); code != 0 {
		t.Errorf("check of the migrated manifests: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestMigrateCompare: --compare finds exactly the differences the
// conversion cannot avoid (the regex rewrite, the HTTPS redirect's trailing
// slash) and lists what was dropped; exit 1; the JSON says the same.
func TestMigrateCompare(t *testing.T) {
	dir := migrateFixture(t)
	stdout, stderr, code := runGwdev(t, "", "migrate", "--compare", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"GET http://old.example/LEGACY (from", `status:   ingress-nginx "200"                          gateway-api "404"`,
		"GET http://shop.example/docs/ ", `location: ingress-nginx "https://shop.example/docs"`, `gateway-api "https://shop.example/docs/"`,
		"migrated.yaml:", "Not carried over:",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	// Both sides resolve dot segments before matching (nginx's $uri; the
	// Gateway's path policy), but nginx proxies the path as sent while the
	// Gateway forwards the normalised one: the backend sees another path.
	if !strings.Contains(stdout, "GET https://shop.example/z/../docs/ (from") || !strings.Contains(stdout, `path:     ingress-nginx "/z/../docs/"                  gateway-api "/docs/"`) {
		t.Errorf("compare does not report that nginx forwards dot segments the Gateway removes:\n%s", stdout)
	}
	for _, unwanted := range []string{"GET http://shop.example/api ", "GET https://shop.example/api/x", "GET https://shop.example/api/ ", "GET http://old.example/legacy/x"} {
		if strings.Contains(stdout, unwanted) {
			t.Errorf("compare reports %q, which both sides answer alike:\n%s", unwanted, stdout)
		}
	}
	stdout, stderr, code = runGwdev(t, "", "migrate", "--compare", "--format", "json", dir)
	var report struct {
		Requests    int `json:"requests"`
		Differences []struct {
			Fields []string `json:"fields"`
		} `json:"differences"`
		Dropped []struct{ What string } `json:"dropped"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil || code != 1 {
		t.Fatalf("json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	if report.Requests < 50 || len(report.Differences) == 0 || len(report.Dropped) == 0 {
		t.Errorf("json report: %d requests, %d differences, %d dropped", report.Requests, len(report.Differences), len(report.Dropped))
	}
	stdout, _, _ = runGwdev(t, "", "migrate", "--compare", "--format", "github", dir)
	if !strings.Contains(stdout, "::error file=") || !strings.Contains(stdout, "::warning file=") {
		t.Errorf("github format:\n%s", stdout)
	}
}

// TestMigrateCompareClean: a conversion that carries everything over
// differs only where the two data planes normalise paths differently.
func TestMigrateCompareClean(t *testing.T) {
	dir := t.TempDir()
	manifests := ingressClassNginx + ingress("web", "shop.example", nil, "Prefix / web", "Prefix /api api", "Exact /health web") +
		ingressServices("web", "api")
	if err := os.WriteFile(filepath.Join(dir, "ingress.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runGwdev(t, "", "migrate", "--compare", dir)
	// gwdev's Gateway API data plane matches the path as sent; nginx
	// resolves dot segments and merges slashes first. Those requests are
	// the only ones that may differ.
	var other []string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "GET ") && !strings.Contains(line, "/.") && !strings.Contains(line, "//shop.example//") &&
			!strings.Contains(strings.TrimPrefix(strings.TrimPrefix(line, "GET http://"), "GET https://"), "//") {
			other = append(other, line)
		}
	}
	if len(other) > 0 || strings.Contains(stdout, "Not carried over") || !strings.Contains(stdout, "Sent ") {
		t.Errorf("exit %d; differences besides dot segments and double slashes: %q\n%s%s", code, other, stdout, stderr)
	}
}
