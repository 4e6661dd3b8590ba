package emulator

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/gwdev/gwdev/engine/table"
)

// This file is the data plane of XTelemetryPolicy tracing (table.Tracing):
// one OpenTelemetry server span per HTTP request through a Gateway whose
// table entry has Tracing, made with the OpenTelemetry Go SDK, exported over
// OTLP (gRPC or HTTP) by a bounded queue that never blocks a request, and
// the span's W3C traceparent sent to the backend. A Gateway without Tracing
// costs one nil check per request: no SDK code runs.

// Telemetry export limits.
const (
	// spanQueueSize bounds the spans waiting for export per Gateway; a
	// span that finds the queue full is dropped and counted.
	spanQueueSize = 2048
	// spanBatchSize is the most spans one export request carries.
	spanBatchSize = 512
	// spanBatchDelay is the longest a span waits before its batch is sent.
	spanBatchDelay = 500 * time.Millisecond
	// spanExportTimeout bounds one export request, retries included.
	spanExportTimeout = 10 * time.Second
)

// traceContext is the W3C Trace Context propagator (traceparent,
// tracestate).
var traceContext = propagation.TraceContext{}

// TelemetryStats counts one Gateway's spans since its tracing was
// configured.
type TelemetryStats struct {
	// Gateway is the table's Gateway name; Policy the XTelemetryPolicy.
	Gateway string `json:"gateway"`
	Policy  string `json:"policy"`
	// Endpoint is the receiver's address and protocol ("" : none).
	Endpoint string `json:"endpoint,omitempty"`
	// Exported spans reached the receiver; Failed were refused or never
	// arrived; Dropped found the queue full; Unexported were sampled with
	// nowhere to export to.
	Exported   int64 `json:"exported"`
	Failed     int64 `json:"failed"`
	Dropped    int64 `json:"dropped"`
	Unexported int64 `json:"unexported"`
	// LastError is the last export error ("" : none).
	LastError string `json:"lastError,omitempty"`
}

// telemetryHub holds the tracers of the current table, by Gateway name, and
// shuts down those a new table no longer uses.
type telemetryHub struct {
	mu sync.Mutex
	// live are the tracers in use, by configuration (tracingKey).
	live      map[string]*gatewayTracer
	byGateway atomic.Pointer[map[string]*gatewayTracer]
	closing   sync.WaitGroup
}

// tracer returns the tracer of a Gateway (nil: none).
func (h *telemetryHub) tracer(gateway string) *gatewayTracer {
	m := h.byGateway.Load()
	if m == nil {
		return nil
	}
	return (*m)[gateway]
}

// apply installs the tracers of t's Gateways, keeping those whose
// configuration did not change, and shuts the others down in the
// background.
func (h *telemetryHub) apply(t *table.Table) {
	h.mu.Lock()
	defer h.mu.Unlock()
	next := map[string]*gatewayTracer{}
	live := map[string]*gatewayTracer{}
	if t != nil {
		for _, g := range t.Gateways {
			if g.Tracing == nil {
				continue
			}
			k := tracingKey(g.Tracing)
			gt := live[k]
			if gt == nil {
				gt = h.live[k]
			}
			if gt == nil {
				gt = newGatewayTracer(g.Tracing)
			}
			live[k], next[g.Name] = gt, gt
		}
	}
	h.byGateway.Store(&next)
	for k, gt := range h.live {
		if live[k] == nil {
			h.closing.Go(func() { gt.shutdown(spanExportTimeout) })
		}
	}
	h.live = live
}

// close shuts every tracer down, exporting what is queued until ctx is
// done; spans still queued then are lost with the process (a receiver that
// is down must not hold up gwdev's exit).
func (h *telemetryHub) close(ctx context.Context) {
	h.apply(nil)
	_ = waitCtx(ctx, &h.closing)
}

// stats lists the counts of the current Gateways' tracers.
func (h *telemetryHub) stats() []TelemetryStats {
	m := h.byGateway.Load()
	if m == nil {
		return nil
	}
	var out []TelemetryStats
	for name, gt := range *m {
		q := gt.queue
		st := TelemetryStats{Gateway: name, Policy: gt.cfg.Policy, Exported: q.exported.Load(), Failed: q.failed.Load(),
			Dropped: q.dropped.Load(), Unexported: q.unexported.Load()}
		if q.exp != nil {
			st.Endpoint = gt.cfg.Exporter.Protocol + " " + gt.cfg.Exporter.Target.Addresses[0]
		}
		if e := q.lastErr.Load(); e != nil {
			st.LastError = *e
		}
		out = append(out, st)
	}
	return out
}

