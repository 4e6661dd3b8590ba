package emulator

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/testkit"
)

// authServer is a real HTTP authorization server on 127.0.0.1: it allows
// "Authorization: Bearer good" (200 with X-User and X-Other headers) and
// answers 401 with a WWW-Authenticate header and a body otherwise. It
// records the last request it got.
type authServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	last *http.Request
	body string
}

func newAuthServer(t *testing.T) *authServer {
	a := &authServer{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.last, a.body = r.Clone(r.Context()), string(b)
		a.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, "who are you?")
			return
		}
		w.Header().Set("X-User", "alice")
		w.Header().Set("X-Other", "not copied")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *authServer) addr() string { return strings.TrimPrefix(a.srv.URL, "http://") }

func (a *authServer) lastRequest() (*http.Request, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last, a.body
}

// extAuthManifests protects /admin with an HTTP ExternalAuth filter (the
// auth Service is mapped to a real server) and serves everything else
// unauthenticated from another rule.
const extAuthManifests = gatewayGW + `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /admin}}]
    filters:
    - type: ExternalAuth
      externalAuth:
        protocol: HTTP
        backendRef: {name: auth, port: 9000}
        http:
          path: /check
          allowedHeaders: [X-Request-Id]
          allowedResponseHeaders: [X-User]
        forwardBody: {maxSize: 16}
    backendRefs: [{name: admin, port: 80}]
  - backendRefs: [{name: public, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: auth}
spec: {ports: [{port: 9000}]}
---
apiVersion: v1
kind: Service
metadata: {name: admin}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: public}
spec: {ports: [{port: 80}]}
`

func extAuthHarness(t *testing.T, authAddr string) *harness {
	return serve(t, func(p int32) *table.Table {
		return gwinTable(t, extAuthManifests, p, engine.Options{BackendMappings: map[string]string{"default/auth:9000": authAddr}})
	})
}

// TestExternalAuthHTTPDeniesWithoutCredentials is the fail-open bug: a
// protected path must never reach a backend (its own, or another rule's)
// without the auth server's yes.
func TestExternalAuthHTTPDeniesWithoutCredentials(t *testing.T) {
	a := newAuthServer(t)
	h := extAuthHarness(t, a.addr())
	res, tr := h.traced(h.request("GET", "app.example.com", "/admin/users?x=1"))
	if res.status != http.StatusUnauthorized || string(res.body) != "who are you?" {
		t.Fatalf("status %d body %q, want the auth server's 401: trace %+v", res.status, res.body, tr)
	}
	if res.header.Get("WWW-Authenticate") != `Bearer realm="test"` {
		t.Errorf("denial headers not returned to the client: %v", res.header)
	}
	if tr.Rule != "httproute/default/app/rule/0/match/0" || tr.Backend != "" || !strings.Contains(tr.Reason, "denied") {
		t.Errorf("trace: rule %q backend %q reason %q", tr.Rule, tr.Backend, tr.Reason)
	}
	// The structure other packages read: where the rule is, which checks ran.
	want := RuleAt{Route: table.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: "app"}, Rule: 0, Match: 0}
	if tr.Matched == nil || *tr.Matched != want || len(tr.AuthAsked) != 1 || !strings.HasPrefix(tr.AuthAsked[0], "httproute/default/app/rule/0") {
		t.Errorf("trace matched %+v authAsked %q", tr.Matched, tr.AuthAsked)
	}
	req, _ := a.lastRequest()
	if req == nil || req.URL.Path != "/check/admin/users" || req.URL.RawQuery != "x=1" || req.Host != "app.example.com" || req.Method != "GET" {
		t.Fatalf("auth request %+v", req)
	}
	// The public rule still answers without auth.
	if res := h.get("app.example.com", "/public"); res.status != 200 || res.echo(t).Service != "public" {
		t.Errorf("public: %d %s", res.status, res.body)
	}
}

// TestExternalAuthHTTPAllows checks what the auth server gets (the
// always-sent headers, allowedHeaders and nothing else, Content-Length 0
// without a body) and what the backend gets (allowedResponseHeaders only).
func TestExternalAuthHTTPAllows(t *testing.T) {
	a := newAuthServer(t)
	h := extAuthHarness(t, a.addr())
	res, tr := h.traced(h.request("GET", "app.example.com", "/admin", "Authorization: Bearer good", "X-Request-Id: r1", "X-Secret: s", "X-User: mallory"))
	if res.status != 200 {
		t.Fatalf("status %d: %s (trace %+v)", res.status, res.body, tr)
	}
	e := res.echo(t)
	if u := http.Header(e.Headers).Values("X-User"); e.Service != "admin" || len(u) != 1 || u[0] != "alice" || http.Header(e.Headers).Get("X-Other") != "" {
		t.Errorf("backend got service %s headers %v", e.Service, e.Headers)
	}
	req, body := a.lastRequest()
	if req.Header.Get("Authorization") != "Bearer good" || req.Header.Get("X-Request-Id") != "r1" || req.Header.Get("X-Secret") != "" {
		t.Errorf("auth request headers %v", req.Header)
	}
	if req.ContentLength != 0 || body != "" {
		t.Errorf("auth request Content-Length %d body %q", req.ContentLength, body)
	}
	if len(tr.Filters) != 2 || tr.Filters[1] != "ExternalAuth: default/auth:9000 allowed (200), 1 header(s) copied to the request" {
		t.Errorf("trace filters %q", tr.Filters)
	}
}

