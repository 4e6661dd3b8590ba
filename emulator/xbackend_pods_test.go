package emulator

import (
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// podManifests are Pods for EndpointSelector XBackends: web-1..web-3 ready
// (no status), web-4 not ready, api-1 with other labels, v1-a, v1-b, v2-a
// for a split.
const podManifests = `apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web}}
spec: {containers: [{name: echo, image: echo}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, labels: {app: web}}
spec: {containers: [{name: echo, image: echo}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-3, labels: {app: web}}
spec: {containers: [{name: echo, image: echo}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-4, labels: {app: web}}
spec: {containers: [{name: echo, image: echo}]}
status: {phase: Running, conditions: [{type: Ready, status: "False"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: api-1, labels: {app: api}}
spec: {containers: [{name: echo, image: echo}]}
---
apiVersion: v1
kind: Pod
metadata: {name: v1-a, labels: {app: split, version: v1}}
spec: {containers: [{name: echo, image: echo}]}
---
apiVersion: v1
kind: Pod
metadata: {name: v1-b, labels: {app: split, version: v1}}
spec: {containers: [{name: echo, image: echo}]}
---
apiVersion: v1
kind: Pod
metadata: {name: v2-a, labels: {app: split, version: v2}}
spec: {containers: [{name: echo, image: echo}]}
---
`

// xbackendRef is a backendRefs entry naming an XBackend.
func xbackendRef(name string) string {
	return "{group: gateway.networking.x-k8s.io, kind: XBackend, name: " + name + "}"
}

// xbackendPodsTable builds the table of the EndpointSelector tests: /web
// to XBackend web (app=web: web-1..3 ready), /none to one selecting no Pod,
// /cookie and /header to XBackends with cookie and header sessions, /both
// with a rule session of its own too, /split between XBackends v1 and v2
// with their own cookies, /timed to one with a Permanent cookie of 1h on
// path /timed.
func xbackendPodsTable(t *testing.T) func(int32) *table.Table {
	return func(p int32) *table.Table {
		return gwinTable(t, gatewayGW+`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /web}}]
    backendRefs: [`+xbackendRef("web")+`]
  - matches: [{path: {type: PathPrefix, value: /none}}]
    backendRefs: [`+xbackendRef("none")+`]
  - matches: [{path: {type: PathPrefix, value: /cookie}}]
    backendRefs: [`+xbackendRef("cookie")+`]
  - matches: [{path: {type: PathPrefix, value: /header}}]
    backendRefs: [`+xbackendRef("header")+`]
  - matches: [{path: {type: PathPrefix, value: /both}}]
    sessionPersistence: {type: Header, header: {name: X-Route-Session}}
    backendRefs: [`+xbackendRef("cookie")+`]
  - matches: [{path: {type: PathPrefix, value: /split}}]
    backendRefs: [`+xbackendRef("v1")+`, `+xbackendRef("v2")+`]
  - matches: [{path: {type: PathPrefix, value: /timed}}]
    backendRefs: [`+xbackendRef("timed")+`]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: timed}
spec:
  type: EndpointSelector
  endpointSelector: {matchLabels: {app: web}}
  port: {number: 8080}
  sessionPersistence: {absoluteTimeout: 1h, cookie: {name: timed, path: /timed, lifetimeType: Permanent}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: web}
spec: {type: EndpointSelector, endpointSelector: {matchLabels: {app: web}}, port: {number: 8080}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: none}
spec: {type: EndpointSelector, endpointSelector: {matchLabels: {app: gone}}, port: {number: 8080}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: cookie}
spec: {type: EndpointSelector, endpointSelector: {matchLabels: {app: web}}, port: {number: 8080}, sessionPersistence: {type: Cookie, cookie: {}}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: header}
spec: {type: EndpointSelector, endpointSelector: {matchLabels: {app: web}}, port: {number: 8080}, sessionPersistence: {type: Header, header: {name: X-Web-Session}}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: v1}
spec: {type: EndpointSelector, endpointSelector: {matchLabels: {version: v1}}, port: {number: 8080}, sessionPersistence: {cookie: {name: v1-session}}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: v2}
spec: {type: EndpointSelector, endpointSelector: {matchLabels: {version: v2}}, port: {number: 8080}, sessionPersistence: {cookie: {name: v2-session}}}
---
`+podManifests, p, engine.Options{})
	}
}

// TestXBackendEndpointSelector: manifests through the loader and the
// engine to real listeners. The XBackend's endpoints are its ready Pods
// (web-1..3, not web-4 or api-1), each answered by the echo as that Pod:
// requests go round robin over the three, the trace names the Pod and its
// address, and explain names the Pod the data plane would choose. A
// selector matching no Pod answers 503.
func TestXBackendEndpointSelector(t *testing.T) {
	h := serve(t, xbackendPodsTable(t))
	count := map[string]int{}
	for range 9 {
		res, tr := h.traced(h.request(http.MethodGet, "www.example.com", "/web"))
		e := res.echo(t)
		count[e.Pod]++
		if res.status != http.StatusOK || e.Service != "web" || e.Namespace != "default" || e.HTTPPort != "8080" {
			t.Fatalf("/web: %d %+v", res.status, e)
		}
		if tr.Target != table.TargetPods || !strings.HasSuffix(tr.Why, "; Pod "+e.Pod) || tr.Upstream != e.Pod+".default.pod:8080" {
			t.Errorf("/web answered by %s: trace target %q why %q upstream %q", e.Pod, tr.Target, tr.Why, tr.Upstream)
		}
	}
	if len(count) != 3 || count["web-1"] != 3 || count["web-2"] != 3 || count["web-3"] != 3 {
		t.Errorf("answers by Pod %v, want web-1, web-2, web-3 three times each", count)
	}
	ex := h.explain(h.request(http.MethodGet, "www.example.com", "/web"))
	if !strings.Contains(ex.Why, "; Pod web-") || !strings.HasSuffix(ex.Upstream, ".default.pod:8080") || ex.Status != 0 {
		t.Errorf("explain /web: why %q upstream %q status %d, want a Pod named", ex.Why, ex.Upstream, ex.Status)
	}
	res, tr := h.traced(h.request(http.MethodGet, "www.example.com", "/none"))
	if res.status != http.StatusServiceUnavailable || !strings.Contains(tr.Reason, "has no endpoints") {
		t.Errorf("/none: %d, reason %q; want 503, no endpoints", res.status, tr.Reason)
	}
}

// TestXBackendSessionPersistence: an XBackend's own sessionPersistence pins
// a client to one of its Pods: a cookie (generated name, Path=/) or a
// header; a value that is not the XBackend's or has expired starts a new
// session; a Permanent cookie has Max-Age absoluteTimeout. It wins
// over the rule's for requests sent to the XBackend, and it does not
// override the split between two XBackends (GEP-1619): with v1's cookie,
// requests still reach v2, and every one reaching v1 gets the pinned Pod.
func TestXBackendSessionPersistence(t *testing.T) {
	h := serve(t, xbackendPodsTable(t))
	cookieOf := func(res result, name string) *http.Cookie {
		for _, c := range (&http.Response{Header: res.header}).Cookies() {
			if c.Name == name {
				return c
			}
		}
		return nil
	}

	// Cookie: without one, requests spread and each starts a session.
	seen := map[string]bool{}
	var sticky *http.Cookie
	for range 3 {
		res := h.get("www.example.com", "/cookie")
		seen[res.echo(t).Pod] = true
		if sticky = cookieOf(res, "gwdev-session-default-cookie"); sticky == nil || sticky.Path != "/" || sticky.MaxAge != 0 {
			t.Fatalf("/cookie without a cookie: Set-Cookie %q, want gwdev-session-default-cookie with Path=/ and no Max-Age", res.header.Values("Set-Cookie"))
		}
	}
	if len(seen) != 3 {
		t.Errorf("/cookie without a cookie reached %v, want the three Pods", seen)
	}
	pinned := h.get("www.example.com", "/cookie", "Cookie: "+sticky.Name+"="+sticky.Value).echo(t).Pod
	for range 6 {
		res, tr := h.traced(h.request(http.MethodGet, "www.example.com", "/cookie", "Cookie: "+sticky.Name+"="+sticky.Value))
		if got := res.echo(t).Pod; got != pinned || len(res.header.Values("Set-Cookie")) != 0 || !strings.HasSuffix(tr.Why, "; Pod "+pinned+" (pinned by session)") {
			t.Fatalf("/cookie with the cookie: Pod %s (Set-Cookie %q, why %q), want %s pinned", got, res.header.Values("Set-Cookie"), tr.Why, pinned)
		}
	}
	if res := h.get("www.example.com", "/cookie", "Cookie: gwdev-session-default-cookie=bogus.9.0"); cookieOf(res, "gwdev-session-default-cookie") == nil {
		t.Errorf("/cookie with a bogus value: no new session")
	}

	// Permanent with absoluteTimeout 1h: Max-Age 3600 and the cookie.path;
	// a value past its end starts a new session.
	timed := cookieOf(h.get("www.example.com", "/timed"), "timed")
	if timed == nil || timed.MaxAge != 3600 || timed.Path != "/timed" {
		t.Fatalf("/timed: cookie %+v, want Max-Age 3600 and Path /timed", timed)
	}
	expired := timed.Value[:strings.LastIndexByte(timed.Value, '.')] + ".1" // ended in 1970
	if cookieOf(h.get("www.example.com", "/timed", "Cookie: timed="+timed.Value), "timed") != nil ||
		cookieOf(h.get("www.example.com", "/timed", "Cookie: timed="+expired), "timed") == nil {
		t.Errorf("/timed: the live value must resume, the expired one must start a new session")
	}

	// Header: the response names the session; sending it back sticks.
	res := h.get("www.example.com", "/header")
	val := res.header.Get("X-Web-Session")
	if val == "" {
		t.Fatalf("/header: no X-Web-Session in %v", res.header)
	}
	first := res.echo(t).Pod
	for range 6 {
		if got := h.get("www.example.com", "/header", "X-Web-Session: "+val).echo(t).Pod; got != first {
			t.Fatalf("/header with the session: Pod %s, want %s", got, first)
		}
	}

	// The XBackend's session wins over the rule's for requests sent to it,
	// and holds on every route sending to the XBackend.
	res = h.get("www.example.com", "/both")
	if res.header.Get("X-Route-Session") != "" || cookieOf(res, "gwdev-session-default-cookie") == nil {
		t.Errorf("/both: X-Route-Session %q, Set-Cookie %q; want the XBackend's cookie only", res.header.Get("X-Route-Session"), res.header.Values("Set-Cookie"))
	}
	for range 3 {
		res := h.get("www.example.com", "/both", "Cookie: "+sticky.Name+"="+sticky.Value)
		if got := res.echo(t).Pod; got != pinned || len(res.header.Values("Set-Cookie")) != 0 {
			t.Fatalf("/both with /cookie's session: Pod %s (Set-Cookie %q), want %s", got, res.header.Values("Set-Cookie"), pinned)
		}
	}

	// The split stays the split; v1's cookie pins the Pod within v1.
	var v1 *http.Cookie
	for v1 == nil {
		v1 = cookieOf(h.get("www.example.com", "/split"), "v1-session")
	}
	pods := map[string]int{}
	for range 40 {
		pods[h.get("www.example.com", "/split", "Cookie: v1-session="+v1.Value).echo(t).Pod]++
	}
	if pods["v2-a"] == 0 || pods["v1-a"] > 0 && pods["v1-b"] > 0 || pods["v1-a"]+pods["v1-b"] == 0 {
		t.Errorf("/split with v1's cookie: answers %v; want v2-a and one v1 Pod only", pods)
	}
}

// TestXBackendEndpointSelectorGRPC: a GRPCRoute to an EndpointSelector
// XBackend with a header session: calls without the session metadata are
// answered by each of the three Pods' gRPC echo (as that Pod); a client
// sending back the x-web-session it got stays on one Pod.
func TestXBackendEndpointSelectorGRPC(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, gatewayGW+`apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: rpc}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [`+xbackendRef("web")+`]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: web}
spec: {type: EndpointSelector, endpointSelector: {matchLabels: {app: web}}, port: {number: 8080}, sessionPersistence: {type: Header, header: {name: x-web-session}}}
---
`+podManifests, p, engine.Options{})
	})
	echo := grpcSessionCall(t, echoClient(t, h, "grpc.example.com"), "x-web-session")
	call := func(kv ...string) (string, string) {
		ctx, session := echo(kv...)
		return ctx.GetPod(), session
	}
	seen := map[string]bool{}
	session := ""
	for range 3 {
		pod, s := call()
		seen[pod] = true
		session = s
	}
	if len(seen) != 3 || !seen["web-1"] || !seen["web-2"] || !seen["web-3"] || session == "" {
		t.Fatalf("without the session metadata: Pods %v, session %q; want web-1..3 and an x-web-session value", seen, session)
	}
	first, _ := call("x-web-session", session)
	for i := range 6 {
		if pod, _ := call("x-web-session", session); pod != first {
			t.Fatalf("call %d with the session went to %q, the session is on %q", i, pod, first)
		}
	}
}

