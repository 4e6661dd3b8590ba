package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/freeport"
	"github.com/gwdev/gwdev/watch"
)

// ingressSide serves Ingress manifests under the ingress-nginx emulation on
// free ports of 127.0.0.1 (the class's loopback address is bound as the
// table says; requests go to it).
type ingressSide struct {
	t                   *testing.T
	addr                string
	httpPort, httpsPort int
	res                 *engine.Result
	srv                 *emulator.Server
}

// serveIngresses loads manifests, translates them with the Ingress ports
// set to free ones and applies the table to a new emulator.
func serveIngresses(t *testing.T, manifests string) *ingressSide {
	t.Helper()
	return serveIngressSnapshot(t, loadIngressManifests(t, manifests))
}

// serveIngressSnapshot serves a loaded snapshot as serveIngresses does.
func serveIngressSnapshot(t *testing.T, lr *watch.LoadResult) *ingressSide {
	t.Helper()
	s := &ingressSide{t: t}
	s.httpPort, s.httpsPort = freeport.TCP(t, "127.0.20.1"), freeport.TCP(t, "127.0.20.1")
	s.res = engine.Translate(lr.Snapshot, engine.Options{IngressHTTPPort: int32(s.httpPort), IngressHTTPSPort: int32(s.httpsPort)})
	if err := s.res.Table.Validate(); err != nil {
		t.Fatal(err)
	}
	srv := emulator.New(emulator.Config{})
	if err := srv.Apply(s.res.Table).Err(); err != nil {
		t.Fatal(err)
	}
	s.srv = srv
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	s.addr = s.res.Table.Gateways[len(s.res.Table.Gateways)-1].Address
	return s
}

// ingressAnswer is what a request got: status, Location, and for a
// request the echo backend answered, the Service, path and headers it saw.
type ingressAnswer struct {
	status   int
	location string
	service  string
	path     string
	host     string
	headers  http.Header
}

