package emulator

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine/table"
)

// echoClient is a grpc-go client of the conformance echo service through
// the harness's listener (h2c with prior knowledge), with :authority set.
func echoClient(t *testing.T, h *harness, authority string) pb.GrpcEchoClient {
	t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(h.url(""), "http://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(authority))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewGrpcEchoClient(conn)
}

func callCtx(t *testing.T, kv ...string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	if len(kv) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, kv...)
	}
	return ctx
}

// echoHeaders flattens the echoed metadata.
func echoHeaders(r *pb.EchoResponse) map[string][]string {
	out := map[string][]string{}
	for _, h := range r.GetAssertions().GetHeaders() {
		out[h.GetKey()] = append(out[h.GetKey()], h.GetValue())
	}
	return out
}

const echoSvc = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho"

func grpcMethod(service, method string) *table.GRPCMatch {
	return &table.GRPCMatch{Type: table.MatchExact, Service: service, Method: method}
}

func TestGRPCEchoService(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("grpc", "", vhost("",
			grpcRule("echo", grpcMethod(echoSvc, ""), echo("grpc-infra-backend-v1", 1)))))))
	})
	c := echoClient(t, h, "grpc.example.com")
	var hdr, trl metadata.MD
	resp, err := c.Echo(callCtx(t, "x-custom", "v1", "x-custom", "v2", echosrv.MetaService, "spoofed"),
		&pb.EchoRequest{}, grpc.Header(&hdr), grpc.Trailer(&trl))
	if err != nil {
		t.Fatal(err)
	}
	a := resp.GetAssertions()
	if a.GetFullyQualifiedMethod() != "/"+echoSvc+"/Echo" || a.GetAuthority() != "grpc.example.com" {
		t.Errorf("assertions %v", a)
	}
	ctx := a.GetContext()
	if ctx.GetNamespace() != "default" || ctx.GetServiceName() != "grpc-infra-backend-v1" || ctx.GetIngress() != "gw" ||
		!strings.HasPrefix(ctx.GetPod(), "grpc-infra-backend-v1-") {
		t.Errorf("context %v", ctx)
	}
	got := echoHeaders(resp)
	if v := got["x-custom"]; len(v) != 2 || v[0] != "v1" || v[1] != "v2" {
		t.Errorf("x-custom echoed as %q", v)
	}
	if v := got[":authority"]; len(v) != 1 || v[0] != "grpc.example.com" {
		t.Errorf(":authority echoed as %q", v)
	}
	if len(got["x-forwarded-for"]) == 0 || !strings.HasPrefix(got["content-type"][0], "application/grpc") {
		t.Errorf("headers %v", got)
	}
	for k := range got {
		if strings.HasPrefix(k, echosrv.MetaPrefix) {
			t.Errorf("internal metadata %s echoed", k)
		}
	}

	resp, err = c.EchoTwo(callCtx(t), &pb.EchoRequest{})
	if err != nil || resp.GetAssertions().GetFullyQualifiedMethod() != "/"+echoSvc+"/EchoTwo" {
		t.Errorf("EchoTwo: %v %v", resp, err)
	}
	// EchoThree is unimplemented by the echo server, as in conformance.
	if _, err := c.EchoThree(callCtx(t), &pb.EchoRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("EchoThree: %v", err)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.GRPCMethod == "EchoThree" })
	if tr.GRPCService != echoSvc || tr.GRPCStatus != "Unimplemented" || tr.Rule != "grpcroute/default/echo/rule/0/match/0" || tr.Upstream != "echo" {
		t.Errorf("EchoThree trace %+v", tr)
	}
	tr = waitTrace(t, h.s, func(tr Trace) bool { return tr.GRPCMethod == "EchoTwo" })
	if tr.GRPCStatus != "OK" || tr.Status != 200 {
		t.Errorf("EchoTwo trace %+v", tr)
	}
	log := h.s.EchoLog("default/grpc-infra-backend-v1")
	if len(log) != 3 || !strings.Contains(log[0], "/"+echoSvc+"/Echo") {
		t.Errorf("echo log %q", log)
	}
}

