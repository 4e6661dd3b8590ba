package emulator

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/testkit"
)

// End-to-end tests of the gwin profile's data-plane behaviour: manifests
// go through the loader and the engine, and the table they produce is
// served on loopback.

// gwinTable loads manifests (PORT is replaced by port) and translates them
// (the only Gateway, "gw", gets 127.0.0.1); load problems and error
// findings fail the test.
func gwinTable(t testing.TB, manifests string, port int32, opts engine.Options) *table.Table {
	t.Helper()
	res := testkit.Translate(t, "gwin.yaml", []byte(strings.ReplaceAll(manifests, "PORT", fmt.Sprint(port))), opts)
	if errs := testkit.ErrorFindings(res); len(errs) > 0 {
		t.Fatalf("error findings: %q", errs)
	}
	return res.Table
}

// gwinManifests is a gwin Gateway with the given annotations and one route
// to the echo backend of Service app.
func gwinManifests(annotations string) string {
	return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  annotations:
` + annotations + `
spec:
  gatewayClassName: gwin-default
  listeners:
  - {name: http, protocol: HTTP, port: PORT}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: app, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  ports: [{port: 80}]
`
}

func TestGwinRBACDenyByHeader(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, gwinManifests(`
    gwin.yandex.cloud/listeners.rbac.action: DENY
    gwin.yandex.cloud/listeners.rbac.principals.blocked.token.header.name: X-Api-Token
    gwin.yandex.cloud/listeners.rbac.principals.blocked.token.header.prefix: "bad-"`), p, engine.Options{})
	})
	res, tr := h.traced(h.request("GET", "app.example.com", "/", "X-Api-Token: bad-42"))
	if res.status != http.StatusForbidden || tr.Status != http.StatusForbidden {
		t.Fatalf("status %d, trace %d, want 403: %s", res.status, tr.Status, res.body)
	}
	want := `refused by RBAC gateway/default/gw/listener/http/rbac: DENY, group "blocked" matched (token: header X-Api-Token prefix "bad-")`
	if tr.Reason != want {
		t.Errorf("reason %q, want %q", tr.Reason, want)
	}
	if tr.Rule != "httproute/default/app/rule/0/match/0" {
		t.Errorf("rule %q: a refused request's trace names the rule it would have reached", tr.Rule)
	}
	res, tr = h.traced(h.request("GET", "app.example.com", "/", "X-Api-Token: good-1"))
	if res.status != http.StatusOK {
		t.Fatalf("allowed request: status %d: %s", res.status, res.body)
	}
	if len(tr.Filters) != 1 || !strings.Contains(tr.Filters[0], `DENY, no principal group matched (blocked: token: header X-Api-Token does not start with "bad-")`) {
		t.Errorf("filters %q", tr.Filters)
	}
	if res, _ := h.traced(h.request("GET", "app.example.com", "/")); res.status != http.StatusOK {
		t.Errorf("request without the header: status %d", res.status)
	}
}

func TestGwinRBACAllowByCIDR(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, gwinManifests(`
    gwin.yandex.cloud/listeners.rbac.action: ALLOW
    gwin.yandex.cloud/listeners.rbac.principals.office.net.ip.remoteIp: 127.0.0.1/32`), p, engine.Options{})
	})
	if res, tr := h.traced(h.request("GET", "app.example.com", "/")); res.status != http.StatusOK {
		t.Fatalf("from 127.0.0.1: status %d (%s)", res.status, tr.Reason)
	}
	// A second loopback address as the client: on Linux all of 127/8 is
	// local.
	other := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	t.Cleanup(other.CloseIdleConnections)
	req := h.request("GET", "app.example.com", "/", "X-Test-Id: from-127.0.0.2")
	resp, err := other.Do(req)
	if err != nil {
		t.Skipf("cannot use 127.0.0.2 as a client address here: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("from 127.0.0.2: status %d, want 403", resp.StatusCode)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.RequestHeaders.Get("X-Test-Id") == "from-127.0.0.2" })
	want := `refused by RBAC gateway/default/gw/listener/http/rbac: ALLOW, no principal group matched (office: net: remote IP 127.0.0.2 not in 127.0.0.1/32)`
	if tr.Reason != want || !strings.HasPrefix(tr.Client, "127.0.0.2:") {
		t.Errorf("client %s, reason %q, want %q", tr.Client, tr.Reason, want)
	}
}

func TestGwinRuleAndHostRBAC(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwin-default
  listeners:
  - {name: http, protocol: HTTP, port: PORT}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: app
  annotations:
    gwin.yandex.cloud/hosts.rbac.action: DENY
    gwin.yandex.cloud/hosts.rbac.principals.bots.ua.header.name: User-Agent
    gwin.yandex.cloud/hosts.rbac.principals.bots.ua.header.regex: ".*bot.*"
    gwin.yandex.cloud/rule.admin.rbac.action: ALLOW
    gwin.yandex.cloud/rule.admin.rbac.principals.staff.sso.header.name: Authorization
    gwin.yandex.cloud/rule.admin.rbac.principals.staff.sso.header.exact: "Bearer staff"
spec:
  parentRefs: [{name: gw}]
  hostnames: [app.example.com]
  rules:
  - name: admin
    matches: [{path: {type: PathPrefix, value: /admin}}]
    backendRefs: [{name: app, port: 80}]
  - backendRefs: [{name: app, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  ports: [{port: 80}]
`, p, engine.Options{})
	})
	for _, c := range []struct {
		path   string
		hdr    []string
		status int
		policy string
	}{
		{"/", nil, 200, ""},
		{"/", []string{"User-Agent: googlebot/2.1"}, 403, "httproute/default/app/host/app.example.com/rbac"},
		{"/admin", nil, 403, "httproute/default/app/rule/0/rbac"},
		{"/admin", []string{"Authorization: Bearer staff"}, 200, ""},
		{"/admin", []string{"Authorization: Bearer staff", "User-Agent: a-bot"}, 403, "httproute/default/app/host/app.example.com/rbac"},
	} {
		res, tr := h.traced(h.request("GET", "app.example.com", c.path, c.hdr...))
		if res.status != c.status || (c.policy != "" && !strings.HasPrefix(tr.Reason, "refused by RBAC "+c.policy+":")) {
			t.Errorf("%s %v: status %d (%s), want %d by %s", c.path, c.hdr, res.status, tr.Reason, c.status, c.policy)
		}
	}
}

