package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/internal/testkit"
)

// TestSampleIngressNginx sends the requests of samples/ingress-nginx's
// README to the sample served as gwdev up serves it (ports 8080 and 8443
// moved to free ones) and checks each answer its comment promises; then
// migrate and migrate --compare on the sample.
func TestSampleIngressNginx(t *testing.T) {
	dir := filepath.Join("..", "..", "samples", "ingress-nginx")
	l := testkit.Project(t)
	lr := l.LoadDir(dir)
	if len(lr.Problems) > 0 {
		t.Fatalf("load problems: %v", lr.Problems)
	}
	s := serveIngressSnapshot(t, lr)
	https := "https://shop.example.com:" + strconv.Itoa(s.httpsPort)
	s.check([]ingressCase{
		{host: "shop.example.com", path: "/cart/", status: 308, location: https + "/cart"},
		{https: true, host: "shop.example.com", path: "/cart", status: 200, service: "storefront"},
		{https: true, host: "shop.example.com", path: "/OLD-SHOP/shoes", status: 200, service: "storefront", seen: "/shoes"},
		{https: true, host: "shop.example.com", path: "/checkout", status: 200, service: "checkout"},
		{host: "docs.shop.example.com", path: "/", status: 302, location: "http://docs.shop.example.com:" + strconv.Itoa(s.httpPort) + "/v2/"},
		{host: "docs.shop.example.com", path: "/v2", status: 301, location: "http://docs.shop.example.com:" + strconv.Itoa(s.httpPort) + "/v2/"},
		{host: "blog.shop.example.com", path: "/post?id=7", status: 301, location: "https://blog.example.org/shop"},
		{host: "status.shop.example.com", path: "/", status: 308, location: "https://status.shop.example.com:" + strconv.Itoa(s.httpsPort)}, // "/" loses its slash too
		{https: true, host: "admin.shop.example.com", path: "/", status: 403},
	})
	if a := s.get(true, "shop.example.com", "/api/orders", "X-Canary", "always"); a.status != 200 || a.service != "api-v2" {
		t.Errorf("canary: %d from %q", a.status, a.service)
	}
	if a := s.get(false, "static.shop.example.com", "/assets-v2/logo.svg"); a.status != 200 || a.service != "assets" || a.host != "assets.internal" ||
		a.headers.Get("X-Forwarded-Prefix") != "/assets" {
		t.Errorf("assets: %d from %q, Host %q, X-Forwarded-Prefix %q", a.status, a.service, a.host, a.headers.Get("X-Forwarded-Prefix"))
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gwdev migrate samples/ingress-nginx -o", "gwdev migrate --compare samples/ingress-nginx", "127.0.20.1:8080"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	if stdout, _, code := runGwdev(t, "", "explain", dir, "https://shop.example.com/api/x"); code != 0 ||
		!strings.Contains(stdout, "rule:          ingress/default/api/rule/0/path/0\n") || !strings.Contains(stdout, "lost: ingress-nginx's location order") {
		t.Errorf("explain: exit %d\n%s", code, stdout)
	}
	out := filepath.Join(t.TempDir(), "shop-gateway-api.yaml")
	// Basic auth, the allow list and limit-rps are not carried over: the
	// manifests are written, the exit status is 1.
	if _, stderr, code := runGwdev(t, "", "migrate", dir, "-o", out); code != 1 || !strings.Contains(stderr, "limit-rps") ||
		!strings.Contains(stderr, "Security-relevant, not carried over") {
		t.Errorf("migrate: exit %d, want 1 with the security-relevant drops listed\n%s", code, stderr)
	}
	stdout, _, code := runGwdev(t, "", "migrate", "--compare", dir)
	if code != 1 || !strings.Contains(stdout, "Not carried over:") || !strings.Contains(stdout, "GET http://shop.example.com/api/ ") {
		t.Errorf("compare: exit %d\n%s", code, stdout)
	}
	// An Ingress-wide annotation (storefront's proxy-body-size, over two
	// paths) is listed once, at its own line, not once per path.
	_, notCarried, _ := strings.Cut(stdout, "Not carried over:")
	seen := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(notCarried), "\n") {
		at, what, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if prev, twice := seen[what]; twice {
			t.Errorf("listed twice (at %s and %s): %s", prev, at, what)
		}
		seen[what] = at
	}
	if at := seen["Ingress/default/storefront: not carried over: nginx.ingress.kubernetes.io/proxy-body-size: ingress-nginx refuses request bodies over 8388608 bytes with 413 (0: no limit); "+
		"the Gateway API has no body limit: use your implementation's policy (Envoy Gateway's ClientTrafficPolicy, for one)"]; !strings.HasSuffix(at, "/ingresses.yaml:17") {
		t.Errorf("proxy-body-size listed at %q, want its annotation's line ingresses.yaml:17\n%s", at, notCarried)
	}
}
