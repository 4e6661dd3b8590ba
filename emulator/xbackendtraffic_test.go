package emulator

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// gatewayGW is Gateway gw of class gwdev with an HTTP listener on PORT,
// the start of the manifests of these tests (gwinTable replaces PORT).
const gatewayGW = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - {name: http, protocol: HTTP, port: PORT}
---
`

// failingBackend answers every request 503 and counts them.
func failingBackend(t *testing.T) (addr string, hits *atomic.Int64) {
	hits = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), hits
}

// TestRetryBudgetCutsRetries sends ten requests to each of two Services
// whose backends always answer 503, through rules that retry 503 once.
// Service limited has an XBackendTrafficPolicy: budget 20% per hour,
// minimum 1 retry per hour. Counting as the policy says (every try and
// retry is a request; a retry is allowed while retries/requests, this
// retry included, stay within 20%, or while the minimum is not used):
// request 1 retries on the minimum (2 requests, 1 retry); requests 2-7
// may not (2 retries of up to 8 requests is 25%); request 8 may (2 of 10);
// requests 9-10 may not. So limited's backend sees 10+2 tries, and the
// clients of the 8 refused retries get the gateway's 503 saying why.
// Service free has no policy: 10+10 tries.
func TestRetryBudgetCutsRetries(t *testing.T) {
	limited, limitedHits := failingBackend(t)
	free, freeHits := failingBackend(t)
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, gatewayGW+`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /limited}}]
    retry: {codes: [503], attempts: 1, backoff: 1ms}
    backendRefs: [{name: limited, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /free}}]
    retry: {codes: [503], attempts: 1, backoff: 1ms}
    backendRefs: [{name: free, port: 80}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: budget}
spec:
  targetRefs: [{group: "", kind: Service, name: limited}]
  retryConstraint:
    budget: {percent: 20, interval: 1h}
    minRetryRate: {count: 1, interval: 1h}
---
apiVersion: v1
kind: Service
metadata: {name: limited}
spec:
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: free}
spec:
  ports: [{port: 80}]
`, p, engine.Options{BackendMappings: map[string]string{"default/limited:80": limited, "default/free:80": free}})
	})
	refused := 0
	for i := range 10 {
		res, tr := h.traced(h.request("GET", "app.example.com", fmt.Sprintf("/limited/%d", i)))
		if res.status != http.StatusServiceUnavailable {
			t.Fatalf("request %d: status %d, want 503", i, res.status)
		}
		if strings.Contains(tr.Reason, "retry budget") {
			refused++
			if !strings.Contains(string(res.body), "retry not made: retry budget of XBackendTrafficPolicy default/budget for Service/default/limited exhausted") {
				t.Errorf("request %d: body %q does not say why", i, res.body)
			}
		}
		h.get("app.example.com", fmt.Sprintf("/free/%d", i))
	}
	if got := limitedHits.Load(); got != 12 {
		t.Errorf("the limited backend got %d tries, want 10 requests + 2 retries", got)
	}
	if refused != 8 {
		t.Errorf("%d traces say the retry budget refused a retry, want 8", refused)
	}
	if got := freeHits.Load(); got != 20 {
		t.Errorf("the backend without a policy got %d tries, want 10 requests + 10 retries", got)
	}
}

// namedBackend answers its name.
func namedBackend(t *testing.T, name string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, name)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestTrafficPolicySessionPersistence: Service app has two endpoints (an
// EndpointSlice each) and an XBackendTrafficPolicy with cookie session
// persistence. Rule /sticky has none of its own and takes the policy's:
// the client that keeps the cookie stays on one endpoint. Rule /own sets
// header session persistence, which wins over the policy's (GEP-1619): no
// cookie is sent there, the header is.
func TestTrafficPolicySessionPersistence(t *testing.T) {
	a, b := namedBackend(t, "a"), namedBackend(t, "b")
	_, pa, _ := net.SplitHostPort(a)
	_, pb, _ := net.SplitHostPort(b)
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, strings.NewReplacer("PA", pa, "PB", pb).Replace(gatewayGW+`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /sticky}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /own}}]
    sessionPersistence: {type: Header, header: {name: X-Own-Session}}
    backendRefs: [{name: app, port: 80}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: sticky}
spec:
  targetRefs: [{group: "", kind: Service, name: app}]
  sessionPersistence: {cookie: {name: app-session}}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: app-a, labels: {kubernetes.io/service-name: app}}
addressType: IPv4
ports: [{name: http, port: PA}]
endpoints: [{addresses: [127.0.0.1]}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: app-b, labels: {kubernetes.io/service-name: app}}
addressType: IPv4
ports: [{name: http, port: PB}]
endpoints: [{addresses: [127.0.0.1]}]
`), p, engine.Options{})
	})
	// Without the cookie, requests are spread over both endpoints.
	seen := map[string]bool{}
	var cookie string
	for range 4 {
		res := h.get("app.example.com", "/sticky")
		seen[string(res.body)] = true
		for _, c := range (&http.Response{Header: res.header}).Cookies() {
			if c.Name == "app-session" {
				cookie = c.Name + "=" + c.Value
			}
		}
	}
	if len(seen) != 2 || cookie == "" {
		t.Fatalf("without a cookie: endpoints %v, cookie %q; want both endpoints and an app-session cookie", seen, cookie)
	}
	first := string(h.get("app.example.com", "/sticky", "Cookie: "+cookie).body)
	for i := range 6 {
		if got := string(h.get("app.example.com", "/sticky", "Cookie: "+cookie).body); got != first {
			t.Fatalf("request %d with the cookie went to %q, the session is on %q", i, got, first)
		}
	}
	res := h.get("app.example.com", "/own")
	if res.header.Get("X-Own-Session") == "" || len((&http.Response{Header: res.header}).Cookies()) != 0 {
		t.Errorf("rule with its own sessionPersistence: header %q, cookies %v; want the rule's header and no policy cookie",
			res.header.Get("X-Own-Session"), res.header.Values("Set-Cookie"))
	}
}

// TestRetryBudgetWindow: the counts cover the last interval only; once it
// has passed, the budget is whole again.
func TestRetryBudgetWindow(t *testing.T) {
	c := &compiler{pool: newUpstreamPool(nil)}
	b := c.retryBudget(&table.RetryBudget{Policy: "default/p", Key: "Service/default/s", Percent: 50, Interval: time.Second})
	now := time.Unix(1000, 0)
	b.request(now)
	if err := b.allowRetry(now); err != nil { // 1 retry of 2 requests: 50%
		t.Fatalf("first retry refused: %v", err)
	}
	b.request(now)
	if err := b.allowRetry(now); err != nil { // 2 retries of 4 requests: 50%
		t.Fatalf("second retry refused: %v", err)
	}
	if err := b.allowRetry(now.Add(100 * time.Millisecond)); err == nil { // 3 of 5 is 60%
		t.Fatal("third retry in the same interval allowed")
	}
	later := now.Add(1100 * time.Millisecond)
	b.request(later)
	if err := b.allowRetry(later); err != nil {
		t.Fatalf("retry after the interval refused: %v", err)
	}
	if again := c.retryBudget(&table.RetryBudget{Policy: "default/p", Key: "Service/default/s", Percent: 50, Interval: time.Second}); again != b {
		t.Error("two backends with the same budget do not share its count")
	}
}