func TestGwinAllowHTTP10RefusesH2C(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, gwinManifests(`
    gwin.yandex.cloud/listeners.http.protocolSettings.allowHTTP10: "true"`), p, engine.Options{})
	})
	if res := h.get("app.example.com", "/"); res.status != http.StatusOK {
		t.Fatalf("HTTP/1.1: status %d", res.status)
	}
	// HTTP/1.0, by hand.
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", h.port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET / HTTP/1.0\r\nHost: app.example.com\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HTTP/1.0: status %d", resp.StatusCode)
	}
	// h2c with prior knowledge is refused.
	req := h.request("GET", "app.example.com", "/", "X-Test-Id: h2c")
	resp, err = h2cClient(t).Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusHTTPVersionNotSupported {
			t.Fatalf("h2c: status %d, want 505", resp.StatusCode)
		}
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.RequestHeaders.Get("X-Test-Id") == "h2c" })
	if tr.Status != http.StatusHTTPVersionNotSupported || !strings.Contains(tr.Reason, "serves only HTTP/1.0 and HTTP/1.1 (gwin allowHTTP10); HTTP/2.0 is refused") {
		t.Errorf("trace: %d %q", tr.Status, tr.Reason)
	}
}

func TestGwinH2CAllowedWithoutAllowHTTP10(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, gwinManifests(`
    gwin.yandex.cloud/listeners.http.protocolSettings.allowHTTP10: "false"`), p, engine.Options{})
	})
	resp, err := h2cClient(t).Do(h.request("GET", "app.example.com", "/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		t.Errorf("h2c: %d %s", resp.StatusCode, resp.Proto)
	}
}

