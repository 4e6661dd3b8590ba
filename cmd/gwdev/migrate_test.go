package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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
	// Basic auth and limit-rps are not carried over: exit 1 (the
	// manifests are written all the same).
	if code != 1 {
		t.Fatalf("migrate: exit %d, want 1 (security-relevant annotations dropped)\n%s", code, stderr)
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
		"# note: rewrite-target of path /legacy(/|$)(.*) became a PathPrefix /legacy match with a ReplacePrefixMatch / URLRewrite",
		"# not carried over: case-insensitive match of path /legacy(/|$)(.*)",
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
		"Ingress/default/legacy: not carried over: case-insensitive match of path /legacy(/|$)(.*): ingress-nginx matches the regex ignoring case",
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

// TestMigrateSecurityDrop: migrate exits 1 when the conversion drops an
// annotation the annotations table marks security-relevant (the converted
// route lets in clients ingress-nginx refused) and lists those last, each
// with why; a drop that lets no more clients in leaves the exit status 0.
func TestMigrateSecurityDrop(t *testing.T) {
	for _, tc := range []struct {
		name string
		ann  []string
		// want is the annotation the security list names ("": exit 0).
		want string
	}{
		{"basic auth", nginxAnn("auth-type", "basic", "auth-secret", "users"), "nginx.ingress.kubernetes.io/auth-type"},
		{"allowlist", nginxAnn("whitelist-source-range", "10.0.0.0/8"), "nginx.ingress.kubernetes.io/whitelist-source-range"},
		{"denylist", nginxAnn("denylist-source-range", "192.0.2.0/24"), "nginx.ingress.kubernetes.io/denylist-source-range"},
		{"rate limit", nginxAnn("limit-connections", "5"), "nginx.ingress.kubernetes.io/limit-connections"},
		{"client certificates", nginxAnn("auth-tls-verify-client", "on", "auth-tls-secret", "default/ca"), "nginx.ingress.kubernetes.io/auth-tls-secret"},
		{"body size only", nginxAnn("proxy-body-size", "8m"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			manifests := ingressClassNginx + ingress("web", "shop.example", tc.ann, "Prefix / web") + ingressServices("web") +
				"---\napiVersion: v1\nkind: Secret\nmetadata: {name: users}\ndata: {auth: " + b64([]byte("u:{PLAIN}p\n")) + "}\n"
			if err := os.WriteFile(filepath.Join(dir, "ingress.yaml"), []byte(manifests), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runGwdev(t, "", "migrate", dir, "-o", filepath.Join(t.TempDir(), "out.yaml"))
			if tc.want == "" {
				if code != 0 || strings.Contains(stderr, "Security-relevant") {
					t.Fatalf("exit %d, want 0 and no security list\n%s", code, stderr)
				}
				return
			}
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, stderr)
			}
			_, list, ok := strings.Cut(stderr, "Security-relevant, not carried over (exit status 1)")
			if !ok || !strings.Contains(list, "Ingress/default/web: "+tc.want) || !strings.Contains(list, "ingress.yaml:") {
				t.Errorf("stderr does not end with a security list naming %s and its line:\n%s", tc.want, stderr)
			}
		})
	}
}

// TestMigrateRewriteNotes: a rewrite-target the conversion carries over
// (the documented "<prefix>(/|$)(.*)" with "/$2") is a note naming its path,
// never "not carried over: ... converted to"; what it loses (the
// case-insensitive match) is listed at the path's line; a regex rewrite the
// Gateway API cannot say names the path it rewrites.
func TestMigrateRewriteNotes(t *testing.T) {
	dir := t.TempDir()
	manifests := ingressClassNginx +
		ingress("legacy", "old.example", nginxAnn("rewrite-target", "/$2"), "ImplementationSpecific /legacy(/|$)(.*) web") +
		ingress("img", "img.example", nginxAnn("rewrite-target", "/static/$1.png"), "ImplementationSpecific /img/([a-z]+) web") +
		ingressServices("web")
	if err := os.WriteFile(filepath.Join(dir, "ingress.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, _ := runGwdev(t, "", "migrate", dir)
	for _, line := range strings.Split(stdout+stderr, "\n") {
		if strings.Contains(line, "not carried over") && strings.Contains(line, "converted to") {
			t.Errorf("a line says both that something was not carried over and that it was converted: %s", line)
		}
	}
	for _, want := range []string{
		`# note: rewrite-target of path /legacy(/|$)(.*) became a PathPrefix /legacy match with a ReplacePrefixMatch / URLRewrite: /legacy/x reaches the backend as /x`,
		"# not carried over: case-insensitive match of path /legacy(/|$)(.*) (Ingress/default/legacy ",
		`# not carried over: nginx.ingress.kubernetes.io/rewrite-target (Ingress/default/img `,
		`ingress-nginx rewrites path /img/([a-z]+) to "/static/${1}.png" with the regex's groups`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("manifests lack %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "Ingress/default/img: not carried over: nginx.ingress.kubernetes.io/rewrite-target: ingress-nginx rewrites path /img/([a-z]+) to") {
		t.Errorf("stderr does not name the path of the dropped regex rewrite:\n%s", stderr)
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

// TestMigrateCompareGroupsDifferences: requests whose difference is the
// same (the same fields, with the same values on both sides) are one text
// block with their count and every request; the JSON keeps one entry per
// request, each with its group, and the text has one block per group.
func TestMigrateCompareGroupsDifferences(t *testing.T) {
	dir := migrateFixture(t)
	text, stderr, code := runGwdev(t, "", "migrate", "--compare", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, text, stderr)
	}
	js, _, _ := runGwdev(t, "", "migrate", "--compare", "--format", "json", dir)
	var report struct {
		Differences []struct {
			Request struct{ Host, Path string }
			Group   string `json:"group"`
		} `json:"differences"`
	}
	if err := json.Unmarshal([]byte(js), &report); err != nil {
		t.Fatal(err)
	}
	size := map[string]int{}
	for _, d := range report.Differences {
		if d.Group == "" {
			t.Fatalf("a JSON difference has no group: %+v", d)
		}
		size[d.Group]++
	}
	if len(size) == len(report.Differences) {
		t.Fatalf("no two of the %d differences share a group; the fixture has basic auth answering 401 to requests the route lets through", len(report.Differences))
	}
	// Blocks: a line not indented, after the summary, starts one.
	var blocks, grouped, listed int
	lines := strings.Split(strings.TrimSpace(strings.Split(text, "\nNot carried over:")[0]), "\n")[1:]
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "GET "):
			blocks++
			listed++
		case strings.HasSuffix(l, " requests answered with the same difference:"):
			blocks++
			grouped++
			n, _ := strconv.Atoi(strings.Fields(l)[0])
			got := 0
			for _, r := range lines[i+1:] {
				if !strings.HasPrefix(r, " ") {
					break
				}
				if strings.HasPrefix(r, "  GET ") {
					got++
				}
			}
			listed += got
			if got != n {
				t.Errorf("%q lists %d requests", l, got)
			}
		}
	}
	if blocks != len(size) || listed != len(report.Differences) || grouped == 0 {
		t.Errorf("%d blocks (%d grouped) listing %d requests; want one per group (%d) listing all %d differences:\n%s",
			blocks, grouped, listed, len(size), len(report.Differences), text)
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
