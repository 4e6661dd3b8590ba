package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExplainHTTPS: for an https URL the SNI is the URL's host (or --sni),
// and a Host header that belongs to another listener of the port gets 421,
// as the data plane answers.
func TestExplainHTTPS(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"https://admin.app.example.com/x"}, []string{"sni:           admin.app.example.com", "listener:      gateway/default/secure/listener/admin", "route:         HTTPRoute/default/admin"}},
		{[]string{"-H", "Host: admin.app.example.com", "https://app.example.com/"}, []string{"sni:           app.example.com", "answer:        421 Misdirected Request"}},
		{[]string{"--sni", "app.example.com", "https://admin.app.example.com/"}, []string{"421 Misdirected Request"}},
	} {
		out, errOut, code := runGwdev(t, "", append([]string{"explain", "--dir", "../../samples/https"}, c.args...)...)
		if want := explainWantCode(out); code != want {
			t.Fatalf("%v: exit %d, want %d: %s", c.args, code, want, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
		if strings.Count(out, "hint:") > strings.Count(out, "hint: try: curl") {
			t.Errorf("%v: no-match hints after a 421 (only the data plane's curl line belongs):\n%s", c.args, out)
		}
	}
}

// TestExplainFindings: the three ways explain disagreed with the data plane
// (issue 13): an SNI no listener matches is refused, not routed; a TLSRoute
// on a passthrough listener is found; a gRPC call to a GRPCRoute method is
// routed as gRPC (HTTP/2), without a self-contradicting hint.
func TestExplainFindings(t *testing.T) {
	const echo = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo"
	for _, c := range []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{"--dir", "../../samples/https", "--sni", "nope.example.org", "https://app.example.com/"},
			[]string{"connection:    refused", `refused: no listener of port 443 matches SNI "nope.example.org"`}, []string{"backend:", "from the backend"}},
		{[]string{"--dir", "../../samples/https", "--sni", "", "https://app.example.com/"},
			[]string{"sni:           (none)", "the ClientHello has no SNI"}, []string{"backend:"}},
		{[]string{"--dir", "../../samples/tls-passthrough", "https://db.example.com:9443/"},
			[]string{"route:         TLSRoute/default/db", "service:       default/db:5432", "from the backend"}, []string{"404", "no routes attached"}},
		{[]string{"--dir", "../../samples/tls-passthrough", "tls://db.example.com:9443"},
			[]string{"TLS connection to port 9443, TLS with SNI db.example.com", "route:         TLSRoute/default/db"}, nil},
		{[]string{"--dir", "../../samples/grpc", "-X", "POST", "-H", "Content-Type: application/grpc", "http://grpc.example.com:9090/" + echo},
			[]string{"route:         GRPCRoute/default/echo", "service:       default/echo-v1:9000", "from the backend"}, []string{"404", "hint:"}},
		{[]string{"--dir", "../../samples/grpc", "grpc://grpc.example.com:9090/" + echo},
			[]string{"gRPC POST", "route:         GRPCRoute/default/echo"}, []string{"404", "hint:"}},
		{[]string{"--dir", "../../samples/grpc", "grpc://grpc.example.com:9090/foo.Bar/Baz"},
			[]string{"answer:        grpc-status Unimplemented (HTTP 200)"}, []string{"not on port 9090"}},
		// HTTP/1.1 cannot carry gRPC: the hint says so instead of naming the
		// port the request was sent to as another.
		{[]string{"--dir", "../../samples/grpc", "--http1.1", "-X", "POST", "-H", "Content-Type: application/grpc", "http://grpc.example.com:9090/" + echo},
			[]string{"404 Not Found", "only to gRPC requests"}, []string{"not on port 9090"}},
	} {
		out, errOut, code := runGwdev(t, "", append([]string{"explain"}, c.args...)...)
		if want := explainWantCode(out); code != want {
			t.Fatalf("%v: exit %d, want %d: %s", c.args, code, want, errOut)
		}
		checkLines(t, c.args, out, c.want, c.notWant)
	}
}