func TestGRPCStatusesFromTheGateway(t *testing.T) {
	down := refusedPort(t)
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("grpc", "", vhost("",
			grpcRule("only-echotwo", grpcMethod(echoSvc, "EchoTwo"), echo("echo", 1)),
			grpcRule("broken", grpcMethod("broken.Svc", ""), invalid("gone", 1, "backendRef Service default/gone not found")),
			grpcRule("down", grpcMethod("down.Svc", ""), mapped("down", 1, "127.0.0.1:"+strconv.Itoa(int(down)))),
			grpcRule("empty", grpcMethod("empty.Svc", ""), &table.Backend{Service: service("empty"), Port: 80, Weight: 1,
				Target: &table.Target{Kind: table.TargetEndpointSlice, Why: "no ready endpoints"}}),
		)))))
	})
	c := echoClient(t, h, "grpc.example.com")
	if _, err := c.EchoTwo(callCtx(t), &pb.EchoRequest{}); err != nil {
		t.Fatalf("EchoTwo: %v", err)
	}
	// No rule matches Echo: the gateway answers UNIMPLEMENTED.
	_, err := c.Echo(callCtx(t), &pb.EchoRequest{})
	if status.Code(err) != codes.Unimplemented || !strings.Contains(status.Convert(err).Message(), "no rule") {
		t.Errorf("no match: %v", err)
	}
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.GRPCMethod == "Echo" })
	if tr.GRPCStatus != "Unimplemented" || tr.Rule != "" || !strings.Contains(tr.Reason, "grpc-status 12") {
		t.Errorf("no-match trace %+v", tr)
	}
	conn := echoConn(t, h)
	for _, c := range []struct {
		method string
		code   codes.Code
		reason string
	}{
		{"/broken.Svc/Do", codes.Unavailable, "invalid"},
		{"/down.Svc/Do", codes.Unavailable, "connection refused"},
		{"/empty.Svc/Do", codes.Unavailable, "no endpoints"},
	} {
		err := conn.Invoke(callCtx(t), c.method, &pb.EchoRequest{}, &pb.EchoResponse{})
		if status.Code(err) != c.code {
			t.Errorf("%s: %v, want %s", c.method, err, c.code)
		}
		tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == c.method })
		if tr.GRPCStatus != c.code.String() || !strings.Contains(tr.Reason, c.reason) {
			t.Errorf("%s trace: status %q reason %q", c.method, tr.GRPCStatus, tr.Reason)
		}
	}
}

func echoConn(t *testing.T, h *harness) *grpc.ClientConn {
	conn, err := grpc.NewClient(strings.TrimPrefix(h.url(""), "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestGRPCRouteFiltersAndWeights: GRPCRoute filters arrive in the table as
// their HTTPRoute equivalents; request metadata is added and removed,
// response metadata set; weights split calls between two echo Services.
func TestGRPCRouteFiltersAndWeights(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		r := grpcRule("split", grpcMethod(echoSvc, ""), echo("echo-a", 3), echo("echo-b", 1))
		r.Filters = []table.Filter{
			headerFilter(table.FilterRequestHeaderModifier, nil, map[string]string{"x-added": "yes"}, "x-secret"),
			headerFilter(table.FilterResponseHeaderModifier, map[string]string{"x-route": "split"}, nil),
		}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("grpc", "", vhost("", r)))))
	})
	c := echoClient(t, h, "grpc.example.com")
	counts := map[string]int{}
	const calls = 200
	for i := 0; i < calls; i++ {
		var hdr metadata.MD
		resp, err := c.Echo(callCtx(t, "x-secret", "s3cr3t"), &pb.EchoRequest{}, grpc.Header(&hdr))
		if err != nil {
			t.Fatal(err)
		}
		counts[resp.GetAssertions().GetContext().GetServiceName()]++
		if i == 0 {
			got := echoHeaders(resp)
			if len(got["x-added"]) != 1 || len(got["x-secret"]) != 0 {
				t.Errorf("request metadata after filter: %v", got)
			}
			if v := hdr.Get("x-route"); len(v) != 1 || v[0] != "split" {
				t.Errorf("response metadata %v", hdr)
			}
		}
	}
	// 3:1 → 150 of 200 expected; ±40 is more than 6 standard deviations.
	if a := counts["echo-a"]; a < 110 || a > 190 || a+counts["echo-b"] != calls {
		t.Errorf("weights 3:1 split %d calls as %v", calls, counts)
	}
}

