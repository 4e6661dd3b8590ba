package emulator

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// otlpReceiver is the OpenTelemetry protocol's own collector service, OTLP
// TraceService over gRPC, on a free loopback port: it keeps every span it
// is sent, with its resource's service.name and the request's metadata.
type otlpReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string
	// stall, when set, holds every export until it is closed; stalled
	// counts the exports held.
	stall   chan struct{}
	stalled atomic.Int32

	mu       sync.Mutex
	spans    []receivedSpan
	metadata []metadata.MD
}

// receivedSpan is one span as the receiver got it.
type receivedSpan struct {
	service string
	span    *tracev1.Span
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &otlpReceiver{addr: ln.Addr().String()}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

// Export implements the OTLP TraceService.
func (r *otlpReceiver) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	if r.stall != nil {
		r.stalled.Add(1)
		<-r.stall
	}
	md, _ := metadata.FromIncomingContext(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.metadata = append(r.metadata, md)
	for _, rs := range req.GetResourceSpans() {
		svc := attrString(rs.GetResource().GetAttributes(), "service.name")
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, receivedSpan{service: svc, span: s})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// waitSpan waits up to 10 seconds for the span of trace id traceID.
func (r *otlpReceiver) waitSpan(t *testing.T, traceID string) receivedSpan {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s, ok := r.find(traceID); ok {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no span of trace %s reached the receiver (it has %d spans)", traceID, r.count())
	return receivedSpan{}
}

func (r *otlpReceiver) find(traceID string) (receivedSpan, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.spans {
		if hex.EncodeToString(s.span.GetTraceId()) == traceID {
			return s, true
		}
	}
	return receivedSpan{}, false
}

func (r *otlpReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans)
}

func attrString(kvs []*commonv1.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			v := kv.GetValue()
			if _, ok := v.GetValue().(*commonv1.AnyValue_IntValue); ok {
				return fmt.Sprint(v.GetIntValue())
			}
			return v.GetStringValue()
		}
	}
	return ""
}

// traceparentBackend answers 200 and keeps the traceparent of every
// request, by path.
type traceparentBackend struct {
	addr string
	mu   sync.Mutex
	seen map[string]string
}

func startTraceparentBackend(t *testing.T) *traceparentBackend {
	b := &traceparentBackend{seen: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.seen[r.URL.Path] = r.Header.Get("Traceparent")
		b.mu.Unlock()
		w.Header().Set("X-Served-By", "app")
	}))
	t.Cleanup(srv.Close)
	b.addr = strings.TrimPrefix(srv.URL, "http://")
	return b
}

// traceparent returns the (version, trace id, span id, flags) the backend
// saw for path.
func (b *traceparentBackend) traceparent(t *testing.T, path string) (traceID, spanID, flags string) {
	t.Helper()
	b.mu.Lock()
	tp := b.seen[path]
	b.mu.Unlock()
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || parts[0] != "00" || len(parts[1]) != 32 || len(parts[2]) != 16 {
		t.Fatalf("backend saw traceparent %q for %s, want a W3C traceparent", tp, path)
	}
	return parts[1], parts[2], parts[3]
}

// telemetryApp is Gateway gw with a route to Service app.
const telemetryApp = gatewayGW + `apiVersion: gateway.networking.k8s.io/v1
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

// telemetryTable is telemetryApp (Service app is the backend) and an
// XTelemetryPolicy whose tracing block is tracing (indented two spaces
// below "tracing:"); Service collector is the receiver.
func telemetryTable(t *testing.T, port int32, backend, receiver, tracing string) *table.Table {
	return gwinTable(t, telemetryApp+`---