func TestGwinMaxConcurrentStreams(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, gwinManifests(`    example.com/none: ""`)+`---
apiVersion: gwin.yandex.cloud/v1
kind: GatewayPolicy
metadata: {name: h2}
spec:
  policy:
    listeners:
      http:
        protocolSettings:
          http2Options: {maxConcurrentStreams: 7}
`, p, engine.Options{})
	})
	h.s.mu.Lock()
	var got int
	for _, bl := range h.s.listeners {
		if bl.srv != nil && bl.srv.HTTP2 != nil {
			got = bl.srv.HTTP2.MaxConcurrentStreams
		}
	}
	h.s.mu.Unlock()
	if got != 7 {
		t.Errorf("MaxConcurrentStreams %d, want 7", got)
	}
	// Eight concurrent streams on one connection all complete: the client
	// queues the eighth until a stream ends.
	client := h2cClient(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			resp, err := client.Do(h.request("GET", "app.example.com", "/"))
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestGwinDiscardRulesFilterAccessLogOnly(t *testing.T) {
	var log syncBuffer
	p := freePort(t, "127.0.0.1")
	s := New(Config{AccessLog: &log})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	tab := gwinTable(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  annotations:
    gwin.yandex.cloud/logs.discardRule.notfound.httpCodes: "404"
    gwin.yandex.cloud/logs.discardRule.notfound.discardPercent: "100"
    gwin.yandex.cloud/logs.discardRule.errors.httpCodeIntervals: "HTTP_5XX"
    gwin.yandex.cloud/logs.discardRule.errors.discardPercent: "0"
spec:
  gatewayClassName: gwin-default
  listeners:
  - {name: http, protocol: HTTP, port: PORT}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: Exact, value: /ok}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: Exact, value: /broken}}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  ports: [{port: 80}]
`, p, engine.Options{})
	if err := s.Apply(tab).Err(); err != nil {
		t.Fatal(err)
	}
	// One connection, each answer read to its end: net/http's Transport
	// otherwise may dial a second connection while the first goes back to
	// its idle pool and close it unused, which the gateway rightly traces
	// as a connection without a request (seen under load).
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	t.Cleanup(client.CloseIdleConnections)
	for _, path := range []string{"/ok", "/missing", "/broken", "/ok?last=1"} {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", p, path))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	waitTrace(t, s, func(tr Trace) bool { return tr.Path == "/ok?last=1" })
	var logged []string
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		logged = logged[:0]
		for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
			var tr Trace
			if json.Unmarshal([]byte(line), &tr) == nil {
				logged = append(logged, fmt.Sprintf("%s %d", tr.Path, tr.Status))
			}
		}
		if len(logged) > 0 && strings.HasPrefix(logged[len(logged)-1], "/ok?last=1") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got, want := strings.Join(logged, ", "), "/ok 200, /broken 500, /ok?last=1 200"; got != want {
		t.Errorf("access log lines: %s, want %s (the 404 dropped)", got, want)
	}
	var traced []string
	for _, tr := range s.Traces() {
		traced = append(traced, tr.Path)
	}
	if got := strings.Join(traced, " "); got != "/ok /missing /broken /ok?last=1" {
		t.Errorf("traces %s: traces keep every request", got)
	}
}

func TestGwinRouteTimeout(t *testing.T) {
	// The backend answers when the gateway gives up on it (or after 30 s).
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(30 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwin-default
  listeners:
  - {name: http, protocol: HTTP, port: PORT}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: app
  annotations:
    gwin.yandex.cloud/rules.timeout: 100ms
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: slow, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: slow}
spec:
  ports: [{port: 80}]
`, p, engine.Options{BackendMappings: map[string]string{"default/slow:80": strings.TrimPrefix(slow.URL, "http://")}})
	})
	start := time.Now()
	res, tr := h.traced(h.request("GET", "app.example.com", "/"))
	// Well under the client's 10 s, with room for a loaded machine.
	if res.status != http.StatusGatewayTimeout || time.Since(start) > 5*time.Second {
		t.Errorf("status %d after %s (%s), want 504 after about 100ms", res.status, time.Since(start), tr.Reason)
	}
}

func TestKeepLine(t *testing.T) {
	p := &table.AccessLogPolicy{DiscardRules: []table.LogDiscardRule{
		{Name: "a", HTTPCodes: []int{404}, DiscardPercent: 100},
		{Name: "b", GRPCCodes: []string{"UNIMPLEMENTED", "CANCELLED"}, DiscardPercent: 50},
		{Name: "c", HTTPCodeIntervals: []string{"HTTP_ALL"}, DiscardPercent: 0},
	}}
	never := func(int) int { return 99 }
	always := func(int) int { return 0 }
	for _, c := range []struct {
		t    Trace
		intn func(int) int
		keep bool
	}{
		{Trace{Status: 404}, always, false},
		{Trace{Status: 200}, always, true},
		{Trace{Status: 200, GRPC: true, GRPCStatus: "Unimplemented"}, always, false},
		{Trace{Status: 200, GRPC: true, GRPCStatus: "Canceled"}, always, false},
		{Trace{Status: 200, GRPC: true, GRPCStatus: "Unimplemented"}, never, true},
		{Trace{Status: 200, GRPC: true, ResponseHeaders: http.Header{"Grpc-Status": {"12"}}}, always, false},
		{Trace{Status: 200, GRPC: true, GRPCStatus: "OK"}, always, true},
	} {
		if got := keepLine(p, &c.t, c.intn); got != c.keep {
			t.Errorf("%+v: keep %v, want %v", c.t, got, c.keep)
		}
	}
	if keepLine(&table.AccessLogPolicy{Disabled: true}, &Trace{Status: 200}, always) {
		t.Error("logs.disable keeps a line")
	}
}

