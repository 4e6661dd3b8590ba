package ingressnginx_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine/ingressnginx"
)

// ingressNginxDocumented lists the annotations ingress-nginx documents
// (docs/user-guide/nginx-configuration/annotations.md: the table and the
// sections below it, through v1.15), without the prefix.
var ingressNginxDocumented = strings.Fields(`
app-root affinity affinity-mode affinity-canary-behavior
auth-realm auth-secret auth-secret-type auth-type
auth-tls-secret auth-tls-verify-depth auth-tls-verify-client auth-tls-error-page auth-tls-pass-certificate-to-upstream auth-tls-match-cn
auth-url auth-method auth-signin auth-signin-redirect-param auth-response-headers auth-proxy-set-headers auth-request-redirect
auth-cache-key auth-cache-duration auth-keepalive auth-keepalive-share-vars auth-keepalive-requests auth-keepalive-timeout
auth-always-set-cookie auth-snippet enable-global-auth
backend-protocol
canary canary-by-header canary-by-header-value canary-by-header-pattern canary-by-cookie canary-weight canary-weight-total
client-body-buffer-size configuration-snippet custom-http-errors custom-headers default-backend
enable-cors cors-allow-origin cors-allow-methods cors-allow-headers cors-expose-headers cors-allow-credentials cors-max-age
force-ssl-redirect from-to-www-redirect http2-push-preload
limit-connections limit-rps limit-rpm limit-burst-multiplier limit-rate limit-rate-after limit-whitelist limit-allowlist
global-rate-limit global-rate-limit-window global-rate-limit-key global-rate-limit-ignored-cidrs
permanent-redirect permanent-redirect-code temporal-redirect temporal-redirect-code preserve-trailing-slash
proxy-body-size proxy-cookie-domain proxy-cookie-path proxy-connect-timeout proxy-send-timeout proxy-read-timeout
proxy-next-upstream proxy-next-upstream-timeout proxy-next-upstream-tries proxy-request-buffering
proxy-redirect-from proxy-redirect-to proxy-http-version
proxy-ssl-secret proxy-ssl-ciphers proxy-ssl-name proxy-ssl-protocols proxy-ssl-verify proxy-ssl-verify-depth proxy-ssl-server-name
proxy-buffering proxy-buffers-number proxy-buffer-size proxy-busy-buffers-size proxy-max-temp-file-size
enable-rewrite-log rewrite-target satisfy server-alias server-snippet service-upstream
session-cookie-name session-cookie-path session-cookie-domain session-cookie-expires session-cookie-max-age session-cookie-secure
session-cookie-change-on-failure session-cookie-samesite session-cookie-conditional-samesite-none
ssl-redirect ssl-passthrough stream-snippet
upstream-hash-by upstream-hash-by-subset upstream-hash-by-subset-size load-balance upstream-vhost x-forwarded-prefix
whitelist-source-range denylist-source-range ssl-ciphers ssl-prefer-server-ciphers connection-proxy-header
enable-access-log enable-opentracing opentracing-trust-incoming-span
enable-opentelemetry opentelemetry-trust-incoming-span opentelemetry-operation-name
enable-influxdb influxdb-measurement influxdb-port influxdb-host influxdb-server-name
use-regex enable-modsecurity enable-owasp-core-rules modsecurity-transaction-id modsecurity-snippet
mirror-request-body mirror-target mirror-host disable-proxy-intercept-errors
`)

// TestIngressAnnotationLists is the guard of the two annotation lists:
// every documented annotation is emulated or reported, never both, and
// nothing else is listed; each emulated one names a test (function and
// subtest) that exists here or in cmd/gwdev, where the end-to-end tests
// (real nginx beside the emulator) live.
func TestIngressAnnotationLists(t *testing.T) {
	where := map[string]string{}
	for _, l := range []struct {
		name string
		list []ingressnginx.Annotation
	}{{"emulated", ingressnginx.AnnotationsEmulated()}, {"reported", ingressnginx.AnnotationsReported()}} {
		for _, a := range l.list {
			if prev, dup := where[a.Name]; dup {
				t.Errorf("%s is %s and %s", a.Name, prev, l.name)
			}
			where[a.Name] = l.name
			if !slices.Contains(ingressNginxDocumented, a.Name) {
				t.Errorf("%s (%s) is not an annotation ingress-nginx documents", a.Name, l.name)
			}
			if a.Nginx == "" {
				t.Errorf("%s says nothing of what ingress-nginx does", a.Name)
			}
			if (a.Test != "") != (l.name == "emulated") {
				t.Errorf("%s (%s): test %q", a.Name, l.name, a.Test)
			}
		}
	}
	for _, d := range ingressNginxDocumented {
		if where[d] == "" {
			t.Errorf("documented annotation %s is neither emulated nor reported", d)
		}
	}
	sources, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	e2e, err := filepath.Glob(filepath.Join("..", "..", "cmd", "gwdev", "*_test.go"))
	if err != nil || len(e2e) == 0 {
		t.Fatalf("no cmd/gwdev tests next to the module root: %v", err)
	}
	sources = append(sources, e2e...)
	var all strings.Builder
	for _, f := range sources {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	src := all.String()
	for _, a := range ingressnginx.AnnotationsEmulated() {
		fn, sub, _ := strings.Cut(a.Test, "/")
		if !regexp.MustCompile(`func ` + regexp.QuoteMeta(fn) + `\(t \*testing\.T\)`).MatchString(src) {
			t.Errorf("%s: test function %s not found", a.Name, fn)
		}
		if sub != "" && !strings.Contains(src, `t.Run("`+sub+`"`) {
			t.Errorf("%s: subtest %q not found", a.Name, sub)
		}
	}
}
