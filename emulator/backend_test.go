package emulator

import (
	"context"
	"encoding/pem"
	"fmt"
	"math"

	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

func TestWeightedSplit(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("split", prefix("/split"), echo("v1", 80), echo("v2", 20), echo("zero", 0)),
			rule("half", prefix("/half"), echo("ok", 1), invalid("missing", 1, "backendRef Service default/missing not found")),
		)))))
	})
	const n = 2000
	count := map[string]int{}
	for range n {
		count[h.get("example.com", "/split").echo(t).Service]++
	}
	if count["zero"] != 0 {
		t.Errorf("a weight-0 backend got %d requests", count["zero"])
	}
	// 80/20 with n=2000: σ ≈ 18 requests; allow 5σ.
	if d := math.Abs(float64(count["v1"]) - 0.8*n); d > 90 {
		t.Errorf("v1 got %d of %d, want about %d", count["v1"], n, int(0.8*n))
	}
	codes := map[int]int{}
	for range 400 {
		codes[h.get("example.com", "/half").status]++
	}
	if codes[200]+codes[500] != 400 || codes[500] < 140 || codes[500] > 260 {
		t.Errorf("half invalid: %v", codes)
	}
	res, tr := h.traced(h.request("GET", "example.com", "/half"))
	for res.status != 500 {
		res, tr = h.traced(h.request("GET", "example.com", "/half"))
	}
	if !strings.Contains(tr.Reason, "not found") || tr.Backend == "" {
		t.Errorf("trace of an invalid backend: %+v", tr)
	}
}

func TestAllWeightsZero(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("r", prefix("/"), echo("a", 0), echo("b", 0)))))))
	})
	if res := h.get("example.com", "/"); res.status != 500 {
		t.Errorf("status %d", res.status)
	}
}

// countingBackend is a local HTTP backend that names itself in a header.
func countingBackend(t *testing.T, name string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Served-By", name)
		fmt.Fprintf(w, "%s %s %s xff=%s xfh=%s xfp=%s", name, r.Host, r.URL.RequestURI(),
			r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Host"), r.Header.Get("X-Forwarded-Proto"))
	}))
	t.Cleanup(s.Close)
	return s
}

func TestMappedBackends(t *testing.T) {
	a, b := countingBackend(t, "a"), countingBackend(t, "b")
	down := refusedPort(t)
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("rr", prefix("/rr"), mapped("ab", 1, a.Listener.Addr().String(), b.Listener.Addr().String())),
			rule("down", prefix("/down"), mapped("down", 1, fmt.Sprintf("127.0.0.1:%d", down))),
			rule("none", prefix("/none"), mapped("none", 1)),
		)))))
	})
	seen := map[string]int{}
	for range 10 {
		res := h.get("app.example.com", "/rr/x?y=1", "X-Forwarded-For: 10.0.0.1")
		seen[res.header.Get("X-Served-By")]++
		if want := " app.example.com /rr/x?y=1 xff=10.0.0.1, 127.0.0.1 xfh=app.example.com xfp=http"; !strings.HasSuffix(string(res.body), want) {
			t.Errorf("backend saw %q", res.body)
		}
	}
	if seen["a"] != 5 || seen["b"] != 5 {
		t.Errorf("round robin: %v", seen)
	}
	res, tr := h.traced(h.request("GET", "x", "/down"))
	if res.status != 502 || !strings.Contains(tr.Reason, "connection refused") || tr.Upstream == "" {
		t.Errorf("down: %d, trace %q upstream %q", res.status, tr.Reason, tr.Upstream)
	}
	res, tr = h.traced(h.request("GET", "x", "/none"))
	if res.status != 503 || !strings.Contains(tr.Reason, "no endpoints") {
		t.Errorf("no endpoints: %d, trace %q", res.status, tr.Reason)
	}
	if ex := h.explain(h.request("GET", "x", "/none")); ex.Status != 503 {
		t.Errorf("Explain: %d", ex.Status)
	}
}

