package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	junit "github.com/joshdk/go-junit"

	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/internal/routetest"
)

// sampleTestDirs are the samples with routing test files.
func sampleTestDirs(t *testing.T) []string {
	t.Helper()
	files, err := routetest.Find("../../samples")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, f := range files {
		d := filepath.Dir(f)
		if len(dirs) == 0 || dirs[len(dirs)-1] != d {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) < 5 {
		t.Fatalf("only %d samples have test files", len(dirs))
	}
	return dirs
}

// Every sample's routing tests pass, and every format says so: JUnit XML
// as a JUnit parser reads it, SARIF valid against the 2.1.0 schema, JSON.
func TestTestSamples(t *testing.T) {
	schema := sarifSchema(t)
	for _, dir := range sampleTestDirs(t) {
		out, errOut, code := runGwdev(t, "", "test", dir)
		if code != 0 {
			t.Errorf("gwdev test %s: exit %d\n%s%s", dir, code, out, errOut)
			continue
		}
		if !strings.Contains(out, "PASS") {
			t.Errorf("%s: %s", dir, out)
		}
		out, _, code = runGwdev(t, "", "test", "--format", "junit", dir)
		suites, err := junit.Ingest([]byte(out))
		if err != nil || code != 0 || len(suites) == 0 {
			t.Fatalf("%s: junit (exit %d) does not parse: %v\n%s", dir, code, err, out)
		}
		for _, s := range suites {
			if s.Totals.Tests == 0 || s.Totals.Failed != 0 || s.Totals.Passed != s.Totals.Tests {
				t.Errorf("%s: junit suite %s: %+v", dir, s.Name, s.Totals)
			}
		}
		out, _, _ = runGwdev(t, "", "test", "--format", "sarif", dir)
		if log := checkSARIF(t, schema, dir, out); len(log.Runs[0].Results) != 0 {
			t.Errorf("%s: SARIF results for passing cases: %s", dir, out)
		}
		out, _, _ = runGwdev(t, "", "test", "--format", "json", dir)
		var run routetest.Run
		if err := json.Unmarshal([]byte(out), &run); err != nil || len(run.Files) == 0 {
			t.Errorf("%s: json: %v\n%s", dir, err, out)
		}
	}
}

// mutations: for each expectation type, a case of samples/basic (or
// another sample) with a wrong expectation, which must fail, naming the
// field and the line in every format.
var mutations = []struct {
	sample, field, expect string
	url                   string
}{
	{"basic", "refused", "refused: true", ""},
	{"basic", "reason", "reason: no such thing", ""},
	{"basic", "listener", "listener: gateway/default/web/listener/other", ""},
	{"basic", "route.kind", "route: {kind: GRPCRoute}", ""},
	{"https", "route.name", "route: {name: redirect-to-https}", "https://app.example.com:443/"},
	{"basic", "route.namespace", "route: {namespace: other}", ""},
	{"basic", "route.rule", "route: {rule: 1}", ""},
	{"basic", "route.match", "route: {match: 1}", ""},
	{"basic", "backend.service", "backend: {service: default/frontend}", ""},
	{"basic", "backend.target", "backend: {target: mapped}", ""},
	{"basic", "backend.pod", "backend: {pod: nope}", ""},
	{"basic", "status", "status: 503", ""},
	{"basic", "responseHeaders.Content-Type", "responseHeaders: {Content-Type: null}", ""},
	{"basic", "received.path", "received: {path: /elsewhere}", ""},
	{"basic", "received.host", "received: {host: nope.example}", ""},
	{"basic", "received.method", "received: {method: PUT}", ""},
	{"basic", "received.headers.X-Missing", "received: {headers: {X-Missing: v}}", ""},
	{"basic", "mirrors", "mirrors: [default/frontend]", ""},
	{"basic", "auth.asked", "auth: {asked: [gateway/x]}", ""},
	{"ingress-basic-auth", "auth.basic", "auth: {basic: allowed}", "http://intranet.example.com/"},
	{"ingress-basic-auth", "auth.user", "auth: {user: bob}", "http://intranet.example.com/"},
	{"basic", "auth.basic", "auth: {basic: refused}", ""},
	{"ingress-nginx", "rateLimit.limited", "rateLimit: {limited: true}", "https://shop.example.com/api/orders"},
	{"ingress-nginx", "rateLimit.status", "rateLimit: {status: 429}", "https://shop.example.com/api/orders"},
	{"gwin", "policies", "policies: [GatewayPolicy default/nope]", "http://shop.example.com:8080/api/orders"},
	{"filters", "responseHeaders.X-Served-By", "responseHeaders: {X-Served-By: web}", "http://shop.example.com:8080/v1/x"},
	{"https", "location", "location: https://app.example.com/elsewhere", "http://app.example.com:80/login"},
	{"grpc", "grpcStatus", "grpcStatus: NotFound", "grpc://grpc.example.com:9090/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/EchoTwo"},
	{"tcp-udp", "reply", "reply: nothing like it", "tcp://127.0.0.1:9100"},
	{"tcp-udp", "split.shares", "split: {shares: {default/tcp-echo-a: 0.25}, tolerance: 0.1}", "tcp://127.0.0.1:9100"},
}

// Each expectation type fails when it is wrong (mutation): the case fails,
// exit 1, and the output names the field at its line.
func TestTestMutationsFail(t *testing.T) {
	for _, m := range mutations {
		url := m.url
		if url == "" {
			url = "http://app.example.com:8080/api/users"
		}
		expect := m.expect
		count, line := "", "6"
		if strings.HasPrefix(expect, "split") {
			count, line = "\n    count: 100", "7"
		}
		file := "cases:\n- name: wrong " + m.field + "\n  request:\n    url: " + url + count + "\n  expect:\n    " + expect + "\n"
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "m.gwtest.yaml"), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runGwdev(t, "", "test", "--tests", dir, "../../samples/"+m.sample)
		if code != 1 || !strings.Contains(out, "m.gwtest.yaml:"+line) || !strings.Contains(out, " "+m.field+" ") {
			t.Errorf("%s: exit %d, want 1 naming %s at line %s:\n%s%s", m.field, code, m.field, line, out, errOut)
		}
		gh, _, _ := runGwdev(t, "", "test", "--format", "github", "--tests", dir, "../../samples/"+m.sample)
		if !strings.Contains(gh, "::error file="+filepath.Join(dir, "m.gwtest.yaml")+",line="+line+",") {
			t.Errorf("%s: github annotations:\n%s", m.field, gh)
		}
	}
}

