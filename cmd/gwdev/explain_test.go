package main

import (
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "--dir", "../../samples/basic", "http://app.example.com:8080/api/users"},
			[]string{"rule:", "httproute/default/app/rule/0/match/0", "service:", "default/api:8080", "echo"}},
		{[]string{"explain", "--dir", "../../samples/basic", "http://app.example.com:8080/"},
			[]string{"httproute/default/app/rule/1/match/0", "default/frontend:80"}},
		{[]string{"explain", "--dir", "../../samples/basic", "http://nope.example.com:8080/"},
			[]string{"404 Not Found", "nope.example.com"}},
		{[]string{"explain", "--dir", "../../samples/https", "-X", "POST", "http://app.example.com/login"},
			[]string{"RequestRedirect", "301 Moved Permanently", "https://app.example.com/login"}},
		// The shadowed sample: the canary rule wins on its header match and
		// explain names both /api rules that lost, with the criterion.
		{[]string{"explain", "--dir", "../../samples/shadowed", "-H", "x-canary: true", "http://shop.example.com:8080/api/cart"},
			[]string{"httproute/default/search/rule/1/match/0", "also matched:  HTTPRoute default/cart rules[0].matches[0] (PathPrefix /api)",
				"lost: more header matches win (1 against 0)", `HTTPRoute default/search rules[0] ("api").matches[0]`}},
		// Without the header the oldest route wins the tie.
		{[]string{"explain", "--dir", "../../samples/shadowed", "http://shop.example.com:8080/api/cart"},
			[]string{"httproute/default/cart/rule/0/match/0", `also matched:  HTTPRoute default/search rules[0] ("api").matches[0] (PathPrefix /api)`,
				"lost: same match precedence: the oldest route wins (HTTPRoute default/cart created 2026-01-10T09:00:00Z"}},
		{[]string{"explain", "--dir", "../../samples/shadowed", "-o", "json", "http://shop.example.com:8080/api"},
			[]string{`"outranked": [`, `"httproute/default/search/rule/0/match/0"`}},
		{[]string{"explain", "--dir", "../../samples/basic", "-o", "json", "http://app.example.com:8080/api"},
			[]string{`"rule": "httproute/default/app/rule/0/match/0"`}},
	}
	for _, c := range cases {
		out, errOut, code := runGwdev(t, "", c.args...)
		want := 0 // served by a backend, or a route's redirect
		if strings.Contains(out, "404 Not Found") {
			want = exitProblems
		}
		if code != want {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, want, errOut)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
	if _, _, code := runGwdev(t, "", "explain", "--dir", "../../samples/basic", "--gateway", "nope/nope", "http://x/"); code != exitUsage {
		t.Errorf("unknown --gateway: exit %d, want %d", code, exitUsage)
	}
}

// explain prints the request it was given, text or JSON, with the
// credentials redacted as in traces.
func TestExplainRedactsCredentials(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		out, errOut, code := runGwdev(t, "", "explain", "--dir", "../../samples/https", "-o", format,
			"-H", "X-Api-Key: APIKEY1", "-H", "Authorization: Bearer BEARER2", "-H", "Referer: http://u:PASS3@x/",
			"http://app.example.com/login?token=TOKEN4&sig=SIG5&X-Amz-Signature=AMZ6&code=CODE7&page=2")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		for _, s := range []string{"APIKEY1", "BEARER2", "PASS3", "TOKEN4", "SIG5", "AMZ6", "CODE7"} {
			if strings.Contains(out, s) {
				t.Errorf("%s output leaks %s:\n%s", format, s, out)
			}
		}
		if !strings.Contains(out, "token=[redacted]") || !strings.Contains(out, "page=2") {
			t.Errorf("%s output does not show the redacted URL:\n%s", format, out)
		}
	}
}

// TestExplainExitStatus: 0 when a backend would serve the request or
// connection, 1 when it would be refused, answered 4xx/5xx by gwdev or end
// in a gRPC error, 2 on usage errors — in both output formats.
func TestExplainExitStatus(t *testing.T) {
	dir := t.TempDir()
	brokenBackend := `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /missing}}]
    backendRefs: [{name: nope, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /old}}]
    filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /new}}}]
`
	writeFile(t, dir+"/gw.yaml", brokenBackend)
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"../../samples/basic", "http://app.example.com:8080/api"}, 0},
		{[]string{"../../samples/basic", "http://nohost.example:8080/"}, exitProblems},                           // 404
		{[]string{"../../samples/basic", "http://app.example.com:9999/"}, exitProblems},                          // no Gateway on the port
		{[]string{"../../samples/tcp-udp", "tcp://127.0.0.1:9100"}, 0},                                           // a TCPRoute's backend
		{[]string{"../../samples/tcp-udp", "tcp://127.0.0.1:5432"}, exitProblems},                                // refused
		{[]string{"../../samples/https", "--sni", "nope.example.org", "https://app.example.com/"}, exitProblems}, // handshake refused
		{[]string{"../../samples/grpc", "grpc://grpc.example.com:9090/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo"}, 0},
		{[]string{"../../samples/tls-passthrough", "tls://db.example.com:9443"}, 0},
		{[]string{dir, "http://x.example:8080/missing"}, exitProblems}, // 500: the backend is not found
		{[]string{dir, "http://x.example:8080/old"}, 0},                // the route's redirect answers
		{[]string{"../../samples/basic", "--nope", "http://app.example.com:8080/"}, exitUsage},
		{[]string{"../../samples/basic", "ftp://app.example.com:8080/"}, exitUsage},
	}
	for _, c := range cases {
		for _, format := range []string{"text", "json"} {
			args := append([]string{"explain", "-o", format}, c.args...)
			out, errOut, code := runGwdev(t, "", args...)
			if code != c.code {
				t.Errorf("%v: exit %d, want %d\n%s%s", args, code, c.code, out, errOut)
			}
		}
	}
}

// TestExplainFolderWithoutURL: `gwdev explain samples/basic` (a folder, no
// URL) is a usage error that says a URL is missing, not a probe of
// http://samples/basic against the manifests of the current directory.
func TestExplainFolderWithoutURL(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		out, errOut, code := runGwdev(t, "", "explain", "-o", format, "../../samples/basic")
		if code != exitUsage || !strings.Contains(errOut, "needs a URL") || out != "" {
			t.Errorf("-o %s: exit %d, want %d with a word about the missing URL\nstdout:\n%s\nstderr:\n%s", format, code, exitUsage, out, errOut)
		}
	}
	// A bare host:port is still a URL (http:// assumed), as before.
	if _, _, code := runGwdev(t, "", "explain", "--dir", "../../samples/basic", "app.example.com:8080/api"); code != 0 {
		t.Errorf("explain --dir DIR host:port/path: exit %d, want 0", code)
	}
}