// TestGRPCGarbageAndSilentClients: garbage and silent clients on an h2c
// port are refused cleanly and traced, and the port keeps serving.
func TestGRPCGarbageAndSilentClients(t *testing.T) {
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("grpc", "", vhost("",
			grpcRule("echo", grpcMethod(echoSvc, ""), echo("echo", 1)))))))
	})
	addr := strings.TrimPrefix(h.url(""), "http://")
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		return c
	}
	// readUntil reads until done says the bytes so far are enough, the
	// connection closes or its deadline passes.
	readUntil := func(c net.Conn, done func(string) bool) string {
		var b strings.Builder
		buf := make([]byte, 512)
		for {
			n, err := c.Read(buf)
			b.Write(buf[:n])
			if err != nil || done(b.String()) {
				return b.String()
			}
		}
	}
	readAll := func(c net.Conn) string { return readUntil(c, func(string) bool { return false }) }
	// A silent client stays connected while everything else goes on.
	silent := dial()

	// Garbage: not HTTP/1, not the HTTP/2 preface.
	g := dial()
	_, _ = g.Write([]byte("\x00\x01\x02garbage\xff\r\n\r\n"))
	if got := readAll(g); !strings.HasPrefix(got, "HTTP/1.1 400") {
		t.Errorf("garbage answered %q", got)
	}
	g.Close()
	tr := waitTrace(t, h.s, func(tr Trace) bool { return strings.Contains(tr.Reason, "garbage") })
	if tr.Status != 400 || tr.BytesIn == 0 || tr.Gateway != "gateway/default/gw" {
		t.Errorf("garbage trace %+v", tr)
	}

	// The HTTP/2 preface, then a frame that is no frame: GOAWAY and close.
	g = dial()
	_, _ = g.Write([]byte(http2Preface + "\x00\x00\x04\xff\x00\x00\x00\x00\x00nope"))
	// The server waits a second after its GOAWAY before it closes: read
	// until the GOAWAY.
	if got := readUntil(g, hasGoAway); !hasGoAway(got) {
		t.Errorf("h2 garbage answered %q, no GOAWAY", got)
	}
	g.Close()
	tr = waitTrace(t, h.s, func(tr Trace) bool { return tr.Proto == "HTTP/2.0" && tr.Rule == "" && tr.Path == "" })
	if !strings.Contains(tr.Reason, "h2c") {
		t.Errorf("h2 garbage trace %+v", tr)
	}

	// A TLS client on the plain port: it waits for a ServerHello that never
	// comes, and gives up.
	g = dial()
	_, _ = g.Write([]byte{0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00})
	time.Sleep(20 * time.Millisecond)
	g.Close()
	waitTrace(t, h.s, func(tr Trace) bool { return strings.Contains(tr.Reason, "TLS handshake on a plain HTTP port") })

	// The port still serves gRPC.
	if _, err := echoClient(t, h, "grpc.example.com").Echo(callCtx(t), &pb.EchoRequest{}); err != nil {
		t.Errorf("after garbage: %v", err)
	}
	silent.Close()
	tr = waitTrace(t, h.s, func(tr Trace) bool { return strings.Contains(tr.Reason, "without sending anything") })
	if tr.BytesIn != 0 || tr.Client == "" {
		t.Errorf("silent client trace %+v", tr)
	}
}

// hasGoAway reports whether HTTP/2 frames include a GOAWAY.
func hasGoAway(frames string) bool {
	for len(frames) >= 9 {
		n := int(frames[0])<<16 | int(frames[1])<<8 | int(frames[2])
		if frames[3] == 0x7 {
			return true
		}
		if len(frames) < 9+n {
			return false
		}
		frames = frames[9+n:]
	}
	return false
}