// The differential test: for every sample case sent once, the route, rule,
// match and backend gwdev test saw served equal `gwdev explain -o json`'s
// for the same request, and the echo backend that answered is the Service
// the trace names.
func TestTestAgreesWithExplain(t *testing.T) {
	compared := 0
	for _, dir := range sampleTestDirs(t) {
		out, _, code := runGwdev(t, "", "test", "--format", "json", dir)
		var run routetest.Run
		if err := json.Unmarshal([]byte(out), &run); err != nil || code != 0 {
			t.Fatalf("%s: exit %d: %v\n%s", dir, code, err, out)
		}
		for _, fr := range run.Files {
			f, err := routetest.ParseFile(fr.Path)
			if err != nil {
				t.Fatal(err)
			}
			for i, cr := range fr.Cases {
				c := f.Cases[i]
				a := cr.Actual
				if c.Request.Count > 1 || a == nil {
					continue
				}
				args := []string{"explain", "-o", "json"}
				if c.Request.Method != "" {
					args = append(args, "-X", c.Request.Method)
				}
				for k, v := range c.Request.Headers {
					args = append(args, "-H", k+": "+v)
				}
				if c.Request.HTTP2 {
					args = append(args, "--http2")
				}
				if c.Request.SNI != nil {
					args = append(args, "--sni", *c.Request.SNI)
				}
				if c.Request.Gateway != "" {
					args = append(args, "--gateway", c.Request.Gateway)
				}
				exOut, _, _ := runGwdev(t, "", append(args, dir, c.Request.URL)...)
				var ex struct {
					Listener string `json:"listener"`
					Service  string `json:"service"`
					Matched  *struct {
						Route struct{ Kind, Namespace, Name string } `json:"route"`
						Rule  int                                    `json:"rule"`
						Match int                                    `json:"match"`
					} `json:"matched"`
					Candidates []string `json:"candidates"`
					AuthAsked  []string `json:"authAsked"`
				}
				if err := json.Unmarshal([]byte(exOut), &ex); err != nil {
					t.Fatalf("%s %s: explain: %v\n%s", dir, c.Name, err, exOut)
				}
				label := fr.Path + ":" + strconv.Itoa(c.Line)
				got := "none"
				if a.Route != nil {
					got = a.Route.String()
				}
				want := "none"
				if m := ex.Matched; m != nil {
					want = (&routetest.RouteAt{Kind: m.Route.Kind, Namespace: m.Route.Namespace, Name: m.Route.Name, Rule: m.Rule, Match: m.Match}).String()
				}
				if got != want || a.Listener != ex.Listener {
					t.Errorf("%s: served %s on %q, explain %s on %q", label, got, a.Listener, want, ex.Listener)
				}
				// explain does not ask ExternalAuth servers: a request the
				// server denied reached no backend.
				deniedByAuth := len(ex.AuthAsked) > 0 && a.Service == "" && a.Status >= 400
				if len(ex.Candidates) <= 1 && a.Service != ex.Service && !deniedByAuth {
					t.Errorf("%s: served backend %q, explain %q", label, a.Service, ex.Service)
				}
				if r := a.Received; r != nil {
					if svc, _, _ := strings.Cut(a.Service, ":"); r.Service != svc {
						t.Errorf("%s: the trace names %s, the echo backend that answered is %s", label, a.Service, r.Service)
					}
				}
				compared++
			}
		}
	}
	if compared < 10 {
		t.Errorf("only %d cases compared", compared)
	}
}

