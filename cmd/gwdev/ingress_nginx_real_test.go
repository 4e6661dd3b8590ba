package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/freeport"
	"github.com/gwdev/gwdev/internal/testkit"
	"github.com/gwdev/gwdev/watch"
)

// nginxBinary finds nginx, installing Debian's package when the test runs
// as root with apt-get and it is missing; "" when it cannot be had.
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "-qq", "nginx")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("apt-get install nginx: %v\n%s", err, out)
		return ""
	}
	path, _ := exec.LookPath("/usr/sbin/nginx")
	return path
}

// realNginx runs nginx with the server blocks conf until the test ends and
// returns its port on 127.0.0.1.
func realNginx(t *testing.T, bin string, conf func(listen string) string) int {
	t.Helper()
	dir := t.TempDir()
	port := freeport.TCP(t, "127.0.0.1")
	listen := "127.0.0.1:" + strconv.Itoa(port)
	main := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
%[2]s}
`, dir, conf(listen))
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", listen, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not start: %s\n%s\n%s", out.String(), log, main)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// nginxAnswer is what one side did with a request: status, Location (the
// side's port written as PORT), the location (table rule) that took it and
// the path the backend saw.
type nginxAnswer struct {
	status   int
	location string
	rule     string
	path     string
}

// TestIngressNginxDifferential runs real nginx with the location blocks
// ingress-nginx's template writes for a set of Ingresses, and gwdev's
// emulation of the same Ingresses, and sends both the same requests: paths
// of every Ingress with and without the trailing slash, upper case, longer,
// with dot segments and double slashes. Location choice, regex order,
// rewrites, the trailing-slash 301 and path normalisation come from nginx
// itself, so each answer must agree.
func TestIngressNginxDifferential(t *testing.T) {
	bin := nginxBinary(t)
	if bin == "" {
		t.Skip("nginx is not installed and cannot be (needs root and apt-get): the differential test against real nginx does not run")
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path // as the echo backend reports it: the path, then the query
		if r.URL.RawQuery != "" {
			path += "?" + r.URL.RawQuery
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"location": r.Header.Get("X-Gwdev-Location"), "path": path})
	}))
	defer backend.Close()
	upstream := strings.TrimPrefix(backend.URL, "http://")
	for _, sc := range []struct {
		name, manifests string
		extra           []string // host path
	}{
		{"path-priority", ingress("test-ingress-1", "test.com", nil, "Prefix /foo/bar service1", "Prefix /foo/bar/ service2") +
			ingress("test-ingress-2", "test.com", nginxAnn("rewrite-target", "/$1"), "ImplementationSpecific /foo/bar/(.+) service3"),
			[]string{"test.com /foo/bar/1/2", "test.com /FOO/bar/x", "other.example /foo/bar"}},
		{"use-regex", ingress("regex", "r.example", nginxAnn("use-regex", "true"), "ImplementationSpecific /[A-Z]{3} httpbin", "Prefix /api/v[0-9]+ api") +
			ingress("exact", "r.example", nil, "Exact /exact/path other", "Prefix /docs docs"),
			[]string{"r.example /abc", "r.example /ABCD/e", "r.example /ab", "r.example /api/v12/x", "r.example /API/V1", "r.example /docsx"}},
		{"rewrite", ingress("rewrite", "rewrite.bar.com", nginxAnn("rewrite-target", "/$2"), "ImplementationSpecific /something(/|$)(.*) http-svc") +
			ingress("rewrite-2", "rewrite.bar.com", nil, "Prefix /other other"),
			[]string{"rewrite.bar.com /something/new/a?b=c", "rewrite.bar.com /SOMETHING", "rewrite.bar.com /somethingelse"}},
		{"prefix-exact-implementation-specific", ingress("paths", "shop.example", nil, "Prefix /foo foo", "Exact /exact exact",
			"ImplementationSpecific /img img", "Prefix /app/ app", "Prefix /a/b ab", "ImplementationSpecific /a a") +
			ingress("root", "shop.example", nil, "Prefix / web") + ingress("wild", "*.wild.example", nil, "Prefix /w w"),
			[]string{"shop.example /app?q=1", "shop.example //foo//bar", "shop.example /x/../exact", "shop.example /./app/.", "shop.example /a/bc",
				"a.wild.example /w/x", "a.b.wild.example /w"}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			lr := loadIngressManifests(t, ingressClassNginx+sc.manifests+ingressServices(backendNames(sc.manifests)...))
			nginxPort := realNginx(t, bin, func(listen string) string {
				return ingressnginx.NginxConf(lr.Snapshot, engine.Options{}, listen, upstream)
			})
			emuPort := freeport.TCP(t, "127.0.20.1")
			res := engine.Translate(lr.Snapshot, engine.Options{IngressHTTPPort: int32(emuPort)})
			srv := emulator.New(emulator.Config{})
			if err := srv.Apply(res.Table).Err(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close(context.Background()) })
			emuAddr := res.Table.Gateways[0].Address
			reqs := sc.extra
			for _, ing := range lr.Snapshot.Ingresses {
				for _, r := range ing.Spec.Rules {
					host := strings.Replace(r.Host, "*", "x", 1)
					for _, p := range r.HTTP.Paths {
						for _, v := range app.PathVariants(p.Path) {
							reqs = append(reqs, host+" "+v)
						}
					}
				}
			}
			t.Logf("%d requests to nginx and gwdev", len(reqs))
			for _, r := range reqs {
				host, path, _ := strings.Cut(r, " ")
				n := askNginxSide(t, "127.0.0.1", nginxPort, host, path, nil)
				e := askNginxSide(t, emuAddr, emuPort, host, path, srv)
				if n != e {
					t.Errorf("GET http://%s%s\n  nginx: %+v\n  gwdev: %+v", host, path, n, e)
				}
			}
		})
	}
}

// backendNames are the Services the Ingresses of manifests name.
func backendNames(manifests string) []string {
	var out []string
	for _, line := range strings.Split(manifests, "\n") {
		if _, rest, ok := strings.Cut(line, "backend: {service: {name: "); ok {
			name, _, _ := strings.Cut(rest, ",")
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// loadIngressManifests loads manifests, failing on any problem.
func loadIngressManifests(t *testing.T, manifests string) *watch.LoadResult {
	t.Helper()
	l := testkit.Project(t)
	lr := l.LoadBytes("ingress.yaml", []byte(manifests))
	for _, p := range lr.Problems {
		t.Fatalf("load problem: %s", p)
	}
	return lr
}

// askNginxSide sends GET path with Host host to addr:port. For gwdev's side
// (srv set) the rule comes from Explain and the path from the echo backend;
// for nginx from the test backend.
func askNginxSide(t *testing.T, addr string, port int, host, path string, srv *emulator.Server) nginxAnswer {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+net.JoinHostPort(addr, strconv.Itoa(port))+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	var rule string
	if srv != nil {
		if tr := srv.Explain(addr, int32(port), req.Clone(context.Background())); tr != nil {
			rule = tr.Rule
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s%s on %s:%d: %v", host, path, addr, port, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a := nginxAnswer{status: resp.StatusCode, location: strings.Replace(resp.Header.Get("Location"), ":"+strconv.Itoa(port), ":PORT", 1)}
	if a.status != http.StatusOK {
		return a
	}
	var echo struct{ Location, Path string }
	if err := json.Unmarshal(body, &echo); err != nil {
		t.Fatalf("GET %s%s: %v: %s", host, path, err, body)
	}
	a.path = echo.Path
	a.rule = echo.Location
	if srv != nil {
		a.rule = rule
	}
	return a
}

// TestIngressNginxDifferentialNotRE2 runs real nginx with the locations
// ingress-nginx writes for a use-regex path with a lookahead, which nginx's
// PCRE serves and Go's RE2 cannot compile: nginx answers from that
// location, gwdev (which leaves it out) with the default backend's 404,
// and gwdev's warning at the path says exactly that.
func TestIngressNginxDifferentialNotRE2(t *testing.T) {
	bin := nginxBinary(t)
	if bin == "" {
		t.Skip("nginx is not installed and cannot be (needs root and apt-get): the differential test against real nginx does not run")
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"location": r.Header.Get("X-Gwdev-Location"), "path": r.URL.Path})
	}))
	defer backend.Close()
	lr := loadIngressManifests(t, ingressClassNginx+ingress("re", "re.example", nginxAnn("use-regex", "true"), "ImplementationSpecific /a(?=b) api",
		"ImplementationSpecific /v[0-9]+ api")+ingressServices("api"))
	nginxPort := realNginx(t, bin, func(listen string) string {
		return ingressnginx.NginxConf(lr.Snapshot, engine.Options{}, listen, strings.TrimPrefix(backend.URL, "http://"))
	})
	emu := serveIngressSnapshot(t, lr)
	want := map[string][2]nginxAnswer{ // nginx, gwdev
		"/ab":  {{status: 200, rule: "ingress/default/re/rule/0/path/0", path: "/ab"}, {status: 404}},
		"/AB":  {{status: 200, rule: "ingress/default/re/rule/0/path/0", path: "/AB"}, {status: 404}},
		"/ac":  {{status: 404}, {status: 404}},
		"/v12": {{status: 200, rule: "ingress/default/re/rule/0/path/1", path: "/v12"}, {status: 200, rule: "ingress/default/re/rule/0/path/1", path: "/v12"}},
	}
	for path, w := range want {
		n := askNginxSide(t, "127.0.0.1", nginxPort, "re.example", path, nil)
		e := askNginxSide(t, emu.addr, emu.httpPort, "re.example", path, emu.srv)
		if e.status != 200 {
			e.rule = "" // the rule of a 404 is the default backend's
		}
		if n != w[0] || e != w[1] {
			t.Errorf("GET http://re.example%s\n  nginx: %+v, want %+v\n  gwdev: %+v, want %+v", path, n, w[0], e, w[1])
		}
	}
	said := false
	for _, f := range emu.res.Findings {
		said = said || f.Kind == engine.NoteRegexNotRE2 && strings.HasPrefix(f.Message, `path "/a(?=b)": `) && strings.Contains(f.Message, "nginx's PCRE does") &&
			strings.Contains(f.Message, "the default backend's 404")
	}
	if !said {
		t.Errorf("gwdev does not say that nginx serves /a(?=b) and gwdev answers 404: %v", emu.res.Findings)
	}
}

// TestIngressNginxDifferentialBasicAuthFile runs real nginx with
// auth_basic_user_file holding the auth Secret's htpasswd file, as
// ingress-nginx writes it, and gwdev with the same Secret, and sends both
// the same credentials: nginx lets no one in through a line without a
// colon or a line with an empty user name, and refuses credentials whose
// user name is empty; gwdev must agree.
func TestIngressNginxDifferentialBasicAuthFile(t *testing.T) {
	bin := nginxBinary(t)
	if bin == "" {
		t.Skip("nginx is not installed and cannot be (needs root and apt-get): the differential test against real nginx does not run")
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer backend.Close()
	file := "# staff\nbob:{PLAIN}bpass\nmallory{PLAIN}nocolon\n:{PLAIN}empty\n  \napr:$apr1$abcdefgh$UkZoB0qp2g9KE9.krwnMP0\n"
	dir := t.TempDir()
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	nginxPort := realNginx(t, bin, func(listen string) string {
		return fmt.Sprintf("server {\n  listen %s;\n  location / {\n    auth_basic %q;\n    auth_basic_user_file %s;\n    proxy_pass %s;\n  }\n}\n",
			listen, "Staff", htpasswd, backend.URL)
	})
	emu := serveIngresses(t, ingressClassNginx+ingress("app", "app.example", nginxAnn("auth-type", "basic", "auth-secret", "users", "auth-realm", "Staff"), "Prefix / web")+
		ingressServices("web")+"---\napiVersion: v1\nkind: Secret\nmetadata: {name: users}\nstringData:\n  auth: "+strconv.Quote(file)+"\n")
	ask := func(port int, addr, user, pass string, withAuth bool) string {
		req, err := http.NewRequest("GET", "http://"+net.JoinHostPort(addr, strconv.Itoa(port))+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "app.example"
		if withAuth {
			req.SetBasicAuth(user, pass)
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return strconv.Itoa(resp.StatusCode) + " " + resp.Header.Get("WWW-Authenticate")
	}
	for _, c := range []struct {
		user, pass string
		withAuth   bool
	}{
		{"", "", false}, {"bob", "bpass", true}, {"bob", "wrong", true}, {"", "empty", true}, {"", "", true},
		{"mallory{PLAIN}nocolon", "", true}, {"mallory", "nocolon", true}, {"apr", "p@ss w0rd", true}, {"apr", "p@ss w0rD", true},
	} {
		n := ask(nginxPort, "127.0.0.1", c.user, c.pass, c.withAuth)
		e := ask(emu.httpPort, emu.addr, c.user, c.pass, c.withAuth)
		if n != e {
			t.Errorf("credentials %q:%q (sent %v)\n  nginx: %s\n  gwdev: %s", c.user, c.pass, c.withAuth, n, e)
		}
	}
}