func TestGwinStreamIdleTimeoutTCP(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  annotations:
    gwin.yandex.cloud/listeners.stream.idleTimeout: 200ms
spec:
  gatewayClassName: gwin-default
  listeners:
  - {name: tcp, protocol: TCP, port: PORT}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: echo}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: echo, port: 7}]
---
apiVersion: v1
kind: Service
metadata: {name: echo}
spec:
  ports: [{port: 7}]
`, p, engine.Options{})
	})
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", h.port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	r := bufio.NewReader(c)
	echoGreeting(t, r)
	if _, err := c.Write([]byte("PING\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadString('\n'); err != nil || got != "PONG\n" {
		t.Fatalf("echo: %q %v", got, err)
	}
	buf := make([]byte, 4)
	start := time.Now()
	if _, err := c.Read(buf); err == nil {
		t.Fatal("read after idle: no error")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("closed after %s, want about 200ms", d)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.End != "" })
	if tr.End != EndIdleTimeout || !strings.Contains(tr.Reason, "200ms") {
		t.Errorf("trace end %q reason %q", tr.End, tr.Reason)
	}
}

func TestIdleConnSharesActivity(t *testing.T) {
	a1, a2 := net.Pipe()
	b1, b2 := net.Pipe()
	defer a2.Close()
	defer b2.Close()
	// The idle timeout is ten times the gap between the backend's bytes,
	// so that a loaded machine delaying one does not end the stream.
	pr := &portRoutes{listeners: []*listenerRoutes{{l: &table.ListenerTable{Policy: &table.ListenerPolicy{StreamIdleTimeout: "500ms"}}}}}
	client, backend := withStreamIdle(pr, a1, b1)
	// Traffic on the backend side keeps the client side's read alive.
	go func() {
		buf := make([]byte, 1)
		for range 16 {
			time.Sleep(50 * time.Millisecond)
			go func() { _, _ = b2.Write([]byte("x")) }()
			_, _ = backend.Read(buf)
		}
	}()
	start := time.Now()
	_, err := client.Read(make([]byte, 1))
	if !errors.Is(err, errIdle) {
		t.Fatalf("err %v, want errIdle", err)
	}
	if d := time.Since(start); d < 800*time.Millisecond {
		t.Errorf("idle after %s: the other side's traffic should have kept it open", d)
	}
	if c, b := withStreamIdle(&portRoutes{}, a1, b1); c != a1 || b != b1 {
		t.Error("no policy: connections should be returned as they are")
	}
}

func TestStreamIdleTimeoutTLSTerminate(t *testing.T) {
	gwCA := newTestCA(t, "gateway CA")
	plain := lineServer(t, "plain", nil)
	cert := []*table.Certificate{gwCA.certificate("gw", certOpts{dnsNames: []string{"*.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		l := tlsListenerTable("tls", "*.example.com", table.TLSModeTerminate, cert,
			sniRouteTo("plain", "plain.example.com", mapped("plain", 1, plain)))
		l.Policy = &table.ListenerPolicy{Profile: "gwin", StreamIdleTimeout: "200ms"}
		return newTable(gateway("gw", "127.0.0.1", port(p, l)))
	})
	conn, err := h.tlsDial("plain.example.com", &tls.Config{RootCAs: gwCA.pool()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	if got := readLine(t, conn, r); got != "plain -" {
		t.Fatalf("greeting %q", got)
	}
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := r.ReadByte(); err == nil {
		t.Fatal("read after idle: no error")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("closed after %s, want about 200ms", d)
	}
	tr := waitTrace(t, h.s, func(t Trace) bool { return t.SNI == "plain.example.com" })
	if !strings.Contains(tr.Reason, "idle timeout: no traffic for 200ms") {
		t.Errorf("trace end %q reason %q", tr.End, tr.Reason)
	}
}