// A split's shares repeat with the same --seed (the data plane's picks are
// seeded) and change with another.
func TestTestSeedRepeatsShares(t *testing.T) {
	shares := func(seed string) string {
		out, _, _ := runGwdev(t, "", "test", "--format", "json", "--seed", seed, "../../samples/tcp-udp")
		var run routetest.Run
		if err := json.Unmarshal([]byte(out), &run); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(run.Files[0].Cases[0].Actual.Shares)
		return string(b)
	}
	a, b, c := shares("5"), shares("5"), shares("6")
	if a != b || a == c {
		t.Errorf("seed 5: %s then %s; seed 6: %s", a, b, c)
	}
}

// --record writes cases that then pass, on every sample with test files
// (the URLs of its cases), and refuses to overwrite a file.
func TestTestRecordThenPass(t *testing.T) {
	for _, dir := range sampleTestDirs(t) {
		files, _ := routetest.Find(dir)
		var urls []string
		for _, p := range files {
			f, err := routetest.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range f.Cases {
				urls = append(urls, c.Request.URL)
			}
		}
		rec := filepath.Join(t.TempDir(), "rec.gwtest.yaml")
		out, errOut, code := runGwdev(t, "", append([]string{"test", dir, "--record", rec}, urls...)...)
		if code != 0 {
			t.Fatalf("%s: record: exit %d\n%s%s", dir, code, out, errOut)
		}
		out, errOut, code = runGwdev(t, "", "test", "--tests", rec, dir)
		if code != 0 || !strings.Contains(out, "PASS  "+report.Plural(len(urls), "case")+" in ") {
			b, _ := os.ReadFile(rec)
			t.Errorf("%s: the recorded cases: exit %d\n%s%s\n%s", dir, code, out, errOut, b)
		}
		if _, _, code := runGwdev(t, "", "test", dir, "--record", rec, urls[0]); code != 2 {
			t.Errorf("%s: --record over an existing file: exit %d", dir, code)
		}
	}
}

