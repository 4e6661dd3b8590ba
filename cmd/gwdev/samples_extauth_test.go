package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSampleExternalAuth runs every command of samples/external-auth's
// README against `gwdev up` on the sample (port 8080 moved to a free one).
func TestSampleExternalAuth(t *testing.T) {
	port := freePort(t)
	out := upSample(t, "external-auth", map[int]int{8080: port})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	readme, err := os.ReadFile(filepath.Join("..", "..", "samples", "external-auth", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, token string, body []byte) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "app.example.com"
		if token != "" {
			req.Header.Set("X-Demo-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, out.String())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	service := func(body string) (string, http.Header) {
		var e struct {
			Service string      `json:"service"`
			Headers http.Header `json:"headers"`
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatalf("not echo JSON: %v: %s", err, body)
		}
		return e.Service, e.Headers
	}
	for _, c := range []struct{ path, svc, denial string }{
		{"/admin", "admin", "header X-Demo-Token is missing"},
		{"/api", "api", "header x-demo-token is missing"},
	} {
		code, body, _ := do("GET", c.path, "", nil)
		if code != http.StatusForbidden || !strings.Contains(body, c.denial) {
			t.Errorf("%s without the token: %d %q", c.path, code, body)
		}
		code, body, _ = do("GET", c.path, "t", nil)
		if code != http.StatusOK {
			t.Fatalf("%s with the token: %d %s", c.path, code, body)
		}
		if svc, h := service(body); svc != c.svc || !strings.HasPrefix(h.Get("X-Gwdev-Auth"), "allowed by default/") {
			t.Errorf("%s with the token: service %s, X-Gwdev-Auth %q", c.path, svc, h.Get("X-Gwdev-Auth"))
		}
	}
	if len(readme) <= 1024 {
		t.Fatalf("README.md is %d bytes; the 413 command needs more than forwardBody.maxSize 1024", len(readme))
	}
	if code, body, _ := do("POST", "/admin", "t", readme); code != http.StatusRequestEntityTooLarge {
		t.Errorf("README.md as the body: %d %q", code, body)
	}
	if code, body, _ := do("GET", "/", "", nil); code != http.StatusOK {
		t.Errorf("public: %d %s", code, body)
	} else if svc, _ := service(body); svc != "public" {
		t.Errorf("public: service %s", svc)
	}
	stdout, stderr, code := runGwdev(t, "", "explain", "--dir", filepath.Join("..", "..", "samples", "external-auth"), "http://app.example.com:8080/admin")
	if code != 0 || !strings.Contains(stdout, "ExternalAuth: httproute/default/app/rule/0/filter/0/externalauth asks default/http-auth:9000 over HTTP") ||
		!strings.Contains(stdout, "only if the ExternalAuth check allows it") {
		t.Errorf("explain: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestSampleExternalAuthDotSegments: a path that reaches /admin only once
// its dot segments are removed ("..", "%2e%2e", "//", escaped slashes) gets
// the /admin rule and its ExternalAuth check, never the public rule; the
// backend receives the normalised path, and explain shows it.
func TestSampleExternalAuthDotSegments(t *testing.T) {
	port := freePort(t)
	out := upSample(t, "external-auth", map[int]int{8080: port})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(path, token string) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequest("GET", base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "app.example.com"
		if token != "" {
			req.Header.Set("X-Demo-Token", token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, out.String())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	for _, p := range []string{"/x/../admin/users", "/x/%2e%2e/admin/users", "/x/%2E%2e/admin/users", "/public/./../admin/users", "//admin/users"} {
		code, body, _ := do(p, "")
		if code != http.StatusForbidden || !strings.Contains(body, "X-Demo-Token is missing") {
			t.Errorf("%s without the token: %d %q, want the /admin rule's denial", p, code, body)
		}
		code, body, _ = do(p, "t")
		var e struct {
			Service string `json:"service"`
			Path    string `json:"path"`
		}
		if err := json.Unmarshal([]byte(body), &e); code != http.StatusOK || err != nil || e.Service != "admin" || e.Path != "/admin/users" {
			t.Errorf("%s with the token: %d service %q path %q, want admin to get /admin/users", p, code, e.Service, e.Path)
		}
	}
	// An escaped slash is unescaped and the client sent to the normalised
	// path (Envoy Gateway's default), before any rule or auth check.
	code, _, h := do("/x%2F..%2Fadmin/users?a=1", "")
	if code != http.StatusTemporaryRedirect || h.Get("Location") != "/admin/users?a=1" {
		t.Errorf("escaped slashes: %d Location %q, want 307 to /admin/users?a=1", code, h.Get("Location"))
	}
	stdout, stderr, ec := runGwdev(t, "", "explain", "--dir", filepath.Join("..", "..", "samples", "external-auth"), "http://app.example.com:8080/x/%2e%2e/admin/users")
	if ec != 0 || !strings.Contains(stdout, "/admin/users") || !strings.Contains(stdout, "httproute/default/app/rule/0") || !strings.Contains(stdout, "ExternalAuth") {
		t.Errorf("explain: exit %d\n%s%s", ec, stdout, stderr)
	}
}