apiVersion: v1
kind: Service
metadata: {name: collector}
spec:
  ports: [{port: 4317}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XTelemetryPolicy
metadata: {name: tracing}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  tracing:
    mode: Enabled
    provider:
      backendRef: {name: collector, port: 4317}
      headers: [{name: X-Scope, value: team-a}]
`+tracing, port, engine.Options{BackendMappings: map[string]string{"default/app:80": backend, "default/collector:4317": receiver}})
}

// TestTelemetrySpansOverOTLP: a request through Gateway gw, whose
// XTelemetryPolicy enables tracing to Service collector (mapped to a real
// OTLP gRPC receiver), makes one server span named by spanName, with the
// policy's service.name, its attributes from a header, a literal and a
// standard attribute, the standard HTTP attributes, and the export
// header; the backend gets a traceparent carrying the span's trace and
// span ids. A request with a sampled traceparent continues its trace: the
// span's parent is the client's span.
func TestTelemetrySpansOverOTLP(t *testing.T) {
	rcv := startOTLPReceiver(t)
	be := startTraceparentBackend(t)
	h := serve(t, func(p int32) *table.Table {
		return telemetryTable(t, p, be.addr, rcv.addr, `    serviceName: shop-gateway
    spanName: ingress request
    attributes:
    - {name: user.id, sourceType: Header, headerName: X-User-Id}
    - {name: served.by, sourceType: Header, headerName: X-Served-By}
    - {name: env, sourceType: Literal, literalValue: dev}
    - {name: method, sourceType: Attribute, attributeKey: http.request.method}
    - {name: secret, sourceType: Header, headerName: Authorization}
`)
	})
	res, tr := h.traced(h.request("GET", "shop.example.com", "/new", "X-User-Id: u-42", "Authorization: Bearer hunter2"))
	if res.status != http.StatusOK {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	traceID, spanID, flags := be.traceparent(t, "/new")
	if flags != "01" {
		t.Errorf("traceparent flags %s, want 01 (sampled)", flags)
	}
	if !strings.HasPrefix(tr.Span, traceID+"/"+spanID+" sampled") {
		t.Errorf("trace says span %q, want %s/%s sampled", tr.Span, traceID, spanID)
	}
	got := rcv.waitSpan(t, traceID)
	s := got.span
	if hex.EncodeToString(s.GetSpanId()) != spanID {
		t.Errorf("span id %x, the backend's traceparent says %s", s.GetSpanId(), spanID)
	}
	if got.service != "shop-gateway" {
		t.Errorf("service.name %q, want shop-gateway", got.service)
	}
	if s.GetName() != "ingress request" || s.GetKind() != tracev1.Span_SPAN_KIND_SERVER {
		t.Errorf("span %q kind %v, want \"ingress request\" server", s.GetName(), s.GetKind())
	}
	if len(s.GetParentSpanId()) != 0 {
		t.Errorf("a request without traceparent made a span with parent %x", s.GetParentSpanId())
	}
	for k, want := range map[string]string{
		"user.id": "u-42", "served.by": "app", "env": "dev", "method": "GET", "secret": Redacted,
		"http.request.method": "GET", "http.response.status_code": "200", "url.path": "/new",
		"server.address": "shop.example.com", "gwdev.gateway": "gateway/default/gw",
	} {
		if v := attrString(s.GetAttributes(), k); v != want {
			t.Errorf("attribute %s = %q, want %q", k, v, want)
		}
	}
	rcv.mu.Lock()
	md := rcv.metadata[0]
	rcv.mu.Unlock()
	if v := md.Get("x-scope"); len(v) != 1 || v[0] != "team-a" {
		t.Errorf("export request header X-Scope = %v, want team-a", v)
	}

	// A sampled parent from the client: its trace continues.
	const parentTrace, parentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	h.get("shop.example.com", "/child", "Traceparent: 00-"+parentTrace+"-"+parentSpan+"-01")
	childTrace, childSpan, _ := be.traceparent(t, "/child")
	if childTrace != parentTrace || childSpan == parentSpan {
		t.Errorf("backend saw trace %s span %s, want trace %s with gwdev's span", childTrace, childSpan, parentTrace)
	}
	child := rcv.waitSpan(t, parentTrace).span
	if hex.EncodeToString(child.GetParentSpanId()) != parentSpan {
		t.Errorf("span's parent %x, want the client's %s", child.GetParentSpanId(), parentSpan)
	}
	for _, st := range h.s.TelemetryStats() {
		if st.Dropped != 0 || st.Failed != 0 {
			t.Errorf("stats %+v: spans dropped or failed", st)
		}
	}
}

// TestTelemetrySampling: samplingRate 0/100 samples no new trace: the
// backend still gets a traceparent (flags 00) and nothing is exported; a
// second Gateway-wide request with a sampled parent is sampled, as
// parent-based sampling is gwdev's default. The receiver gets only that
// span, although it was sent last (spans are exported in order).
func TestTelemetrySampling(t *testing.T) {
	rcv := startOTLPReceiver(t)
	be := startTraceparentBackend(t)
	h := serve(t, func(p int32) *table.Table {
		return telemetryTable(t, p, be.addr, rcv.addr, `    samplingRate: {numerator: 0, denominator: 100}
`)
	})
	for i := range 5 {
		h.get("shop.example.com", fmt.Sprintf("/new/%d", i))
	}
	traceID, _, flags := be.traceparent(t, "/new/0")
	if flags != "00" {
		t.Errorf("traceparent flags %s, want 00 (not sampled)", flags)
	}
	const parentTrace = "0af7651916cd43dd8448eb211c80319c"
	h.get("shop.example.com", "/parent", "Traceparent: 00-"+parentTrace+"-b7ad6b7169203331-01")
	rcv.waitSpan(t, parentTrace)
	if n := rcv.count(); n != 1 {
		t.Errorf("receiver has %d spans, want only the sampled parent's", n)
	}
	if _, ok := rcv.find(traceID); ok {
		t.Errorf("trace %s was sampled at 0/100", traceID)
	}
}

// TestTelemetryParentBasedSampling: parentBasedSampling Enabled follows
// the parent's decision (an unsampled parent's span is not exported), and
// Disabled ignores it: with samplingRate 0/100 a sampled parent's span is
// not exported either, but its trace id still goes to the backend.
func TestTelemetryParentBasedSampling(t *testing.T) {
	for _, tc := range []struct {
		mode               string
		sampledParentSpans int
	}{{"Enabled", 1}, {"Disabled", 0}} {
		t.Run(tc.mode, func(t *testing.T) {
			rcv := startOTLPReceiver(t)
			be := startTraceparentBackend(t)
			h := serve(t, func(p int32) *table.Table {
				return telemetryTable(t, p, be.addr, rcv.addr, `    samplingRate: {numerator: 0, denominator: 100}
    parentBasedSampling: {mode: `+tc.mode+`}
`)
			})
			const unsampled, sampled = "11111111111111111111111111111111", "22222222222222222222222222222222"
			h.get("shop.example.com", "/unsampled", "Traceparent: 00-"+unsampled+"-1111111111111111-00")
			h.get("shop.example.com", "/sampled", "Traceparent: 00-"+sampled+"-2222222222222222-01")
			if tid, _, _ := be.traceparent(t, "/sampled"); tid != sampled {
				t.Errorf("backend saw trace %s, want the parent's %s", tid, sampled)
			}
			// Export what is queued, then look.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for _, gt := range h.s.telemetry.live {
				if err := gt.queue.ForceFlush(ctx); err != nil {
					t.Fatal(err)
				}
			}
			_, gotSampled := rcv.find(sampled)
			_, gotUnsampled := rcv.find(unsampled)
			if gotUnsampled {
				t.Error("the unsampled parent's span was exported")
			}
			if gotSampled != (tc.sampledParentSpans == 1) {
				t.Errorf("sampled parent's span exported: %v, want %v", gotSampled, tc.sampledParentSpans == 1)
			}
		})
	}
}

// TestTelemetryOTLPHTTP: a receiver Service port with appProtocol http
// gets spans over OTLP/HTTP: protobuf POSTs to /v1/traces, with the
// export headers.
func TestTelemetryOTLPHTTP(t *testing.T) {
	var mu sync.Mutex
	var got []*collectortrace.ExportTraceServiceRequest
	var scope string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := &collectortrace.ExportTraceServiceRequest{}
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
			http.Error(w, "not an OTLP/HTTP trace export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got, scope = append(got, req), r.Header.Get("X-Scope")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	t.Cleanup(rcv.Close)
	be := startTraceparentBackend(t)
	h := serve(t, func(p int32) *table.Table {
		tab := telemetryTable(t, p, be.addr, strings.TrimPrefix(rcv.URL, "http://"), "")
		if pr := tab.Gateways[0].Tracing.Exporter.Protocol; pr != table.OTLPGRPC {
			t.Fatalf("a port without appProtocol exports over %s", pr)
		}
		tab.Gateways[0].Tracing.Exporter.Protocol = table.OTLPHTTP // what appProtocol http compiles to (golden telemetry-provider-refs)
		return tab
	})
	h.get("shop.example.com", "/http")
	traceID, _, _ := be.traceparent(t, "/http")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		for _, req := range got {
			for _, rs := range req.GetResourceSpans() {
				for _, ss := range rs.GetScopeSpans() {
					for _, s := range ss.GetSpans() {
						if hex.EncodeToString(s.GetTraceId()) == traceID {
							mu.Unlock()
							if scope != "team-a" {
								t.Errorf("export header X-Scope %q, want team-a", scope)
							}
							return
						}
					}
				}
			}
		}
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no span of trace %s arrived over OTLP/HTTP", traceID)
}

// TestTelemetryDropsWhenReceiverStalls: a receiver that takes no export
// never slows the requests; spans past the queue are dropped and counted,
// and the request's trace says so. Once the receiver answers, the queued
// spans are exported.
func TestTelemetryDropsWhenReceiverStalls(t *testing.T) {
	rcv := startOTLPReceiver(t)
	release := make(chan struct{})
	rcv.stall = release
	be := startTraceparentBackend(t)
	h := serve(t, func(p int32) *table.Table {
		return telemetryTable(t, p, be.addr, rcv.addr, "")
	})
	cfg := h.tab.Gateways[0].Tracing
	gt := newGatewayTracerQueue(cfg, 4)
	next := map[string]*gatewayTracer{"gateway/default/gw": gt}
	h.s.telemetry.byGateway.Store(&next) // a queue of 4 instead of spanQueueSize
	t.Cleanup(func() { gt.shutdown(5 * time.Second) })
	// The first span's export reaches the receiver and hangs there.
	h.get("shop.example.com", "/first")
	for deadline := time.Now().Add(10 * time.Second); rcv.stalled.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first span's export never reached the receiver")
		}
	}
	start := time.Now()
	var last Trace
	for i := range 39 {
		_, last = h.traced(h.request("GET", "shop.example.com", fmt.Sprintf("/r/%d", i)))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("39 requests took %s with a stalled receiver", d)
	}
	q := gt.queue
	if q.dropped.Load() == 0 || !strings.HasSuffix(last.Span, "dropped: the export queue is full") {
		t.Errorf("dropped %d, last trace's span %q: want drops counted and said", q.dropped.Load(), last.Span)
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	// One span in the stalled export, four queued, the other 35 dropped.
	if q.exported.Load() != 5 || q.dropped.Load() != 35 || q.failed.Load() != 0 {
		t.Errorf("exported %d, dropped %d, failed %d: want 5, 35, 0", q.exported.Load(), q.dropped.Load(), q.failed.Load())
	}
	if n := int64(rcv.count()); n != q.exported.Load() {
		t.Errorf("receiver has %d spans, the queue counts %d exported", n, q.exported.Load())
	}
	// What the admin API's gwdev_spans_total reads (emulator/admin).
	st := h.s.TelemetryStats()
	if len(st) != 1 || st[0].Gateway != "gateway/default/gw" || st[0].Policy != "default/tracing" || st[0].Exported != 5 || st[0].Dropped != 35 {
		t.Errorf("TelemetryStats %+v, want gateway/default/gw's default/tracing with 5 exported, 35 dropped", st)
	}
}

// TestTelemetryGRPCRequest: a gRPC call through a traced Gateway (h2c)
// gets a span too, its traceparent reaches the backend (the conformance
// gRPC echo echoes it), and a call the backend answers with an error
// status makes a span with status Error.
func TestTelemetryGRPCRequest(t *testing.T) {
	rcv := startOTLPReceiver(t)
	h := serve(t, func(p int32) *table.Table {
		tab := newTable(gateway("gw", "127.0.0.1", port(p, listener("grpc", "", vhost("",
			grpcRule("echo", grpcMethod(echoSvc, ""), echo("grpc-infra-backend-v1", 1)))))))
		all := table.Fraction{Numerator: 1, Denominator: 1}
		tab.Gateways[0].Tracing = &table.Tracing{Policy: "default/tracing", ServiceName: "grpc-gw", Sampling: all,
			ParentBased: true, ParentSampling: all, Exporter: table.TracingExporter{Protocol: table.OTLPGRPC, Port: 4317,
				Target: &table.Target{Kind: table.TargetMapped, Addresses: []string{rcv.addr}}}}
		return tab
	})
	c := echoClient(t, h, "grpc.example.com")
	resp, err := c.Echo(callCtx(t), &pb.EchoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tps := echoHeaders(resp)["traceparent"]
	if len(tps) != 1 || len(strings.Split(tps[0], "-")) != 4 {
		t.Fatalf("the gRPC backend saw traceparent %q", tps)
	}
	traceID := strings.Split(tps[0], "-")[1]
	s := rcv.waitSpan(t, traceID).span
	if s.GetName() != "POST" || attrString(s.GetAttributes(), "url.path") != "/"+echoSvc+"/Echo" ||
		s.GetStatus().GetCode() == tracev1.Status_STATUS_CODE_ERROR {
		t.Errorf("span %q path %q status %v", s.GetName(), attrString(s.GetAttributes(), "url.path"), s.GetStatus())
	}
	var hdr metadata.MD
	if _, err := c.EchoThree(callCtx(t), &pb.EchoRequest{}, grpc.Header(&hdr)); err == nil {
		t.Fatal("EchoThree succeeded; the echo does not implement it")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rcv.mu.Lock()
		var bad *tracev1.Span
		for _, rs := range rcv.spans {
			if strings.HasSuffix(attrString(rs.span.GetAttributes(), "url.path"), "/EchoThree") {
				bad = rs.span
			}
		}
		rcv.mu.Unlock()
		if bad != nil {
			if bad.GetStatus().GetCode() != tracev1.Status_STATUS_CODE_ERROR || !strings.Contains(bad.GetStatus().GetMessage(), "Unimplemented") {
				t.Errorf("EchoThree's span status %v, want Error naming grpc-status Unimplemented", bad.GetStatus())
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no span for EchoThree")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTelemetryReload: applying a table whose tracing did not change keeps
// the Gateway's tracer (no new exporter per reload); a changed one gets a
// new tracer, whose spans carry the new service.name, and the old one is
// shut down.
func TestTelemetryReload(t *testing.T) {
	rcv := startOTLPReceiver(t)
	be := startTraceparentBackend(t)
	h := serve(t, func(p int32) *table.Table {
		return telemetryTable(t, p, be.addr, rcv.addr, "    serviceName: first\n")
	})
	first := h.s.telemetry.tracer("gateway/default/gw")
	h.apply(telemetryTable(t, h.port, be.addr, rcv.addr, "    serviceName: first\n"))
	if h.s.telemetry.tracer("gateway/default/gw") != first {
		t.Error("an unchanged policy got a new tracer on reload")
	}
	h.apply(telemetryTable(t, h.port, be.addr, rcv.addr, "    serviceName: second\n"))
	if h.s.telemetry.tracer("gateway/default/gw") == first {
		t.Fatal("a changed policy kept its old tracer")
	}
	h.get("shop.example.com", "/after")
	traceID, _, _ := be.traceparent(t, "/after")
	if got := rcv.waitSpan(t, traceID).service; got != "second" {
		t.Errorf("span after the reload has service.name %q, want second", got)
	}
	h.s.telemetry.closing.Wait()
	if err := first.queue.ForceFlush(context.Background()); err != nil || !isClosed(first.queue.stopped) {
		t.Errorf("the replaced tracer's queue still runs (flush: %v)", err)
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestTelemetryOffIsFree: a Gateway without a policy makes no span and
// leaves the client's traceparent alone.
func TestTelemetryOffIsFree(t *testing.T) {
	be := startTraceparentBackend(t)
	h := serve(t, func(p int32) *table.Table {
		return gwinTable(t, telemetryApp, p, engine.Options{BackendMappings: map[string]string{"default/app:80": be.addr}})
	})
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	_, tr := h.traced(h.request("GET", "x", "/p", "Traceparent: "+tp))
	if tid, sid, _ := be.traceparent(t, "/p"); tid+sid != "4bf92f3577b34da6a3ce929d0e0e473600f067aa0ba902b7" {
		t.Errorf("backend saw %s/%s, want the client's traceparent unchanged", tid, sid)
	}
	if tr.Span != "" || h.s.telemetry.tracer("gateway/default/gw") != nil {
		t.Errorf("a Gateway without XTelemetryPolicy has span %q", tr.Span)
	}
}

// BenchmarkProxyHTTP1Traced is BenchmarkProxyHTTP1 through a Gateway with
// tracing: every request sampled, its span exported to a real OTLP gRPC
// receiver in process (whose work counts too).
func BenchmarkProxyHTTP1Traced(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, &otlpReceiver{})
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(srv.Stop) // after the gateway's Close, which exports the last spans
	benchProxy(b, false, func(tab *table.Table) {
		tab.Gateways[0].Tracing = &table.Tracing{Policy: "default/bench", ServiceName: "bench",
			Sampling: table.Fraction{Numerator: 1, Denominator: 1}, ParentBased: true, ParentSampling: table.Fraction{Numerator: 1, Denominator: 1},
			Exporter: table.TracingExporter{Protocol: table.OTLPGRPC, Port: 4317,
				Target: &table.Target{Kind: table.TargetMapped, Addresses: []string{ln.Addr().String()}}}}
	})
}