// --update rewrites the failed fields in place (comments and the passing
// case kept), says each change, and the file then passes; a field it
// cannot write is said and left, and the run still fails.
func TestTestUpdate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "u.gwtest.yaml")
	in := `# a comment that must stay
cases:
- name: api
  request: {url: "http://app.example.com:8080/api/users"}
  expect:
    route: {name: app, rule: 1}   # wrong on purpose
    status: 200
    received:
      path: /nope
      headers: {X-Nope: v}
    backend: {service: default/frontend}
- name: unchanged
  request: {url: "http://app.example.com:8080/"}
  expect: {status: 200}
`
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runGwdev(t, "", "test", "--update", "--tests", dir, "../../samples/basic")
	b, _ := os.ReadFile(file)
	got := string(b)
	for _, want := range []string{"# a comment that must stay", "rule: 0}", "path: /api/users", "X-Nope: null", "default/api:8080", "expect: {status: 200}"} {
		if !strings.Contains(got, want) {
			t.Errorf("the updated file has no %q:\n%s", want, got)
		}
	}
	if code != 0 || !strings.Contains(errOut, "u.gwtest.yaml:6: route.rule: 1 → 0") || !strings.Contains(out, "PASS  2 cases") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := runGwdev(t, "", "test", "--tests", dir, "../../samples/basic"); code != 0 {
		t.Errorf("the updated file fails: exit %d", code)
	}
	// No echo backend answers a 404: received cannot be written.
	bad := "cases:\n- request: {url: \"http://nobody.example:8080/\"}\n  expect:\n    received: {path: /}\n"
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runGwdev(t, "", "test", "--update", "--tests", dir, "../../samples/basic")
	if b, _ := os.ReadFile(file); code != 1 || string(b) != bad || !strings.Contains(errOut, "received: not updated") {
		t.Errorf("exit %d, file\n%s\n%s", code, b, errOut)
	}
}

// migrate --emit-tests on samples/ingress-nginx writes cases that pass
// against the ingress-nginx emulation and fail, listing the differences,
// against the converted routes (the folder with migrate's output in place
// of its Ingresses).
func TestMigrateEmitTests(t *testing.T) {
	dir := t.TempDir()
	tests, migrated := filepath.Join(dir, "ing.gwtest.yaml"), filepath.Join(dir, "conv", "migrated.yaml")
	if err := os.MkdirAll(filepath.Dir(migrated), 0o755); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runGwdev(t, "", "migrate", "../../samples/ingress-nginx", "-o", migrated, "--emit-tests", tests)
	if code > 1 || !strings.Contains(errOut, "routing test cases to "+tests) {
		t.Fatalf("migrate --emit-tests: exit %d\n%s", code, errOut)
	}
	out, errOut, code := runGwdev(t, "", "test", "--tests", tests, "../../samples/ingress-nginx")
	if code != 0 {
		t.Errorf("the emitted cases fail against the Ingresses: exit %d\n%s%s", code, out, errOut)
	}
	for _, f := range []string{"services.yaml", "secret.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../samples/ingress-nginx", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "conv", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _, code = runGwdev(t, "", "test", "--format", "json", "--tests", tests, filepath.Join(dir, "conv"))
	var run routetest.Run
	if err := json.Unmarshal([]byte(out), &run); err != nil {
		t.Fatal(err)
	}
	n, failed := run.Counts()
	// The sample's admin Ingress asks for basic auth, which the Gateway
	// API cannot say: its 403s became 200s.
	found := false
	for _, c := range run.Files[0].Cases {
		for _, m := range c.Mismatches {
			found = found || (strings.Contains(c.Name, "Ingress/default/admin") && m.Field == "status" && m.Want == "403" && strings.HasPrefix(m.Got, "200"))
		}
	}
	if code != 1 || failed == 0 || failed == n || !found {
		t.Errorf("against the converted routes: exit %d, %d of %d cases failed, admin's basic auth difference found: %v", code, failed, n, found)
	}
	if _, _, code := runGwdev(t, "", "migrate", "../../samples/ingress-nginx", "-o", migrated, "--emit-tests", tests); code != 2 {
		t.Errorf("--emit-tests over an existing file: exit %d", code)
	}
}

// Impossible expectations are errors at file:line:column (exit 2), not
// failures: a port no listener has, a Service or route the folder does
// not have.
func TestTestImpossibleExpectations(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "i.gwtest.yaml")
	in := `cases:
- request: {url: "http://app.example.com:9999/"}
  expect: {status: 200}
- request: {url: "http://app.example.com:8080/"}
  expect:
    backend: {service: default/nope:80}
    mirrors: [default/gone]
    route: {kind: HTTPRoute, name: missing}
- request: {url: "http://app.example.com:9999/"}
  expect: {refused: true}
`
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runGwdev(t, "", "test", "--tests", dir, "../../samples/basic")
	for _, want := range []string{
		file + ":2:18: no listener has port 9999 (listening: 8080)",
		file + ":6:24: no Service default/nope in the folder",
		file + ":7:14: no Service default/gone in the folder",
		file + ":8:12: no route HTTPRoute missing in the folder",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no %q in:\n%s", want, errOut)
		}
	}
	if code != 2 || strings.Count(errOut, "\n") != 4 {
		t.Errorf("exit %d, want 2 and four errors:\n%s", code, errOut)
	}
}

