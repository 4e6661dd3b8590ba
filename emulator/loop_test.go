package emulator

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// selfLoop serves a table whose rule forwards to the echo (or, with
// backendLoops, to gwdev's own listener) and mirrors to gwdev's own
// listener when mirrorLoops: the Service is mapped to the address the
// Server binds, as a --backend mapping or an EndpointSlice can do.
func selfLoop(t *testing.T, backendLoops, mirrorLoops bool) *harness {
	return serve(t, func(p int32) *table.Table {
		self := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(p)))
		b := echo("main", 1)
		if backendLoops {
			b = mapped("self", 1, self)
		}
		r := rule("r", prefix("/"), b)
		if mirrorLoops {
			r.Filters = []table.Filter{{Type: table.FilterRequestMirror, RequestMirror: &table.Mirror{Index: 0, Fraction: 1}}}
			r.Mirrors = []*table.Backend{mapped("self-mirror", 1, self)}
			r.Mirrors[0].Name = r.Name + "/filter/0/mirror"
		}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", r)))))
	})
}

// waitUntil polls cond for at most 10 s; the outcome is cond's last answer.
func waitUntil(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

func filtersContain(tr Trace, s string) bool {
	return strings.Contains(strings.Join(tr.Filters, "\n"), s)
}

// TestMirrorToOwnListenerDoesNotLoop: a RequestMirror whose Service is
// mapped to gwdev's own listener gets one copy of the client's request;
// the copy, which carries gwdev's Via entry, is not mirrored again. Without
// the hop marker every copy is mirrored (issue 35: ~9,200 requests in 15 s
// from one curl, going on after the client left).
func TestMirrorToOwnListenerDoesNotLoop(t *testing.T) {
	h := selfLoop(t, false, true)
	if res := h.get("example.com", "/m"); res.status != 200 {
		t.Fatalf("client got %d %s", res.status, res.body)
	}
	const skipped = "skipped (the request already passed through this gwdev 1 time(s)"
	ended := waitUntil(func() bool {
		ts := h.s.Traces()
		for _, tr := range ts {
			if filtersContain(tr, skipped) {
				return true
			}
		}
		return len(ts) > 50
	})
	n := len(h.s.Traces())
	if !ended || n > 50 {
		t.Fatalf("one client request made %d requests through gwdev and no trace says the mirror loop was cut (%q)", n, skipped)
	}
	h.s.mirrors.Wait() // no copy in flight: nothing more can arrive
	waitUntil(func() bool { return len(h.s.Traces()) >= 2 })
	ts := h.s.Traces()
	if len(ts) != 2 {
		t.Fatalf("one client request made %d requests through gwdev, want 2 (it and its one mirror)", len(ts))
	}
	for _, tr := range ts {
		if tr.Status != 200 {
			t.Errorf("trace %d %q, want 200", tr.Status, tr.Reason)
		}
	}
	// The copy may finish before the client's request does: tell them
	// apart by the Via entry only the copy carries, not by trace order.
	client, copied := ts[0], ts[1]
	if client.RequestHeaders.Get("Via") != "" {
		client, copied = copied, client
	}
	if !filtersContain(client, "RequestMirror: default/self-mirror:80") || filtersContain(client, "skipped") {
		t.Errorf("the client's request was not mirrored: %q", client.Filters)
	}
	if v := copied.RequestHeaders.Get("Via"); v != "1.1 "+h.s.via.name {
		t.Errorf("the mirrored copy's Via is %q, want 1.1 %s", v, h.s.via.name)
	}
}

// TestBackendToOwnListenerEndsIn508: a backend mapped to gwdev's own
// listener sends the request around maxPasses times, then gwdev answers
// 508 Loop Detected with the reason in the trace; the client gets the 508
// through the chain. Without the hop limit the chain never ends (each pass
// one more connection, X-Forwarded-For one hop longer).
func TestBackendToOwnListenerEndsIn508(t *testing.T) {
	h := selfLoop(t, true, false)
	h.client.Timeout = 15 * time.Second
	req := h.request("GET", "example.com", "/b")
	resp, err := h.client.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	var loops []Trace
	waitUntil(func() bool {
		loops = loops[:0]
		for _, tr := range h.s.Traces() {
			if strings.HasPrefix(tr.Reason, "loop detected") {
				loops = append(loops, tr)
			}
		}
		return len(h.s.Traces()) >= maxPasses+1
	})
	ts := h.s.Traces()
	if err != nil || resp.StatusCode != http.StatusLoopDetected {
		t.Fatalf("client got %v %v after %d requests through gwdev, want 508", resp, err, len(ts))
	}
	if len(ts) != maxPasses+1 || len(loops) != 1 {
		t.Fatalf("one client request made %d requests through gwdev (%d answered 508), want %d and 1", len(ts), len(loops), maxPasses+1)
	}
	lt := loops[0]
	if lt.Status != http.StatusLoopDetected || lt.Route == "" || !strings.Contains(lt.Reason, "passed through this gwdev 8 times") {
		t.Errorf("the 508 trace: %d route %q reason %q", lt.Status, lt.Route, lt.Reason)
	}
	if got := len(strings.Split(lt.RequestHeaders.Get("X-Forwarded-For"), ",")); got != maxPasses {
		t.Errorf("the last pass has %d X-Forwarded-For hops, want %d", got, maxPasses)
	}
}

// TestViaMarksForwardedRequests: the backend sees gwdev's Via entry after
// the client's own, even when a header filter removes Via; the request of
// another proxy's Via is not counted as a pass.
func TestViaMarksForwardedRequests(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		r := rule("r", prefix("/"), echo("main", 1))
		r.Filters = []table.Filter{{Type: table.FilterRequestHeaderModifier,
			RequestHeaderModifier: &table.HeaderModifier{Remove: []string{"Via"}}}}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", r)))))
	})
	res := h.get("example.com", "/v", "Via: 1.0 fred, 1.1 gwdev-000000000000")
	if res.status != 200 {
		t.Fatalf("%d %s", res.status, res.body)
	}
	if got, want := res.echo(t).Headers["Via"], []string{"1.1 " + h.s.via.name}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the backend saw Via %q, want %q (the filter removes the client's)", got, want)
	}
	h2 := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", rule("r", prefix("/"), echo("main", 1)))))))
	})
	res = h2.get("example.com", "/v", "Via: 1.0 fred, 1.1 "+h.s.via.name)
	if got := res.echo(t).Headers["Via"]; strings.Join(got, "|") != "1.0 fred, 1.1 "+h.s.via.name+"|1.1 "+h2.s.via.name {
		t.Errorf("the backend saw Via %q, want the client's then this gwdev's", got)
	}
}