// tracingKey identifies a tracing configuration, header values included.
func tracingKey(tr *table.Tracing) string {
	b, _ := json.Marshal(tr)
	var sb strings.Builder
	sb.Write(b)
	for _, h := range tr.Exporter.Headers {
		sb.WriteString("\x00" + h.Value)
	}
	return sb.String()
}

// gatewayTracer is one Gateway's tracing: an SDK TracerProvider with the
// policy's sampler and service.name, and its export queue.
type gatewayTracer struct {
	cfg      *table.Tracing
	provider *sdktrace.TracerProvider
	tracer   oteltrace.Tracer
	queue    *spanQueue
}

func newGatewayTracer(cfg *table.Tracing) *gatewayTracer {
	return newGatewayTracerQueue(cfg, spanQueueSize)
}

// newGatewayTracerQueue is newGatewayTracer with a queue of size spans.
func newGatewayTracerQueue(cfg *table.Tracing, size int) *gatewayTracer {
	q := newSpanQueue(newExporter(cfg.Exporter), size)
	res := resource.NewSchemaless(attribute.String("service.name", cfg.ServiceName),
		attribute.String("gwdev.policy", cfg.Policy))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSampler(newTracingSampler(cfg)),
		sdktrace.WithSpanProcessor(q))
	return &gatewayTracer{cfg: cfg, provider: tp, tracer: tp.Tracer("github.com/gwdev/gwdev/emulator"), queue: q}
}

// shutdown exports what is queued (for at most d) and stops.
func (gt *gatewayTracer) shutdown(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = gt.provider.Shutdown(ctx)
}

// newExporter is the OTLP exporter of e (nil: spans are not exported).
// Creating one connects to nothing: the gRPC client dials on first export.
func newExporter(e table.TracingExporter) sdktrace.SpanExporter {
	if e.NotExported != "" || e.Target == nil || len(e.Target.Addresses) == 0 {
		return nil
	}
	headers := map[string]string{}
	for _, h := range e.Headers {
		headers[h.Name] = h.Value
	}
	addr := e.Target.Addresses[0]
	ctx := context.Background()
	var exp sdktrace.SpanExporter
	var err error
	if e.Protocol == table.OTLPHTTP {
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure(),
			otlptracehttp.WithHeaders(headers), otlptracehttp.WithTimeout(spanExportTimeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 200 * time.Millisecond,
				MaxInterval: 2 * time.Second, MaxElapsedTime: spanExportTimeout}))
	} else {
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure(),
			otlptracegrpc.WithHeaders(headers), otlptracegrpc.WithTimeout(spanExportTimeout),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 200 * time.Millisecond,
				MaxInterval: 2 * time.Second, MaxElapsedTime: spanExportTimeout}))
	}
	if err != nil {
		return nil
	}
	return exp
}

// tracingSampler is the policy's sampling: new traces (no traceparent, or
// any request when parent-based sampling is off) at Sampling; with
// parent-based sampling, an unsampled parent's span is not sampled and a
// sampled parent's is sampled at ParentSampling. Ratios are decided on the
// trace id, so every hop that samples at the same ratio agrees.
type tracingSampler struct {
	root, parent sdktrace.Sampler
	parentBased  bool
}

func newTracingSampler(cfg *table.Tracing) sdktrace.Sampler {
	return tracingSampler{root: ratioSampler(cfg.Sampling), parent: ratioSampler(cfg.ParentSampling), parentBased: cfg.ParentBased}
}

func ratioSampler(f table.Fraction) sdktrace.Sampler {
	if f.Denominator <= 0 || f.Numerator >= f.Denominator {
		return sdktrace.AlwaysSample()
	}
	return sdktrace.TraceIDRatioBased(float64(f.Numerator) / float64(f.Denominator))
}

// ShouldSample implements sdktrace.Sampler.
func (s tracingSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	psc := oteltrace.SpanContextFromContext(p.ParentContext)
	if psc.IsValid() && s.parentBased {
		if !psc.IsSampled() {
			return sdktrace.SamplingResult{Decision: sdktrace.Drop, Tracestate: psc.TraceState()}
		}
		return s.parent.ShouldSample(p)
	}
	return s.root.ShouldSample(p)
}