// A case's clientCert is presented in the TLS handshake: with it the
// listener that validates client certificates lets the request through to
// the route; without it the handshake is refused.
func TestTestClientCertificate(t *testing.T) {
	dir, certFile, keyFile := mtlsFolder(t)
	file := filepath.Join(t.TempDir(), "mtls.gwtest.yaml")
	cases := `cases:
- name: with alice's certificate
  request:
    url: https://mtls.example.com:443/
    clientCert: {cert: ` + certFile + `, key: ` + keyFile + `}
  expect:
    route: {name: app}
    status: 200
- name: without a certificate
  request:
    url: https://mtls.example.com:443/
  expect:
    refused: true
`
	if err := os.WriteFile(file, []byte(cases), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runGwdev(t, "", "test", "--tests", file, dir); code != 0 {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// The first case without its certificate fails: the certificate is
	// what let it in.
	if err := os.WriteFile(file, []byte(strings.Replace(cases, "    clientCert: {cert: "+certFile+", key: "+keyFile+"}\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runGwdev(t, "", "test", "--tests", file, dir); code != 1 || !strings.Contains(out, "client didn't provide a certificate") {
		t.Errorf("without the certificate: exit %d\n%s", code, out)
	}
}

// A case that cannot be sent fails, saying why; it is never skipped.
func TestTestUnsendableCaseFails(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "u.gwtest.yaml"), []byte("cases:\n- request: {url: \"ftp://app.example.com:21/\"}\n  expect: {status: 200}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runGwdev(t, "", "test", "--tests", dir, "../../samples/basic")
	if code != 1 || !strings.Contains(out, `the request cannot be sent: URL "ftp://app.example.com:21/": unknown scheme "ftp"`) {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// --update writes the rate-limit decision that happened: no request of one
// refused, and 503 as the status of the first refused beyond the burst.
func TestTestUpdateRateLimit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "u.gwtest.yaml")
	in := `cases:
- name: one request
  request: {url: "https://shop.example.com/api/orders"}
  expect:
    rateLimit: {limited: true}
- name: beyond the burst
  request: {url: "https://shop.example.com/api/orders", count: 130}
  expect:
    rateLimit: {limited: true, status: 429}
`
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runGwdev(t, "", "test", "--update", "--tests", dir, "../../samples/ingress-nginx")
	b, _ := os.ReadFile(file)
	got := string(b)
	for _, want := range []string{"rateLimit: {limited: false}", "rateLimit: {limited: true, status: 503}"} {
		if !strings.Contains(got, want) {
			t.Errorf("the updated file has no %q:\n%s", want, got)
		}
	}
	if code != 0 || !strings.Contains(errOut, "u.gwtest.yaml:5: rateLimit.limited: true → false") || !strings.Contains(errOut, "rateLimit.status: 429 → 503") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// --update rewrites a wrong basic-auth decision and user to what the data
// plane decided: refused without credentials, the user let in with them.
func TestTestUpdateBasicAuth(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "u.gwtest.yaml")
	in := `cases:
- name: no credentials
  request: {url: "http://intranet.example.com/"}
  expect:
    auth: {basic: allowed}
- name: alice
  request: {url: "http://intranet.example.com/", headers: {Authorization: "Basic YWxpY2U6b3BlbiBzZXNhbWU="}}
  expect:
    auth: {basic: none, user: bob}
`
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runGwdev(t, "", "test", "--update", "--tests", dir, "../../samples/ingress-basic-auth")
	b, _ := os.ReadFile(file)
	got := string(b)
	for _, want := range []string{"auth: {basic: refused}", "auth: {basic: allowed, user: alice}"} {
		if !strings.Contains(got, want) {
			t.Errorf("the updated file has no %q:\n%s", want, got)
		}
	}
	if code != 0 || !strings.Contains(errOut, "u.gwtest.yaml:5: auth.basic: allowed → \"refused\"") || !strings.Contains(errOut, "auth.user: bob → \"alice\"") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}
