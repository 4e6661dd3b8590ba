package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine/table"
)

// h2cClient speaks HTTP/2 with prior knowledge over plain TCP.
func h2cClient(t *testing.T) *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func TestH2C(t *testing.T) {
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	}))
	backend.Config.Protocols = new(http.Protocols)
	backend.Config.Protocols.SetUnencryptedHTTP2(true) // h2c only: HTTP/1.1 is refused
	backend.Start()
	defer backend.Close()
	h := serve(t, func(p int32) *table.Table {
		b := mapped("h2", 1, backend.Listener.Addr().String())
		b.AppProtocol, b.HTTP2 = "kubernetes.io/h2c", true
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("h2c", prefix("/h2c"), b),
			rule("echo", prefix("/"), echo("echo", 1)),
		)))))
	})
	c := h2cClient(t)
	req := h.request("GET", "example.com", "/hello")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e echosrv.Response
	if err := json.Unmarshal(body, &e); err != nil || resp.ProtoMajor != 2 || e.Proto != "HTTP/2.0" || e.Host != "example.com" {
		t.Errorf("h2c to echo: %s, %v %s", resp.Proto, err, body)
	}
	// HTTP/1.1 in, h2c to the backend.
	if res := h.get("example.com", "/h2c"); string(res.body) != "HTTP/2.0" {
		t.Errorf("h2c upstream: %d %q", res.status, res.body)
	}
	// HTTP/2 in, h2c out.
	resp, err = c.Do(h.request("GET", "example.com", "/h2c"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "HTTP/2.0" {
		t.Errorf("h2 to h2c upstream: %q", body)
	}
}

// grpcCall sends an empty unary gRPC message over h2c and returns the HTTP
// status, the grpc-status (trailer or header) and the grpc-message.
func grpcCall(t *testing.T, c *http.Client, h *harness, path string, hdr ...string) (int, string, string) {
	t.Helper()
	req := h.request("POST", "grpc.example.com", path, append([]string{"Content-Type: application/grpc", "TE: trailers"}, hdr...)...)
	req.Body = io.NopCloser(bytes.NewReader([]byte{0, 0, 0, 0, 0}))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.ReadAll(resp.Body)
	st, msg := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if st == "" {
		st, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	return resp.StatusCode, st, msg
}

func TestGRPCRouting(t *testing.T) {
	// A real gRPC server (health service) as a backend.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()

	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("grpc", "", vhost("",
			grpcRule("health", &table.GRPCMatch{Type: table.MatchExact, Service: "grpc.health.v1.Health"},
				mapped("health", 1, ln.Addr().String())),
			grpcRule("foo", &table.GRPCMatch{Type: table.MatchRegularExpression, Service: `foo\..*`, Method: "Get.*"},
				echo("foo-grpc", 1)),
			grpcRule("broken", &table.GRPCMatch{Type: table.MatchExact, Service: "broken.Svc"},
				invalid("gone", 1, "backendRef Service default/gone not found")),
			grpcRule("hdr", &table.GRPCMatch{Type: table.MatchExact, Service: "hdr.Svc",
				Headers: []table.ValueMatch{{Name: "X-Tenant", Type: table.MatchExact, Value: "a"}}}, echo("hdr-a", 1)),
			rule("http", prefix("/"), echo("http-root", 1)),
		)))))
	})
	c := h2cClient(t)
	code, st, msg := grpcCall(t, c, h, "/foo.Bar/GetThing")
	if code != 200 || st != "12" || !strings.Contains(msg, "foo-grpc") {
		t.Errorf("echo gRPC: %d grpc-status %q %q", code, st, msg)
	}
	// Method does not match the regex: falls to the HTTP rule, whose echo
	// answers gRPC with UNIMPLEMENTED too.
	if _, st, msg := grpcCall(t, c, h, "/foo.Bar/Put"); st != "12" || !strings.Contains(msg, "http-root") {
		t.Errorf("non-matching method: %q %q", st, msg)
	}
	// Not gRPC (HTTP/1.1): gRPC rules do not match.
	if e := h.get("grpc.example.com", "/foo.Bar/GetThing").echo(t); e.Service != "http-root" {
		t.Errorf("HTTP/1.1 request matched %s", e.Service)
	}
	if _, _, msg := grpcCall(t, c, h, "/hdr.Svc/Do"); !strings.Contains(msg, "http-root") {
		t.Errorf("gRPC header match without the header: %q", msg)
	}
	if _, _, msg := grpcCall(t, c, h, "/hdr.Svc/Do", "X-Tenant: a"); !strings.Contains(msg, "hdr-a") {
		t.Errorf("gRPC header match: %q", msg)
	}
	if _, st, _ := grpcCall(t, c, h, "/broken.Svc/Do"); st != "14" {
		t.Errorf("invalid backend: grpc-status %q, want 14 (UNAVAILABLE)", st)
	}

	// grpc-go through the gateway to the real server.
	conn, err := grpc.NewClient(strings.TrimPrefix(h.url(""), "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hc := healthpb.NewHealthClient(conn)
	resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health check through the gateway: %v %v", resp, err)
	}
	_, err = hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "unknown"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("backend status lost on the way: %v", err)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.GRPC && tr.Path == "/grpc.health.v1.Health/Check" })
	if tr.Rule != "grpcroute/default/health/rule/0/match/0" || tr.Status != 200 {
		t.Errorf("trace %+v", tr)
	}
}

