package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/freeport"
	"github.com/gwdev/gwdev/internal/testkit"
)

// gatewayYAML is a Gateway on 127.0.0.1 with an HTTP listener on the port
// %d and a route sending /echo to a Service without endpoints, which the
// built-in echo backend serves; nothing else is routed.
const gatewayYAML = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners: [{name: http, protocol: HTTP, port: %d}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: echo}
spec:
  parentRefs: [{name: gw}]
  rules: [{matches: [{path: {type: PathPrefix, value: /echo}}], backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {ports: [{port: 80}]}
`

// serveGateway starts a data plane with cfg serving gatewayYAML on a free
// port, and its admin API on a free loopback port; it returns the server,
// the listener's port and the admin API's address.
func serveGateway(t *testing.T, cfg emulator.Config) (srv *emulator.Server, port int, admin string) {
	t.Helper()
	return serveGatewayWith(t, cfg, nil)
}

// serveGatewayWith is serveGateway with tweak applied to the admin API
// before it serves (nil: none).
func serveGatewayWith(t *testing.T, cfg emulator.Config, tweak func(*Admin)) (srv *emulator.Server, port int, admin string) {
	t.Helper()
	port = freeport.TCP(t, "127.0.0.1")
	res := testkit.Translate(t, "gw.yaml", fmt.Appendf(nil, gatewayYAML, port), engine.Options{})
	if errs := testkit.ErrorFindings(res); len(errs) > 0 {
		t.Fatal(errs)
	}
	srv = emulator.New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := srv.Apply(res.Table).Err(); err != nil {
		t.Fatal(err)
	}
	adm := New(srv, nil)
	t.Cleanup(adm.Close)
	if tweak != nil {
		tweak(adm)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, _, err := Serve(ctx, "127.0.0.1:0", adm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return srv, port, addr.String()
}

// get answers a GET's status and body (-1 and the error when it fails),
// on a connection of its own.
func get(url string) (int, string) {
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return -1, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitMetric polls /metrics until re's first group reads want, and returns
// what it read last ("" : no such line).
func waitMetric(admin string, re *regexp.Regexp, want string) string {
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, body := get("http://" + admin + "/metrics")
		got = ""
		if m := re.FindStringSubmatch(body); m != nil {
			got = m[1]
		}
		if got == want {
			break
		}
	}
	return got
}

// TestAdminUnderListenerLimit: while a listener holds all the connections
// its limit allows, the admin API keeps answering and counts the refused
// ones in gwdev_refused_total as they happen; once the connections close,
// a request is served and counted in its series, through the data plane's
// trace subscription.
func TestAdminUnderListenerLimit(t *testing.T) {
	const limit, over = 5, 3
	_, port, admin := serveGateway(t, emulator.Config{MaxConnsPerListener: limit})
	gw := fmt.Sprintf("127.0.0.1:%d", port)
	var held []net.Conn
	for range limit {
		c, err := net.Dial("tcp", gw)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c) // idle: they hold their slots
	}
	time.Sleep(50 * time.Millisecond) // let the server accept them
	for i := range over {
		c, err := net.Dial("tcp", gw)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second)) // refused at once, unless the machine is loaded
		if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("connection %d over the limit not refused: %v", limit+i+1, err)
		}
		c.Close()
	}
	if code, body := get("http://" + admin + "/healthz"); code != 200 {
		t.Errorf("admin /healthz: %d %s", code, body)
	}
	refused := regexp.MustCompile(`(?m)^gwdev_refused_total\{gateway="gateway/default/gw",listener="gateway/default/gw/listener/http",proto="HTTP"\} (\d+)$`)
	if got := waitMetric(admin, refused, strconv.Itoa(over)); got != strconv.Itoa(over) {
		t.Errorf("gwdev_refused_total %q for %d refused connections", got, over)
	}
	for _, c := range held {
		c.Close()
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		code, _ := get("http://" + gw + "/echo")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listener does not serve again: %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
	served := regexp.MustCompile(`(?m)^gwdev_requests_total\{code="200",gateway="gateway/default/gw",listener="gateway/default/gw/listener/http",route="HTTPRoute/default/echo"\} (\d+)$`)
	if got := waitMetric(admin, served, "1"); got != "1" {
		t.Errorf("gwdev_requests_total for the served request: %q, want 1", got)
	}
}

// A thousand requests, each with a 1 MB header, and /traces answers fast
// without rendering the history whole (issue 12, finding 1: /traces took
// 9.2 GB). The data plane's side, a small history, is the emulator's
// TestHugeHeaderFloodKeepsTracesBounded.
func TestHugeHeaderFloodTracesServedFast(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("sends 300 MB over loopback and measures time and memory (not with -short or -race)")
	}
	srv, port, admin := serveGateway(t, emulator.Config{})
	// Only /echo is routed: the flood gets 404s, traced with their headers.
	n := testkit.HugeHeaderFlood(t, fmt.Sprintf("127.0.0.1:%d", port), http.StatusNotFound)
	last := fmt.Sprintf("/flood/%d", n-1)
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		ts := srv.Traces()
		if len(ts) > 0 && ts[len(ts)-1].Path == last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no trace of %s", last)
		}
	}
	runtime.GC()
	start := time.Now()
	resp, err := http.Get("http://" + admin + "/traces")
	if err != nil {
		t.Fatal(err)
	}
	var ts []emulator.Trace
	err = json.NewDecoder(resp.Body).Decode(&ts)
	resp.Body.Close()
	took := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("/traces: %d traces in %s; heap in use %d MB", len(ts), took, ms.HeapInuse>>20)
	if err != nil || len(ts) != n {
		t.Fatalf("/traces: %d traces, %v", len(ts), err)
	}
	if took > time.Second {
		t.Errorf("/traces took %s, want under a second", took)
	}
	if x := ts[n-1].RequestHeaders.Get("X-Big"); len(x) > emulator.TraceValueLimit+64 || !emulator.IsTruncated(x) {
		t.Errorf("X-Big kept as %d bytes", len(x))
	}
}