func TestSessionPersistence(t *testing.T) {
	a, b := countingBackend(t, "a"), countingBackend(t, "b")
	addrs := []string{a.Listener.Addr().String(), b.Listener.Addr().String()}
	h := serve(t, func(p int32) *table.Table {
		cookie := rule("cookie", prefix("/cookie"), mapped("ab", 1, addrs...), echo("echo", 1))
		cookie.SessionPersistence = &table.Session{Type: table.SessionCookie, Name: "sticky", Lifetime: table.LifetimeSession}
		// cookie.path (v1.7.0) is the cookie's Path attribute.
		cart := rule("cart", prefix("/cart"), mapped("ab3", 1, addrs...))
		cart.SessionPersistence = &table.Session{Type: table.SessionCookie, Name: "cart", Lifetime: table.LifetimeSession, Path: "/cart"}
		hdr := rule("header", prefix("/header"), mapped("ab2", 1, addrs...))
		hdr.SessionPersistence = &table.Session{Type: table.SessionHeader, Name: "X-Session"}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", cart, cookie, hdr)))))
	})
	if res := h.get("x", "/cart"); !strings.Contains(strings.Join(res.header.Values("Set-Cookie"), "\n"), "; Path=/cart;") {
		t.Errorf("cookie.path: Set-Cookie %q", res.header.Values("Set-Cookie"))
	}
	// Cookie: the first answer sets the cookie; later requests stick.
	res := h.get("x", "/cookie")
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: res.header}).Cookies() {
		if c.Name == "sticky" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("no session cookie: %v", res.header)
	}
	if cookie.Path != "/" {
		t.Errorf("a table session without a path: cookie Path %q, want /", cookie.Path)
	}
	who := func(r result) string {
		if s := r.header.Get("X-Served-By"); s != "" {
			return s
		}
		return "echo " + r.echo(t).Pod
	}
	first := who(res)
	for range 20 {
		res := h.get("x", "/cookie", "Cookie: sticky="+cookie.Value)
		if who(res) != first {
			t.Fatalf("session moved: %q then %q", first, who(res))
		}
		if res.header.Get("Set-Cookie") != "" {
			t.Fatalf("session re-issued")
		}
	}
	// Header: the value comes back in the named header.
	res = h.get("x", "/header")
	v := res.header.Get("X-Session")
	if v == "" {
		t.Fatalf("no session header")
	}
	first = who(res)
	for range 10 {
		if got := who(h.get("x", "/header", "X-Session: "+v)); got != first {
			t.Fatalf("header session moved from %s to %s", first, got)
		}
	}
	// A garbage session value starts a new session.
	if h.get("x", "/header", "X-Session: garbage").header.Get("X-Session") == "" {
		t.Error("no new session for an unknown value")
	}
}

func TestTimeouts(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		req := rule("request", prefix("/request"), echo("slow", 1))
		req.Timeouts = &table.Timeouts{Request: 100 * time.Millisecond}
		be := rule("backend", prefix("/backend"), echo("slow", 1))
		be.Timeouts = &table.Timeouts{BackendRequest: 50 * time.Millisecond}
		off := rule("off", prefix("/off"), echo("slow", 1))
		off.Timeouts = &table.Timeouts{} // "0s": disabled
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", req, be, off)))))
	})
	start := time.Now()
	res, tr := h.traced(h.request("GET", "x", "/request?delay=5s"))
	if res.status != 504 || time.Since(start) > 3*time.Second || !strings.Contains(tr.Reason, "request timeout of 100ms") {
		t.Errorf("request timeout: %d after %s, %q", res.status, time.Since(start), tr.Reason)
	}
	res, tr = h.traced(h.request("GET", "x", "/backend?delay=5s"))
	if res.status != 504 || !strings.Contains(tr.Reason, "backendRequest timeout of 50ms") {
		t.Errorf("backend timeout: %d, %q", res.status, tr.Reason)
	}
	if res := h.get("x", "/request?delay=10ms"); res.status != 200 {
		t.Errorf("fast request: %d", res.status)
	}
	if res := h.get("x", "/off?delay=150ms"); res.status != 200 {
		t.Errorf("timeout 0s must disable: %d", res.status)
	}
}