// explainWantCode is the exit status explain's text output calls for: 1
// when it says the connection is refused, a 4xx/5xx answer or a gRPC
// status other than OK, else 0 (TestExplainExitStatus checks the status
// itself case by case).
func explainWantCode(out string) int {
	if strings.Contains(out, "connection:    refused") || explainFailed.MatchString(out) {
		return exitProblems
	}
	return 0
}

var explainFailed = regexp.MustCompile(`answer: +([45]\d\d |grpc-status [^O])`)

// checkLines requires every want and no notWant in out.
func checkLines(t *testing.T, args []string, out string, want, notWant []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%v: output lacks %q:\n%s", args, w, out)
		}
	}
	for _, w := range notWant {
		if strings.Contains(out, w) {
			t.Errorf("%v: output has %q:\n%s", args, w, out)
		}
	}
}

// TestExplainStreams: tcp:// and udp:// URLs take the port's stream route,
// and the wrong transport says which one the port serves.
func TestExplainStreams(t *testing.T) {
	for _, c := range []struct {
		url  string
		want []string
	}{
		{"tcp://x:9100", []string{"TCP connection to port 9100", "route:         TCPRoute/default/echo", "candidates:", "from the backend"}},
		{"udp://x:9053", []string{"UDP datagrams to port 9053", "route:         UDPRoute/default/echo"}},
		{"tcp://x:9053", []string{"connection:    refused", "port 9053 is served by UDP listeners: use udp://"}},
	} {
		out, errOut, code := runGwdev(t, "", "explain", "--dir", "../../samples/tcp-udp", c.url)
		if want := explainWantCode(out); code != want {
			t.Fatalf("%s: exit %d, want %d: %s", c.url, code, want, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.url, w, out)
			}
		}
	}
	if _, errOut, code := runGwdev(t, "", "explain", "--dir", "../../samples/tcp-udp", "tcp://x"); code == 0 || !strings.Contains(errOut, "needs a port") {
		t.Errorf("tcp:// without a port: exit %d: %s", code, errOut)
	}
}

// TestExplainHintTrustsTheCertsCA: after gwdev certs, explain's hint for a
// misdirected request (Host of the other HTTPS listener) trusts the CA
// gwdev certs made with --cacert instead of curl -k.
func TestExplainHintTrustsTheCertsCA(t *testing.T) {
	dir, caDir := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, "gw.yaml"), `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - {name: app, protocol: HTTPS, port: 443, hostname: app.example.com, tls: {certificateRefs: [{name: app-cert}]}}
  - {name: api, protocol: HTTPS, port: 443, hostname: api.example.com, tls: {certificateRefs: [{name: api-cert}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {ports: [{port: 80}]}
`)
	if _, errOut, code := runGwdev(t, "", "certs", dir, "--ca-dir", caDir); code != 0 {
		t.Fatalf("certs: exit %d: %s", code, errOut)
	}
	out, _, code := runGwdev(t, "", "explain", dir, "-H", "Host: api.example.com", "https://app.example.com/")
	want := "hint: try: curl --cacert " + filepath.Join(caDir, "ca.crt") + " --resolve api.example.com:443:127.0.0.1 https://api.example.com/"
	if code != exitProblems || !strings.Contains(out, "421 Misdirected Request") || !strings.Contains(out, want) {
		t.Errorf("exit %d, want %d and %q:\n%s", code, exitProblems, want, out)
	}
}

// TestExplainHintTrustsTheFoldersCA: a folder that ships its CA as ca.crt
// (samples/https, whose README trusts it with curl --cacert) gets hints
// that trust it too, not curl -k.
func TestExplainHintTrustsTheFoldersCA(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("SSL_CERT_FILE", "")
	dir := filepath.Join("..", "..", "samples", "https")
	out, _, code := runGwdev(t, "", "explain", dir, "-H", "Host: admin.app.example.com", "https://app.example.com/")
	want := "hint: try: curl --cacert " + filepath.Join(dir, "ca.crt") + " --resolve admin.app.example.com:443:127.0.0.1 https://admin.app.example.com/"
	if code != exitProblems || !strings.Contains(out, "421 Misdirected Request") || !strings.Contains(out, want) {
		t.Errorf("exit %d, want %d and %q:\n%s", code, exitProblems, want, out)
	}
}