// Description implements sdktrace.Sampler.
func (s tracingSampler) Description() string {
	return "gwdev XTelemetryPolicy{root:" + s.root.Description() + ",parentBased:" + strconv.FormatBool(s.parentBased) +
		",parent:" + s.parent.Description() + "}"
}

// spanQueue is the span processor: sampled spans wait in a bounded queue
// and one goroutine exports them in batches. A span that finds the queue
// full is dropped and counted, never waited for (the SDK's
// BatchSpanProcessor counts its drops only in a debug log line).
type spanQueue struct {
	exp     sdktrace.SpanExporter // nil: sampled spans are counted as unexported
	ch      chan sdktrace.ReadOnlySpan
	flush   chan chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once

	exported, failed, dropped, unexported atomic.Int64
	lastErr                               atomic.Pointer[string]
}

var _ sdktrace.SpanProcessor = (*spanQueue)(nil)

func newSpanQueue(exp sdktrace.SpanExporter, size int) *spanQueue {
	q := &spanQueue{exp: exp, ch: make(chan sdktrace.ReadOnlySpan, size), flush: make(chan chan struct{}),
		stop: make(chan struct{}), stopped: make(chan struct{})}
	if exp == nil {
		close(q.stopped)
		return q
	}
	go q.run()
	return q
}

// OnStart implements sdktrace.SpanProcessor.
func (q *spanQueue) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span without waiting.
func (q *spanQueue) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	if q.exp == nil {
		q.unexported.Add(1)
		return
	}
	select {
	case q.ch <- s:
	default:
		q.dropped.Add(1)
	}
}

// full reports whether a span ending now would be dropped.
func (q *spanQueue) full() bool { return q.exp != nil && len(q.ch) == cap(q.ch) }

func (q *spanQueue) run() {
	defer close(q.stopped)
	tick := time.NewTicker(spanBatchDelay)
	defer tick.Stop()
	batch := make([]sdktrace.ReadOnlySpan, 0, spanBatchSize)
	send := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), spanExportTimeout)
		err := q.exp.ExportSpans(ctx, batch)
		cancel()
		if err != nil {
			q.failed.Add(int64(len(batch)))
			msg := err.Error()
			q.lastErr.Store(&msg)
		} else {
			q.exported.Add(int64(len(batch)))
		}
		clear(batch)
		batch = batch[:0]
	}
	drain := func() {
		for {
			select {
			case s := <-q.ch:
				if batch = append(batch, s); len(batch) == spanBatchSize {
					send()
				}
			default:
				send()
				return
			}
		}
	}
	for {
		select {
		case s := <-q.ch:
			if batch = append(batch, s); len(batch) == spanBatchSize {
				send()
			}
		case <-tick.C:
			send()
		case done := <-q.flush:
			drain()
			close(done)
		case <-q.stop:
			drain()
			return
		}
	}
}