func TestWebSocket(t *testing.T) {
	backend := httptest.NewServer(websocket.Handler(func(ws *websocket.Conn) { _, _ = io.Copy(ws, ws) }))
	defer backend.Close()
	h := serve(t, func(p int32) *table.Table {
		r := rule("ws", prefix("/ws"), mapped("ws", 1, backend.Listener.Addr().String()))
		r.Timeouts = &table.Timeouts{Request: 50 * time.Millisecond} // not applied to upgrades
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", r)))))
	})
	ws, err := websocket.Dial(strings.Replace(h.url("/ws"), "http", "ws", 1), "", "http://example.com")
	if err != nil {
		t.Fatal(err)
	}
	wsEchoes(t, ws, 60*time.Millisecond) // longer than the request timeout
	ws.Close()
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == "/ws" })
	if tr.Status != http.StatusSwitchingProtocols {
		t.Errorf("trace status %d", tr.Status)
	}
}

// wsEchoes sends two messages over an echoing WebSocket, each after pause,
// and checks they come back.
func wsEchoes(t *testing.T, ws *websocket.Conn, pause time.Duration) {
	t.Helper()
	for _, msg := range []string{"hello", "again"} {
		time.Sleep(pause)
		if _, err := ws.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		n, err := ws.Read(buf)
		if err != nil || string(buf[:n]) != msg {
			t.Fatalf("echoed %q, %v", buf[:n], err)
		}
	}
}

func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", rule("r", prefix("/"), echo("echo", 1)))))))
	})
	for _, c := range []struct{ flag, proto string }{{"--http1.1", "HTTP/1.1"}, {"--http2-prior-knowledge", "HTTP/2.0"}} {
		out, err := exec.Command(curl, "-sS", "--max-time", "5", "--noproxy", "*", c.flag, "-H", "Host: curl.example.com", h.url("/curl?a=b")).Output()
		if err != nil {
			t.Fatalf("curl %s: %v", c.flag, err)
		}
		var e echosrv.Response
		if err := json.Unmarshal(out, &e); err != nil || e.Proto != c.proto || e.Host != "curl.example.com" || e.Path != "/curl?a=b" {
			t.Errorf("curl %s: %v %s", c.flag, err, out)
		}
	}
}

func TestEchoBackend(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		// An echo target naming one Pod answers as that Pod, as the echo
		// container on a Pod IP does (conformance harness).
		pod := echo("infra-backend-v1", 1)
		pod.Target.Pods = []string{"infra-backend-v1-7d4b9c6f5d-x2k4p"}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("",
			rule("pod", prefix("/pod"), pod), rule("r", prefix("/"), echo("infra-backend-v1", 1)))))))
	})

	res := h.get("echo.example.com", "/some/path?x=1", "X-Echo-Set-Header: X-Foo: bar, X-Baz:qux", "X-Custom: v")
	e := res.echo(t)
	if e.Path != "/some/path?x=1" || e.Host != "echo.example.com" || e.Method != "GET" || e.Proto != "HTTP/1.1" ||
		e.Namespace != "default" || e.Service != "infra-backend-v1" || e.Ingress != "gw" ||
		!strings.HasPrefix(e.Pod, "infra-backend-v1-") || e.Headers["X-Custom"][0] != "v" || e.HTTPPort != "80" {
		t.Errorf("echo JSON %+v", e)
	}
	if res.header.Get("Content-Type") != "application/json" || res.header.Get("X-Foo") != "bar" || res.header.Get("X-Baz") != "qux" {
		t.Errorf("echo headers %v", res.header)
	}
	if len(e.Headers["X-Forwarded-For"]) == 0 {
		t.Errorf("no X-Forwarded-For: %v", e.Headers)
	}
	if res := h.get("x", "/status/418"); res.status != 418 {
		t.Errorf("/status/418: %d", res.status)
	}
	start := time.Now()
	if res := h.get("x", "/slow?delay=50ms"); res.status != 200 || time.Since(start) < 50*time.Millisecond {
		t.Errorf("delay: %d after %s", res.status, time.Since(start))
	}
	if res := h.get("x", "/bad?delay=forever"); res.status != 500 || !strings.Contains(string(res.body), "message") {
		t.Errorf("bad delay: %d %s", res.status, res.body)
	}
	log := h.s.EchoLog("default/infra-backend-v1")
	if len(log) < 4 || !strings.HasPrefix(log[0], "Echoing back request made to /some/path?x=1 to client") {
		t.Errorf("echo log %q", log)
	}
	if e := h.get("x", "/pod").echo(t); e.Pod != "infra-backend-v1-7d4b9c6f5d-x2k4p" {
		t.Errorf("echo as a Pod: pod %q", e.Pod)
	}
}