// get sends GET rawURL's path to the class's HTTP (or HTTPS) port with the
// URL's host as Host (and SNI), not following redirects.
func (s *ingressSide) get(https bool, host, path string, hdr ...string) ingressAnswer {
	s.t.Helper()
	scheme, port := "http", s.httpPort
	if https {
		scheme, port = "https", s.httpsPort
	}
	req, err := http.NewRequest("GET", scheme+"://"+s.addr+":"+strconv.Itoa(port)+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{ServerName: host, InsecureSkipVerify: true}}, //nolint:gosec // the test's own certificate
		Timeout:       5 * time.Second,
	}
	resp, err := c.Do(req)
	if err != nil {
		s.t.Fatalf("GET %s%s: %v", host, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a := ingressAnswer{status: resp.StatusCode, location: resp.Header.Get("Location")}
	var echo struct {
		Service string      `json:"service"`
		Path    string      `json:"path"`
		Host    string      `json:"host"`
		Headers http.Header `json:"headers"`
	}
	if json.Unmarshal(body, &echo) == nil {
		a.service, a.path, a.host, a.headers = echo.Service, echo.Path, echo.Host, echo.Headers
	}
	return a
}

// ingressCase is one request and what ingress-nginx answers, from its
// documentation.
type ingressCase struct {
	https      bool
	host, path string
	// status, service and path the backend saw ("" : not checked), or the
	// redirect's Location.
	status   int
	service  string
	seen     string
	location string
}

func (s *ingressSide) check(cases []ingressCase) {
	s.t.Helper()
	for _, c := range cases {
		a := s.get(c.https, c.host, c.path)
		if a.status != c.status || c.service != "" && a.service != c.service || c.seen != "" && a.path != c.seen || a.location != c.location {
			s.t.Errorf("https=%v %s%s: got %d service %q path %q Location %q; want %d service %q path %q Location %q",
				c.https, c.host, c.path, a.status, a.service, a.path, a.location, c.status, c.service, c.seen, c.location)
		}
	}
}

const ingressClassNginx = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations:
    ingressclass.kubernetes.io/is-default-class: "true"
spec:
  controller: k8s.io/ingress-nginx
`

// ingressServices declares Services for the names given (port 80).
func ingressServices(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString("---\napiVersion: v1\nkind: Service\nmetadata: {name: " + n + "}\nspec: {ports: [{port: 80, name: http}]}\n")
	}
	return b.String()
}

// ingress is an Ingress of the default class with annotations (key, value
// pairs) and a rule of host with paths ("Type path service" each).
func ingress(name, host string, annotations []string, paths ...string) string {
	var b strings.Builder
	b.WriteString("---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: " + name + "\n")
	if len(annotations) > 0 {
		b.WriteString("  annotations:\n")
		for i := 0; i+1 < len(annotations); i += 2 {
			b.WriteString("    " + annotations[i] + ": " + strconv.Quote(annotations[i+1]) + "\n")
		}
	}
	b.WriteString("spec:\n  rules:\n  - host: " + strconv.Quote(host) + "\n    http:\n      paths:\n")
	for _, p := range paths {
		f := strings.Fields(p)
		b.WriteString("      - pathType: " + f[0] + "\n        path: " + strconv.Quote(f[1]) + "\n        backend: {service: {name: " + f[2] + ", port: {number: 80}}}\n")
	}
	return b.String()
}

func nginxAnn(kv ...string) []string {
	for i := 0; i < len(kv); i += 2 {
		kv[i] = ingressnginx.AnnotationPrefix + kv[i]
	}
	return kv
}

// TestIngressNginxBehaviour sends real requests to Ingresses served with
// ingress-nginx's rules. Each case is written from ingress-nginx's
// documentation ("Ingress Path Matching", the annotations page) and the
// Kubernetes blog "Before You Migrate: Five Surprising Ingress-NGINX
// Behaviors".
func TestIngressNginxBehaviour(t *testing.T) {
	t.Run("path-priority", func(t *testing.T) {
		// "Ingress Path Matching", Path Priority: rewrite-target on one
		// Ingress makes every path of test.com a regex, longest first.
		s := serveIngresses(t, ingressClassNginx+
			ingress("test-ingress-1", "test.com", nil, "Prefix /foo/bar service1", "Prefix /foo/bar/ service2")+
			ingress("test-ingress-2", "test.com", nginxAnn("rewrite-target", "/$1"), "ImplementationSpecific /foo/bar/(.+) service3")+
			ingressServices("service1", "service2", "service3"))
		s.check([]ingressCase{
			{host: "test.com", path: "/foo/bar/1", status: 200, service: "service3", seen: "/1"},
			{host: "test.com", path: "/foo/bar/", status: 200, service: "service2", seen: "/foo/bar/"},
			{host: "test.com", path: "/foo/bar", status: 200, service: "service1"},
			{host: "test.com", path: "/FOO/BAR", status: 200, service: "service1"}, // case-insensitive
			{host: "test.com", path: "/foo/barbaz", status: 200, service: "service1"},
			{host: "test.com", path: "/other", status: 404},
			{host: "unknown.example", path: "/foo/bar", status: 404},
		})
	})
	t.Run("use-regex", func(t *testing.T) {
		// Blog 1: "/[A-Z]{3}" with use-regex matches as a case-insensitive
		// prefix. Blog 2: use-regex on one Ingress makes the Exact path of
		// another Ingress of the host a regex prefix too.
		s := serveIngresses(t, ingressClassNginx+
			ingress("regex-match-ingress", "regex-match.example.com", nginxAnn("use-regex", "true"), "ImplementationSpecific /[A-Z]{3} httpbin")+
			ingress("exact", "regex-match.example.com", nil, "Exact /exact/path other")+
			ingressServices("httpbin", "other"))
		s.check([]ingressCase{
			{host: "regex-match.example.com", path: "/ABC", status: 200, service: "httpbin"},
			{host: "regex-match.example.com", path: "/abcdefg", status: 200, service: "httpbin"},
			{host: "regex-match.example.com", path: "/ab", status: 404},
			{host: "regex-match.example.com", path: "/exact/path/more", status: 200, service: "other"},
			{host: "regex-match.example.com", path: "/EXACT/PATH", status: 200, service: "other"},
		})
	})
	t.Run("use-regex-not-re2", func(t *testing.T) {
		// nginx's PCRE serves a lookahead and a repeat count over 1000
		// (TestIngressNginxDifferentialNotRE2 shows the first with real
		// nginx); Go's RE2 cannot compile them. gwdev leaves them out and
		// says so at the path's line, naming what ingress-nginx would do;
		// the host's other paths are served.
		s := serveIngresses(t, ingressClassNginx+
			ingress("re", "re.example", nginxAnn("use-regex", "true"), "ImplementationSpecific /a(?=b) api", "ImplementationSpecific /b(a{1000}){1000} api",
				"ImplementationSpecific /v[0-9]+ api")+ingressServices("api"))
		s.check([]ingressCase{
			{host: "re.example", path: "/ab", status: 404},
			{host: "re.example", path: "/v12", status: 200, service: "api"},
		})
		for _, path := range []string{"/a(?=b)", "/b(a{1000}){1000}"} {
			found := false
			for _, f := range s.res.Findings {
				found = found || f.Kind == engine.NoteRegexNotRE2 && f.Source.Line > 0 && strings.HasPrefix(f.Message, "path "+strconv.Quote(path)+": ") &&
					strings.Contains(f.Message, "nginx's PCRE does") && strings.Contains(f.Message, "gwdev leaves the location out")
			}
			if !found {
				t.Errorf("no warning at the line of path %q saying what ingress-nginx and gwdev do: %v", path, s.res.Findings)
			}
		}
	})
	t.Run("rewrite-target", func(t *testing.T) {
		// The rewrite example: "/something(/|$)(.*)" with "/$2".
		s := serveIngresses(t, ingressClassNginx+
			ingress("rewrite", "rewrite.bar.com", nginxAnn("rewrite-target", "/$2"), "ImplementationSpecific /something(/|$)(.*) http-svc")+
			ingressServices("http-svc"))
		s.check([]ingressCase{
			{host: "rewrite.bar.com", path: "/something", status: 200, service: "http-svc", seen: "/"},
			{host: "rewrite.bar.com", path: "/something/", status: 200, service: "http-svc", seen: "/"},
			{host: "rewrite.bar.com", path: "/something/new", status: 200, service: "http-svc", seen: "/new"},
			{host: "rewrite.bar.com", path: "/SOMETHING/New", status: 200, service: "http-svc", seen: "/New"},
		})
	})
	t.Run("prefix-and-exact", func(t *testing.T) {
		// Without regex: Prefix matches whole segments, Exact the path,
		// ImplementationSpecific is nginx's string prefix; a Prefix path
		// with a trailing slash answers the bare path with a 301 (blog 4).
		s := serveIngresses(t, ingressClassNginx+
			ingress("paths", "shop.example", nil, "Prefix /foo foo", "Exact /exact exact", "ImplementationSpecific /img img", "Prefix /app/ app")+
			ingressServices("foo", "exact", "img", "app"))
		base := "http://shop.example:" + strconv.Itoa(s.httpPort)
		s.check([]ingressCase{
			{host: "shop.example", path: "/foo", status: 200, service: "foo"},
			{host: "shop.example", path: "/foo/", status: 200, service: "foo"},
			{host: "shop.example", path: "/foo/bar", status: 200, service: "foo"},
			{host: "shop.example", path: "/foobar", status: 404},
			{host: "shop.example", path: "/FOO", status: 404}, // case-sensitive without regex
			{host: "shop.example", path: "/exact", status: 200, service: "exact"},
			{host: "shop.example", path: "/exact/", status: 404},
			{host: "shop.example", path: "/img2/a.png", status: 200, service: "img"}, // a string prefix
			{host: "shop.example", path: "/app", status: 301, location: base + "/app/"},
			{host: "shop.example", path: "/app?q=1", status: 301, location: base + "/app/?q=1"},
			{host: "shop.example", path: "/app/x", status: 200, service: "app"},
			// Blog 5: nginx matches the normalised path (slashes merged, dot
			// segments resolved) and passes the path as sent.
			{host: "shop.example", path: "//foo//bar", status: 200, service: "foo", seen: "//foo//bar"},
			{host: "shop.example", path: "/x/../exact", status: 200, service: "exact", seen: "/x/../exact"},
			{host: "shop.example", path: "/./app/.", status: 200, service: "app"},
		})
	})
	t.Run("ssl-redirect", func(t *testing.T) {
		pki := newTestPKI(t, "ingress CA")
		crt, key := pki.issue("secure.example", false, "secure.example", "other.example")
		secret := "---\napiVersion: v1\nkind: Secret\nmetadata: {name: tls}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: " +
			base64.StdEncoding.EncodeToString(crt) + "\n  tls.key: " + base64.StdEncoding.EncodeToString(key) + "\n"
		tlsIngress := ingress("secure", "secure.example", nil, "Prefix / web") + "  tls:\n  - hosts: [secure.example]\n    secretName: tls\n"
		s := serveIngresses(t, ingressClassNginx+tlsIngress+
			ingress("keep-slash", "secure.example", nginxAnn("preserve-trailing-slash", "true"), "Prefix /keep/ web")+
			ingress("no-redirect", "secure.example", nginxAnn("ssl-redirect", "false"), "Prefix /plain web")+
			ingress("forced", "plain.example", nginxAnn("force-ssl-redirect", "true"), "Prefix / web")+
			ingressServices("web")+secret)
		httpsBase := "https://secure.example:" + strconv.Itoa(s.httpsPort)
		s.check([]ingressCase{
			{host: "secure.example", path: "/cart/?id=1", status: 308, location: httpsBase + "/cart?id=1"},
			{host: "secure.example", path: "/", status: 308, location: httpsBase},
			{host: "secure.example", path: "/keep/x/", status: 308, location: httpsBase + "/keep/x/"},
			{host: "secure.example", path: "/plain", status: 200, service: "web"},
			{https: true, host: "secure.example", path: "/cart/", status: 200, service: "web"},
			{host: "plain.example", path: "/a", status: 308, location: "https://plain.example:" + strconv.Itoa(s.httpsPort) + "/a"},
		})
	})
	t.Run("force-ssl-redirect", func(t *testing.T) {
		s := serveIngresses(t, ingressClassNginx+
			ingress("forced", "plain.example", nginxAnn("force-ssl-redirect", "true"), "Prefix / web")+ingressServices("web"))
		s.check([]ingressCase{{host: "plain.example", path: "/a", status: 308, location: "https://plain.example:" + strconv.Itoa(s.httpsPort) + "/a"}})
	})
	t.Run("permanent-redirect", func(t *testing.T) {
		s := serveIngresses(t, ingressClassNginx+
			ingress("moved", "old.example", nginxAnn("permanent-redirect", "https://www.google.com/search"), "Prefix / web")+
			ingress("moved-308", "old308.example", nginxAnn("permanent-redirect", "https://new.example:8443/x", "permanent-redirect-code", "308"), "Prefix / web")+
			ingressServices("web"))
		s.check([]ingressCase{
			{host: "old.example", path: "/a?b=c", status: 301, location: "https://www.google.com/search"},
			{host: "old308.example", path: "/", status: 308, location: "https://new.example:8443/x"},
		})
	})
	t.Run("temporal-redirect", func(t *testing.T) {
		s := serveIngresses(t, ingressClassNginx+
			ingress("moved", "tmp.example", nginxAnn("temporal-redirect", "http://www.google.com"), "Prefix / web")+
			ingress("moved-307", "tmp307.example", nginxAnn("temporal-redirect", "http://a.example/b", "temporal-redirect-code", "307"), "Prefix / web")+
			ingressServices("web"))
		s.check([]ingressCase{
			{host: "tmp.example", path: "/x", status: 302, location: "http://www.google.com"},
			{host: "tmp307.example", path: "/x", status: 307, location: "http://a.example/b"},
		})
	})
	t.Run("app-root", func(t *testing.T) {
		s := serveIngresses(t, ingressClassNginx+
			ingress("approot", "approot.bar.com", nginxAnn("app-root", "/app1"), "Prefix / http-svc")+ingressServices("http-svc"))
		s.check([]ingressCase{
			{host: "approot.bar.com", path: "/", status: 302, location: "http://approot.bar.com:" + strconv.Itoa(s.httpPort) + "/app1"},
			{host: "approot.bar.com", path: "/app1", status: 200, service: "http-svc"},
		})
	})
	t.Run("canary", func(t *testing.T) {
		// The canary section: by header (always/never), by header value,
		// by cookie (always/never), then by weight; precedence header,
		// cookie, weight.
		s := serveIngresses(t, ingressClassNginx+
			ingress("main", "canary.example", nil, "Prefix / production", "Prefix /v api")+
			ingress("canary", "canary.example", nginxAnn("canary", "true", "canary-by-header", "X-Canary", "canary-by-cookie", "canary_cookie"),
				"Prefix / staging")+
			ingress("canary-value", "canary.example", nginxAnn("canary", "true", "canary-by-header", "X-Region", "canary-by-header-value", "eu"),
				"Prefix /v api-eu")+
			ingress("main-w", "weight.example", nil, "Prefix / production")+
			ingress("canary-w", "weight.example", nginxAnn("canary", "true", "canary-weight", "100"), "Prefix / staging")+
			ingress("main-w0", "weight0.example", nil, "Prefix / production")+
			ingress("canary-w0", "weight0.example", nginxAnn("canary", "true", "canary-weight", "0", "canary-by-header-pattern", "^(fr|de)$", "canary-by-header", "X-Lang"), "Prefix / staging")+
			ingressServices("production", "staging", "api", "api-eu"))
		for _, c := range []struct {
			host, path string
			hdr        []string
			want       string
		}{
			{"canary.example", "/", nil, "production"},
			{"canary.example", "/", []string{"X-Canary", "always"}, "staging"},
			{"canary.example", "/", []string{"X-Canary", "never", "Cookie", "canary_cookie=always"}, "production"},
			{"canary.example", "/", []string{"X-Canary", "maybe", "Cookie", "a=b; canary_cookie=always"}, "staging"},
			{"canary.example", "/", []string{"Cookie", "canary_cookie=never"}, "production"},
			{"canary.example", "/", []string{"Cookie", "canary_cookie=alwaysx"}, "production"},
			{"canary.example", "/v/x", []string{"X-Region", "eu"}, "api-eu"},
			{"canary.example", "/v/x", []string{"X-Region", "always"}, "api"},
			{"weight.example", "/a", nil, "staging"},
			{"weight0.example", "/a", nil, "production"},
			{"weight0.example", "/a", []string{"X-Lang", "de"}, "staging"},
			{"weight0.example", "/a", []string{"X-Lang", "en"}, "production"},
		} {
			if a := s.get(false, c.host, c.path, c.hdr...); a.status != 200 || a.service != c.want {
				t.Errorf("%s%s %v: got %d from %q; want %s", c.host, c.path, c.hdr, a.status, a.service, c.want)
			}
		}
	})
	t.Run("source-range", func(t *testing.T) {
		// whitelist-source-range lets only these clients in, denylist keeps
		// them out (403); the test's client is 127.0.0.1. A security
		// annotation gwdev does not emulate (auth-type) denies.
		s := serveIngresses(t, ingressClassNginx+
			ingress("office", "office.example", nginxAnn("whitelist-source-range", "10.0.0.0/8, 192.168.1.1"), "Prefix / web")+
			ingress("local", "local.example", nginxAnn("whitelist-source-range", "127.0.0.0/8"), "Prefix / web")+
			ingress("blocked", "blocked.example", nginxAnn("denylist-source-range", "127.0.0.1"), "Prefix / web")+
			ingress("open", "open.example", nginxAnn("denylist-source-range", "10.0.0.0/8"), "Prefix / web")+
			ingress("digest", "basic.example", nginxAnn("auth-type", "digest", "auth-secret", "users"), "Prefix / web")+
			ingressServices("web"))
		s.check([]ingressCase{
			{host: "office.example", path: "/", status: 403},
			{host: "local.example", path: "/", status: 200, service: "web"},
			{host: "blocked.example", path: "/", status: 403},
			{host: "open.example", path: "/", status: 200, service: "web"},
			{host: "basic.example", path: "/", status: 403},
		})
		// The HTTPS redirect (nginx's rewrite phase) comes before the
		// address check (its access phase).
		s = serveIngresses(t, ingressClassNginx+
			ingress("office", "office.example", nginxAnn("whitelist-source-range", "10.0.0.0/8", "force-ssl-redirect", "true"), "Prefix / web")+
			ingressServices("web"))
		s.check([]ingressCase{{host: "office.example", path: "/a", status: 308, location: "https://office.example:" + strconv.Itoa(s.httpsPort) + "/a"}})
	})
	t.Run("from-to-www-redirect", func(t *testing.T) {
		// "Redirect from/to www": www.host redirects to host (and the
		// reverse), 308 with the path and query; not when an Ingress
		// defines the other host.
		s := serveIngresses(t, ingressClassNginx+
			ingress("site", "domain.example", nginxAnn("from-to-www-redirect", "true"), "Prefix / web")+
			ingress("www-site", "www.other.example", nginxAnn("from-to-www-redirect", "true"), "Prefix / web")+
			ingress("both", "both.example", nginxAnn("from-to-www-redirect", "true"), "Prefix / web")+
			ingress("both-www", "www.both.example", nil, "Prefix / www")+
			ingressServices("web", "www"))
		p := strconv.Itoa(s.httpPort)
		s.check([]ingressCase{
			{host: "www.domain.example", path: "/a?b=c", status: 308, location: "http://domain.example:" + p + "/a?b=c"},
			{host: "domain.example", path: "/a", status: 200, service: "web"},
			{host: "other.example", path: "/", status: 308, location: "http://www.other.example:" + p + "/"},
			{host: "www.both.example", path: "/", status: 200, service: "www"},
		})
	})
	t.Run("backend-protocol", func(t *testing.T) {
		// backend-protocol GRPC: nginx's grpc_pass, HTTP/2 without TLS to
		// the backend; HTTP (the default) is HTTP/1.1.
		s := serveIngresses(t, ingressClassNginx+
			ingress("grpc", "grpc.example", nginxAnn("backend-protocol", "GRPC"), "Prefix / web")+
			ingress("plain", "plain.example", nginxAnn("backend-protocol", "HTTP"), "Prefix / web")+ingressServices("web"))
		for host, want := range map[string]bool{"grpc.example": true, "plain.example": false} {
			var h2 bool
			for _, g := range s.res.Table.Gateways {
				for _, p := range g.Ports {
					for _, vh := range p.Listeners[0].VirtualHosts {
						if vh.Hostname == host {
							h2 = vh.Rules[0].Backends[0].HTTP2
						}
					}
				}
			}
			if a := s.get(false, host, "/"); a.status != 200 || h2 != want {
				t.Errorf("%s: %d, HTTP/2 to the backend %v, want %v", host, a.status, h2, want)
			}
		}
	})
	t.Run("auth-url", func(t *testing.T) {
		// External authentication: the auth Service (gwdev's echo backend as
		// a demo auth server, allowing requests with an Authorization header)
		// decides;
		// auth-response-headers reach the backend.
		s := serveIngresses(t, ingressClassNginx+
			ingress("private", "private.example", nginxAnn("auth-url", "http://auth.default.svc.cluster.local/verify",
				"auth-response-headers", "X-Gwdev-Auth"), "Prefix / web")+
			ingress("broken", "broken.example", nginxAnn("auth-url", "http://missing/verify"), "Prefix / web")+
			ingressServices("web")+"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: auth\n  annotations: {gwdev.dev/echo-auth-header: Authorization}\nspec: {ports: [{port: 80}]}\n")
		if a := s.get(false, "private.example", "/"); a.status != 403 {
			t.Errorf("without the token: %d from %q", a.status, a.service)
		}
		if a := s.get(false, "private.example", "/", "Authorization", "Bearer t"); a.status != 200 || a.service != "web" || a.headers.Get("X-Gwdev-Auth") == "" {
			t.Errorf("with the token: %d from %q, X-Gwdev-Auth %q", a.status, a.service, a.headers.Get("X-Gwdev-Auth"))
		}
		if a := s.get(false, "broken.example", "/", "Authorization", "Bearer t"); a.status < 400 {
			t.Errorf("auth Service missing: %d from %q; want a refusal", a.status, a.service)
		}
	})
	t.Run("upstream-vhost", func(t *testing.T) {
		s := serveIngresses(t, ingressClassNginx+
			ingress("vhost", "front.example", nginxAnn("upstream-vhost", "internal.svc"), "Prefix / web")+ingressServices("web"))
		if a := s.get(false, "front.example", "/"); a.status != 200 || a.host != "internal.svc" {
			t.Errorf("got %d, backend Host %q; want 200 internal.svc", a.status, a.host)
		}
	})
	t.Run("x-forwarded-prefix", func(t *testing.T) {
		s := serveIngresses(t, ingressClassNginx+
			ingress("xfp", "front.example", nginxAnn("x-forwarded-prefix", "/api"), "Prefix / web")+ingressServices("web"))
		if a := s.get(false, "front.example", "/"); a.status != 200 || a.headers.Get("X-Forwarded-Prefix") != "/api" {
			t.Errorf("got %d, X-Forwarded-Prefix %q; want 200 /api", a.status, a.headers.Get("X-Forwarded-Prefix"))
		}
	})
}

// TestIngressNginxRegexNotRE2Commands: a use-regex path RE2 cannot compile
// is a warning of check at the path's file:line, and migrate --compare
// lists it as not carried over (exit 1), where both said nothing before.
func TestIngressNginxRegexNotRE2Commands(t *testing.T) {
	dir := t.TempDir()
	manifests := ingressClassNginx + ingress("re", "re.example", nginxAnn("use-regex", "true"), "ImplementationSpecific /a(?=b) api", "ImplementationSpecific /v[0-9]+ api") +
		ingressServices("api")
	if err := os.WriteFile(filepath.Join(dir, "ingress.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(manifests, "\n") {
		if strings.Contains(l, `"/a(?=b)"`) && line == 0 {
			line = i // the item starts on the line before: "- pathType: …"
		}
	}
	where := "ingress.yaml:" + strconv.Itoa(line)
	stdout, stderr, _ := runGwdev(t, "", "check", dir)
	if !strings.Contains(stdout, where) || !strings.Contains(stdout, `path "/a(?=b)": `) || strings.Contains(stdout, "No problems") {
		t.Errorf("check does not warn at %s:\n%s%s", where, stdout, stderr)
	}
	stdout, stderr, code := runGwdev(t, "", "migrate", "--compare", dir)
	if code != 1 || !strings.Contains(stdout, "Not carried over:") || !strings.Contains(stdout, where) ||
		!strings.Contains(stdout, `not carried over: regular expression path: path "/a(?=b)"`) {
		t.Errorf("migrate --compare: exit %d\n%s%s", code, stdout, stderr)
	}
}