func TestRetries(t *testing.T) {
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if strings.HasSuffix(r.URL.Path, "/always") || n%3 != 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		b := make([]byte, 16)
		k, _ := r.Body.Read(b)
		fmt.Fprintf(w, "ok after %d, body %q", n, b[:k])
	}))
	defer flaky.Close()
	down := refusedPort(t)
	h := serve(t, func(p int32) *table.Table {
		r := rule("retry", prefix("/"), mapped("flaky", 1, flaky.Listener.Addr().String()))
		r.Retry = &table.Retry{Codes: []int{503}, Attempts: 2, Backoff: 10 * time.Millisecond}
		d := rule("down", prefix("/down"), mapped("down", 1, fmt.Sprintf("127.0.0.1:%d", down)))
		d.Retry = &table.Retry{Attempts: 3, Backoff: time.Millisecond}
		e := rule("echo", prefix("/status"), echo("e", 1))
		e.Retry = &table.Retry{Codes: []int{500}, Attempts: 1, Backoff: 25 * time.Millisecond}
		// retry.attempts 0 (v1.7.0): "An explicit zero value MUST disable retries".
		z := rule("zero", prefix("/zero"), mapped("flaky0", 1, flaky.Listener.Addr().String()))
		z.Retry = &table.Retry{Codes: []int{503}, Attempts: 0, Backoff: time.Millisecond}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", z, e, d, r)))))
	})
	req := h.request("POST", "x", "/once")
	req.Body = http.NoBody
	req.Body = readCloser("hello")
	res, tr := h.traced(req)
	if res.status != 200 || !strings.Contains(string(res.body), `body "hello"`) || tr.Attempts != 3 {
		t.Errorf("retried request: %d %q after %d attempts", res.status, res.body, tr.Attempts)
	}
	res, tr = h.traced(h.request("GET", "x", "/always"))
	if res.status != 503 || tr.Attempts != 3 {
		t.Errorf("exhausted retries: %d after %d attempts", res.status, tr.Attempts)
	}
	res, tr = h.traced(h.request("GET", "x", "/down"))
	if res.status != 502 || tr.Attempts != 4 {
		t.Errorf("connection errors: %d after %d attempts", res.status, tr.Attempts)
	}
	res, tr = h.traced(h.request("GET", "x", "/status/500"))
	if res.status != 500 || tr.Attempts != 2 {
		t.Errorf("echo status: %d after %d attempts", res.status, tr.Attempts)
	}
	before := calls.Load()
	res, tr = h.traced(h.request("GET", "x", "/zero/always"))
	if res.status != 503 || tr.Attempts != 1 || calls.Load() != before+1 {
		t.Errorf("attempts 0: %d after %d attempts, %d backend calls", res.status, tr.Attempts, calls.Load()-before)
	}
}

func readCloser(s string) *nopCloser { return &nopCloser{strings.NewReader(s)} }

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

func TestRetryPolicyDelay(t *testing.T) {
	p := &retryPolicy{backoff: 10 * time.Millisecond}
	for n, want := range map[int]time.Duration{1: 10 * time.Millisecond, 2: 20 * time.Millisecond, 4: 80 * time.Millisecond, 10: 100 * time.Millisecond} {
		if got := p.delay(n); got != want {
			t.Errorf("delay(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestBackendTLS(t *testing.T) {
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls %s %s", r.TLS.ServerName, r.Host)
	}))
	defer backend.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: backend.Certificate().Raw})
	h := serve(t, func(p int32) *table.Table {
		good := mapped("good", 1, backend.Listener.Addr().String())
		good.TLS = &table.BackendTLS{Policy: "default/p", SNI: "example.com", CACertificates: ca}
		san := mapped("san", 1, backend.Listener.Addr().String())
		san.TLS = &table.BackendTLS{Policy: "default/p2", SNI: "other.example.org", CACertificates: ca,
			SubjectAltNames: []table.SubjectAltName{{Hostname: "example.com"}}}
		bad := mapped("bad", 1, backend.Listener.Addr().String())
		bad.TLS = &table.BackendTLS{Policy: "default/p3", SNI: "wrong.example.org", CACertificates: ca}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("good", prefix("/good"), good), rule("san", prefix("/san"), san), rule("bad", prefix("/bad"), bad))))))
	})
	if res := h.get("app.example.com", "/good"); res.status != 200 || string(res.body) != "tls example.com app.example.com" {
		t.Errorf("TLS to backend: %d %q", res.status, res.body)
	}
	if res := h.get("app.example.com", "/san"); res.status != 200 || string(res.body) != "tls other.example.org app.example.com" {
		t.Errorf("TLS with subjectAltNames: %d %q", res.status, res.body)
	}
	res, tr := h.traced(h.request("GET", "app.example.com", "/bad"))
	if res.status != 502 || !strings.Contains(tr.Reason, "certificate") {
		t.Errorf("wrong SNI: %d %q", res.status, tr.Reason)
	}
}

func TestClientGoneIs499(t *testing.T) {
	h := serve(t, func(p int32) *table.Table { return simpleTable("127.0.0.1", p, "slow") })
	// The client gives up after a second (time for a loaded machine to
	// get the request to the echo), long before the echo's 10 s delay.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req := h.request("GET", "x", "/gone?delay=10s").WithContext(ctx)
	if _, err := h.client.Do(req); err == nil {
		t.Fatal("request did not time out")
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == "/gone?delay=10s" })
	if tr.Status != 499 || tr.Reason != "client closed the request" {
		t.Errorf("trace %d %q", tr.Status, tr.Reason)
	}
	if ex := Explain(h.tab, "127.0.0.1", h.port+1, h.request("GET", "x", "/")); ex.Status != 404 || ex.Reason == "" {
		t.Errorf("Explain on an unknown port: %d %q", ex.Status, ex.Reason)
	}
}