// ForceFlush exports what is queued.
func (q *spanQueue) ForceFlush(ctx context.Context) error {
	if q.exp == nil {
		return nil
	}
	done := make(chan struct{})
	select {
	case q.flush <- done:
	case <-q.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown exports what is queued and stops the exporter.
func (q *spanQueue) Shutdown(ctx context.Context) error {
	if q.exp == nil {
		return nil
	}
	q.once.Do(func() { close(q.stop) })
	select {
	case <-q.stopped:
	case <-ctx.Done():
	}
	return q.exp.Shutdown(ctx)
}

// requestSpan is the span of one request.
type requestSpan struct {
	gt   *gatewayTracer
	span oteltrace.Span
	ctx  context.Context
}

// startSpan starts the request's span when its Gateway has tracing,
// continuing the request's traceparent.
func (s *Server) startSpan(ex *exchange, pr *portRoutes, r *http.Request) {
	if pr == nil || pr.gateway == nil || pr.gateway.Tracing == nil {
		return
	}
	gt := s.telemetry.tracer(pr.gateway.Name)
	if gt == nil {
		return
	}
	ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	name := gt.cfg.SpanName
	if name == "" {
		name = r.Method
	}
	ctx, span := gt.tracer.Start(ctx, name, oteltrace.WithSpanKind(oteltrace.SpanKindServer), oteltrace.WithTimestamp(ex.start))
	ex.span = &requestSpan{gt: gt, span: span, ctx: ctx}
}

// inject puts the span's traceparent (and tracestate) on the request to
// the backend, replacing the client's.
func (rs *requestSpan) inject(h http.Header) {
	traceContext.Inject(rs.ctx, propagation.HeaderCarrier(h))
}

// end sets the span's attributes, ends it and notes it in the trace.
func (rs *requestSpan) end(ex *exchange, respHeader http.Header) {
	t := &ex.trace
	sc := rs.span.SpanContext()
	if !rs.span.IsRecording() {
		rs.span.End()
		t.Span = sc.TraceID().String() + "/" + sc.SpanID().String() + " not sampled"
		return
	}
	rs.span.SetAttributes(rs.standardAttributes(ex)...)
	for _, a := range rs.gt.cfg.Attributes {
		if v, ok := rs.attributeValue(ex, respHeader, a); ok {
			rs.span.SetAttributes(attribute.String(a.Name, v))
		}
	}
	switch {
	case t.Status >= 500 || t.Status == 0:
		rs.span.SetStatus(codes.Error, t.Reason)
	case t.GRPCStatus != "" && t.GRPCStatus != "OK":
		rs.span.SetStatus(codes.Error, "grpc-status "+t.GRPCStatus)
	}
	full := rs.gt.queue.full()
	rs.span.End(oteltrace.WithTimestamp(ex.start.Add(time.Duration(t.Duration))))
	t.Span = sc.TraceID().String() + "/" + sc.SpanID().String() + " sampled"
	switch {
	case rs.gt.queue.exp == nil:
		t.Span += ", not exported: " + rs.gt.cfg.Exporter.NotExported
	case full:
		t.Span += ", dropped: the export queue is full"
	}
}

// standardAttributes are the OpenTelemetry HTTP server attributes and
// gwdev's routing decision.
func (rs *requestSpan) standardAttributes(ex *exchange) []attribute.KeyValue {
	t := &ex.trace
	out := make([]attribute.KeyValue, 0, 16)
	for _, k := range table.TracingAttributeKeys {
		if v, ok := builtinAttribute(ex, k); ok {
			if k == "http.response.status_code" || k == "server.port" {
				n, _ := strconv.Atoi(v)
				out = append(out, attribute.Int(k, n))
				continue
			}
			out = append(out, attribute.String(k, v))
		}
	}
	for _, kv := range [...][2]string{{"gwdev.gateway", t.Gateway}, {"gwdev.listener", t.Listener}, {"gwdev.rule", t.Rule},
		{"gwdev.backend", t.Backend}, {"gwdev.upstream", t.Upstream}, {"gwdev.reason", t.Reason}} {
		if kv[1] != "" {
			out = append(out, attribute.String(kv[0], kv[1]))
		}
	}
	return out
}

// attributeValue is a configured attribute's value (false: none).
func (rs *requestSpan) attributeValue(ex *exchange, respHeader http.Header, a table.TracingAttribute) (string, bool) {
	switch {
	case a.Header != "":
		vs := ex.req.Header.Values(a.Header)
		if len(vs) == 0 && respHeader != nil {
			vs = respHeader.Values(a.Header)
		}
		if len(vs) == 0 {
			return "", false
		}
		if sensitiveHeader(http.CanonicalHeaderKey(a.Header)) {
			return Redacted, true
		}
		return strings.Join(vs, ","), true
	case a.Attribute != "":
		return builtinAttribute(ex, a.Attribute)
	}
	return a.Literal, true
}

// builtinAttribute computes one of table.TracingAttributeKeys.
func builtinAttribute(ex *exchange, key string) (string, bool) {
	r, t := ex.req, &ex.trace
	var v string
	switch key {
	case "client.address":
		v = r.RemoteAddr
		if h, _, err := net.SplitHostPort(v); err == nil {
			v = h
		}
	case "http.request.method":
		v = r.Method
	case "http.response.status_code":
		if t.Status != 0 {
			v = strconv.Itoa(t.Status)
		}
	case "network.protocol.version":
		v = strings.TrimPrefix(r.Proto, "HTTP/")
		if v == "2.0" {
			v = "2"
		}
	case "server.address":
		v = ex.host
	case "server.port":
		if t.Port != 0 {
			v = strconv.Itoa(int(t.Port))
		}
	case "url.path":
		v = r.URL.Path
	case "url.query":
		v = redactQuery(r.URL.RawQuery)
	case "url.scheme":
		v = "http"
		if r.TLS != nil {
			v = "https"
		}
	case "user_agent.original":
		v = r.UserAgent()
	}
	return v, v != ""
}