// TestXBackendSessionFollowsPod: a session names its Pod, not a position:
// when another Pod goes (a reload of the folder), the client stays on its
// Pod; when its own Pod goes, it gets a new session on a Pod that is there
// ("SHOULD fall back to available backends … reestablishing session
// persistence with a new backend", GEP-1619).
func TestXBackendSessionFollowsPod(t *testing.T) {
	build := func(p int32, pods ...string) *table.Table {
		m := gatewayGW + `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [` + xbackendRef("web") + `]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata: {name: web}
spec: {type: EndpointSelector, endpointSelector: {matchLabels: {app: web}}, port: {number: 8080}, sessionPersistence: {cookie: {name: s}}}
`
		for _, pod := range pods {
			m += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + pod + ", labels: {app: web}}\nspec: {containers: [{name: echo, image: echo}]}\n"
		}
		return gwinTable(t, m, p, engine.Options{})
	}
	h := serve(t, func(p int32) *table.Table { return build(p, "web-1", "web-2", "web-3") })
	h.get("www.example.com", "/") // the first session goes to web-1: take web-2's
	res := h.get("www.example.com", "/")
	pinned, cookie := res.echo(t).Pod, res.header.Get("Set-Cookie")
	value := strings.TrimPrefix(strings.SplitN(cookie, ";", 2)[0], "s=")
	if pinned != "web-2" || value == "" {
		t.Fatalf("second request: Pod %s, Set-Cookie %q", pinned, cookie)
	}
	h.apply(build(h.port, "web-2", "web-3")) // web-1 goes: web-2 is now the first
	for range 4 {
		res := h.get("www.example.com", "/", "Cookie: s="+value)
		if got := res.echo(t).Pod; got != "web-2" || res.header.Get("Set-Cookie") != "" {
			t.Fatalf("after web-1 went: Pod %s (Set-Cookie %q), want web-2 still", got, res.header.Get("Set-Cookie"))
		}
	}
	h.apply(build(h.port, "web-1", "web-3")) // web-2 goes
	res = h.get("www.example.com", "/", "Cookie: s="+value)
	if got := res.echo(t).Pod; got == "web-2" || res.header.Get("Set-Cookie") == "" {
		t.Errorf("after web-2 went: Pod %s (Set-Cookie %q), want another Pod and a new session", got, res.header.Get("Set-Cookie"))
	}
}

// grpcSessionCall returns a function making one Echo call with the
// metadata kv: it answers the echo's context and the value of the session
// metadata header the gateway sent back ("" : none).
func grpcSessionCall(t *testing.T, c pb.GrpcEchoClient, header string) func(kv ...string) (*pb.Context, string) {
	return func(kv ...string) (*pb.Context, string) {
		t.Helper()
		var hdr metadata.MD
		resp, err := c.Echo(callCtx(t, kv...), &pb.EchoRequest{}, grpc.Header(&hdr))
		if err != nil {
			t.Fatal(err)
		}
		session := ""
		if v := hdr.Get(header); len(v) > 0 {
			session = v[0]
		}
		return resp.GetAssertions().GetContext(), session
	}
}