// TestExplainShowsLoopDecisions: Explain of a running Server counts its
// own Via entries as the data plane does: 8 passes are answered 508, one
// pass is forwarded but not mirrored.
func TestExplainShowsLoopDecisions(t *testing.T) {
	h := selfLoop(t, false, true)
	own := "1.1 " + h.s.via.name
	req := h.request("GET", "example.com", "/e", "Via: "+strings.Repeat(own+", ", maxPasses-1)+own)
	tr := h.s.Explain(h.ip, h.port, req)
	if tr.Status != http.StatusLoopDetected || !strings.HasPrefix(tr.Reason, "loop detected") {
		t.Errorf("explain of a request that passed %d times: %d %q", maxPasses, tr.Status, tr.Reason)
	}
	tr = h.s.Explain(h.ip, h.port, h.request("GET", "example.com", "/e", "Via: "+own))
	if tr.Status != 0 || !filtersContain(*tr, "skipped (the request already passed through this gwdev 1 time(s)") {
		t.Errorf("explain of a request that passed once: %d %q", tr.Status, tr.Filters)
	}
	tr = h.s.Explain(h.ip, h.port, h.request("GET", "example.com", "/e", "Via: 1.1 gwdev-000000000000"))
	if !filtersContain(*tr, "RequestMirror: default/self-mirror:80") || filtersContain(*tr, "skipped") {
		t.Errorf("another gwdev's Via counted as this one's: %q", tr.Filters)
	}
	// The offline Explain stands for whichever gwdev serves the table.
	other := "1.1 gwdev-000000000000"
	tr = h.explain(h.request("GET", "example.com", "/e", "Via: 1.0 fred, "+strings.Repeat(other+", ", maxPasses-1)+other))
	if tr.Status != http.StatusLoopDetected || !strings.Contains(tr.Reason, "passed through this gwdev 8 times") {
		t.Errorf("offline explain of a request that passed %d times: %d %q", maxPasses, tr.Status, tr.Reason)
	}
	if tr = h.explain(h.request("GET", "example.com", "/e")); tr.Status != 0 || filtersContain(*tr, "skipped") {
		t.Errorf("offline explain of a fresh request: %d %q", tr.Status, tr.Filters)
	}
}

// TestExternalAuthToOwnListenerEndsIn508: an ExternalAuth filter whose auth
// Service is mapped to gwdev's own listener, with a path prefix that leads
// back into the protected rule, asks itself again on every pass. The auth
// requests carry gwdev's Via entry, so the ninth pass is answered 508 and
// the client gets a denial after maxPasses+1 requests, instead of a chain
// of auth requests each waiting on the next until the auth timeout.
func TestExternalAuthToOwnListenerEndsIn508(t *testing.T) {
	manifests := strings.Replace(extAuthManifests, "path: /check", "path: /admin", 1)
	h := serve(t, func(p int32) *table.Table {
		self := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(p)))
		return gwinTable(t, manifests, p, engine.Options{BackendMappings: map[string]string{"default/auth:9000": self}})
	})
	h.client.Timeout = 15 * time.Second
	resp, err := h.client.Do(h.request("GET", "app.example.com", "/admin/users"))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	resp.Body.Close()
	waitUntil(func() bool { return len(h.s.Traces()) >= maxPasses+1 })
	ts := h.s.Traces()
	loops := 0
	for _, tr := range ts {
		if strings.HasPrefix(tr.Reason, "loop detected") {
			loops++
		}
	}
	if resp.StatusCode == http.StatusOK || len(ts) != maxPasses+1 || loops != 1 {
		t.Fatalf("one client request: status %d after %d requests through gwdev (%d answered 508), want a denial after %d and 1",
			resp.StatusCode, len(ts), loops, maxPasses+1)
	}
}