// TestExternalAuthHTTPForwardBody: the body goes to the auth server up to
// forwardBody.maxSize (16 bytes here) with a correct Content-Length and
// then to the backend; a larger body is refused with 413.
func TestExternalAuthHTTPForwardBody(t *testing.T) {
	a := newAuthServer(t)
	h := extAuthHarness(t, a.addr())
	req := h.request("POST", "app.example.com", "/admin", "Authorization: Bearer good")
	req.Body, req.ContentLength = io.NopCloser(strings.NewReader("0123456789")), 10
	res, _ := h.traced(req)
	if res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	if ar, body := a.lastRequest(); body != "0123456789" || ar.ContentLength != 10 {
		t.Errorf("auth got body %q (Content-Length %d)", body, ar.ContentLength)
	}
	if got := res.echo(t).Headers["Content-Length"]; len(got) != 1 || got[0] != "10" {
		t.Errorf("backend Content-Length %v", got)
	}
	req = h.request("POST", "app.example.com", "/admin", "Authorization: Bearer good")
	req.Body, req.ContentLength = io.NopCloser(strings.NewReader(strings.Repeat("x", 17))), 17
	res, tr := h.traced(req)
	if res.status != http.StatusRequestEntityTooLarge || !strings.Contains(tr.Reason, "maxSize 16") {
		t.Errorf("17 bytes: status %d, reason %q", res.status, tr.Reason)
	}
}

// TestExternalAuthHTTPFailsClosed: an auth backend that cannot be reached
// denies (403), and the trace says why.
func TestExternalAuthHTTPFailsClosed(t *testing.T) {
	dead := "127.0.0.1:" + strconv.Itoa(int(refusedPort(t)))
	h := extAuthHarness(t, dead)
	res, tr := h.traced(h.request("GET", "app.example.com", "/admin", "Authorization: Bearer good"))
	if res.status != http.StatusForbidden {
		t.Fatalf("status %d, want 403: %s", res.status, res.body)
	}
	if tr.Backend != "" || !strings.Contains(tr.Reason, "unreachable") || !strings.Contains(tr.Reason, dead) {
		t.Errorf("trace backend %q reason %q", tr.Backend, tr.Reason)
	}
}

// TestExternalAuthOnBackendRef: an ExternalAuth filter of a backendRef runs
// when that backend is chosen, and denies like a rule's.
func TestExternalAuthOnBackendRef(t *testing.T) {
	m := gatewayGW + `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs:
    - name: app
      port: 80
      filters:
      - type: ExternalAuth
        externalAuth: {protocol: HTTP, backendRef: {name: auth, port: 9000}, http: {allowedHeaders: [X-Demo-Token]}}
---
apiVersion: v1
kind: Service
metadata: {name: auth, annotations: {gwdev.dev/echo-auth-header: X-Demo-Token}}
spec: {ports: [{port: 9000}]}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {ports: [{port: 80}]}
`
	h := serve(t, func(p int32) *table.Table { return gwinTable(t, m, p, engine.Options{}) })
	res, tr := h.traced(h.request("GET", "app.example.com", "/"))
	if res.status != http.StatusForbidden || !strings.Contains(tr.Reason, "denied by ExternalAuth httproute/default/app/rule/0/backend/0/filter/0/externalauth") {
		t.Fatalf("without the header: %d, reason %q", res.status, tr.Reason)
	}
	if res := h.get("app.example.com", "/", "X-Demo-Token: x"); res.status != 200 || res.echo(t).Service != "app" {
		t.Errorf("with the header: %d %s", res.status, res.body)
	}
}

// TestExternalAuthOverBackendTLS: a BackendTLSPolicy on the auth Service
// makes the gateway ask it over TLS (the echo serves the Secret's
// certificate); with a CA that did not sign it the check fails and denies.
func TestExternalAuthOverBackendTLS(t *testing.T) {
	ca, other := newTestCA(t, "auth CA"), newTestCA(t, "other CA")
	crt, key := ca.issue(certOpts{dnsNames: []string{"auth.internal"}})
	b64 := base64.StdEncoding.EncodeToString
	m := fmt.Sprintf(gatewayGW+`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /good}}]
    filters:
    - type: ExternalAuth
      externalAuth: {protocol: HTTP, backendRef: {name: auth, port: 443}, http: {allowedHeaders: [X-Demo-Token]}}
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /bad}}]
    filters:
    - type: ExternalAuth
      externalAuth: {protocol: GRPC, backendRef: {name: auth-wrong-ca, port: 443}, grpc: {}}
    backendRefs: [{name: app, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: auth, annotations: {gwdev.dev/echo-auth-header: X-Demo-Token, gwdev.dev/echo-tls-secret: auth-tls}}
spec: {ports: [{port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: auth-wrong-ca, annotations: {gwdev.dev/echo-auth-header: X-Demo-Token, gwdev.dev/echo-tls-secret: auth-tls}}
spec: {ports: [{port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {ports: [{port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: auth}
spec:
  targetRefs: [{group: "", kind: Service, name: auth}]
  validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}], hostname: auth.internal}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: auth-wrong-ca}
spec:
  targetRefs: [{group: "", kind: Service, name: auth-wrong-ca}]
  validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: other-ca}], hostname: auth.internal}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca}
data: {ca.crt: %q}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other-ca}
data: {ca.crt: %q}
---
apiVersion: v1
kind: Secret
metadata: {name: auth-tls}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
`, string(ca.pem), string(other.pem), b64(crt), b64(key))
	h := serve(t, func(p int32) *table.Table { return gwinTable(t, m, p, engine.Options{}) })
	if res, tr := h.traced(h.request("GET", "app.example.com", "/good")); res.status != http.StatusForbidden || !strings.Contains(tr.Reason, "answered 403") {
		t.Errorf("no header: %d, reason %q", res.status, tr.Reason)
	}
	if res, tr := h.traced(h.request("GET", "app.example.com", "/good", "X-Demo-Token: x")); res.status != 200 || res.echo(t).Service != "app" {
		t.Errorf("over TLS with the header: %d %s (reason %q)", res.status, res.body, tr.Reason)
	}
	res, tr := h.traced(h.request("GET", "app.example.com", "/bad", "X-Demo-Token: x"))
	if res.status != http.StatusForbidden || !strings.Contains(tr.Reason, "its certificate is not signed by the CA certificates of ConfigMap default/other-ca") {
		t.Errorf("wrong CA: %d, reason %q", res.status, tr.Reason)
	}
}

// TestExternalAuthUnresolvedBackendRefuses: an ExternalAuth filter whose
// auth Service does not exist is ResolvedRefs=False, and the protected
// rule answers 500; the request never falls through to the public rule.
func TestExternalAuthUnresolvedBackendRefuses(t *testing.T) {
	m := strings.ReplaceAll(extAuthManifests, "backendRef: {name: auth, port: 9000}", "backendRef: {name: missing, port: 9000}")
	h := serve(t, func(p int32) *table.Table {
		res := testkit.Translate(t, "extauth.yaml", []byte(strings.ReplaceAll(m, "PORT", fmt.Sprint(p))), engine.Options{})
		found := false
		for _, f := range res.Findings {
			found = found || (f.Type == "ResolvedRefs" && f.Status == "False" && strings.Contains(f.Message, "ExternalAuth backendRef Service default/missing not found"))
		}
		if !found {
			t.Fatalf("no ResolvedRefs=False finding: %+v", res.Findings)
		}
		return res.Table
	})
	res, tr := h.traced(h.request("GET", "app.example.com", "/admin", "Authorization: Bearer good"))
	if res.status != http.StatusInternalServerError || tr.Backend != "" || !strings.Contains(tr.Reason, "ExternalAuth backendRef") {
		t.Errorf("status %d backend %q reason %q", res.status, tr.Backend, tr.Reason)
	}
}

// TestExternalAuthClientGone: a client that goes away while the auth server
// thinks is traced as 499, not as a denial.
func TestExternalAuthClientGone(t *testing.T) {
	asked := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	h := extAuthHarness(t, strings.TrimPrefix(srv.URL, "http://"))
	ctx, cancel := context.WithCancel(context.Background())
	req := h.request("GET", "app.example.com", "/admin", "X-Test-Id: gone").WithContext(ctx)
	go func() {
		<-asked
		cancel()
	}()
	if _, err := h.client.Do(req); err == nil {
		t.Fatal("the request finished although its client went away")
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.RequestHeaders.Get("X-Test-Id") == "gone" })
	if tr.Status != 499 || !strings.Contains(tr.Reason, "client went away during the ExternalAuth check") {
		t.Errorf("status %d reason %q", tr.Status, tr.Reason)
	}
}
