package admin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gwdev/gwdev/emulator"
)

// DefaultAddr is where `gwdev up` serves the admin API.
const DefaultAddr = "127.0.0.1:9901"

// Reload describes one translation applied to the data plane, for the
// admin API and metrics. The emulator does not read the translation itself:
// the CLI, which wires engine and emulator, passes what the admin API shows.
type Reload struct {
	Time      time.Time
	Translate time.Duration
	Apply     time.Duration
	// Objects counts the objects of the translation.
	Objects int
	// Findings counts the translation's findings by severity ("error",
	// "warning", "info"; manifests that failed to load count as errors).
	Findings map[string]int
	// FindingList is what /routes shows as "findings" next to the table
	// (a JSON value; nil: no findings are shown).
	FindingList any
}

// Admin is the admin API: /status, /routes, /traces, /traces/stream,
// /metrics and /healthz. Metrics are fed from a trace subscription, so the
// data path never waits for them; traces dropped by the subscription are
// counted in gwdev_traces_dropped_total.
type Admin struct {
	srv    *emulator.Server
	status http.Handler
	reload atomic.Pointer[Reload]
	reg    *prometheus.Registry

	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	bytesOut  *prometheus.CounterVec
	reloads   prometheus.Counter
	translate prometheus.Gauge
	objects   prometheus.Gauge
	findings  *prometheus.GaugeVec
	stop      func()
	wg        sync.WaitGroup
	// streamQueue, streamBytes, keepalive, writeTimeout and maxStreams
	// are /traces/stream's queue per client in traces and bytes, quiet
	// spell before a keepalive, deadline of each write and number of
	// clients at once (the constants; tests shrink them).
	streamQueue  int
	streamBytes  int
	keepalive    time.Duration
	writeTimeout time.Duration
	maxStreams   int
	// streams are the open /traces/stream subscriptions (the queued-bytes
	// gauge sums them); stalled and refused count the streams closed for a
	// client that took nothing within writeTimeout and those refused past
	// maxStreams.
	streamsMu sync.Mutex
	streams   map[*emulator.TraceSubscription]struct{}
	stalled   prometheus.Counter
	refused   prometheus.Counter
}

// New returns the admin API of srv and starts collecting metrics.
// status serves GET /status, every object with its computed status, which
// the CLI renders from the translation (nil: /status is not found). Call
// Close to stop.
func New(srv *emulator.Server, status http.Handler) *Admin {
	a := &Admin{srv: srv, status: status, reg: prometheus.NewRegistry(), streamQueue: streamQueue, streamBytes: streamQueueBytes,
		keepalive: streamKeepalive, writeTimeout: streamWriteTimeout, maxStreams: maxStreams,
		streams: map[*emulator.TraceSubscription]struct{}{}}
	sub := srv.SubscribeTraces(1 << 14)
	a.stop = sub.Cancel
	a.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gwdev_requests_total",
		Help: "Requests served, by gateway, listener, route and status code."}, []string{"gateway", "listener", "route", "code"})
	a.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gwdev_request_duration_seconds",
		Help: "Request duration as the client saw it.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}, []string{"gateway", "listener"})
	a.bytesOut = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gwdev_response_bytes_total",
		Help: "Response body bytes sent, by gateway and listener."}, []string{"gateway", "listener"})
	a.reloads = prometheus.NewCounter(prometheus.CounterOpts{Name: "gwdev_reloads_total", Help: "Translations applied to the data plane."})
	a.translate = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gwdev_last_translate_seconds", Help: "Duration of the last translation."})
	a.objects = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gwdev_objects", Help: "Objects in the last translation."})
	a.findings = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gwdev_findings", Help: "Findings of the last translation by severity."}, []string{"severity"})
	dropped := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gwdev_traces_dropped_total",
		Help: "Traces the metrics collector missed because it fell behind (metrics undercount by this much)."},
		func() float64 { return float64(sub.Dropped()) })
	traceBytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gwdev_trace_history_bytes",
		Help: "Estimated memory of the trace history (bounded by --trace-memory)."},
		func() float64 { _, b := srv.TraceUsage(); return float64(b) })
	a.stalled = prometheus.NewCounter(prometheus.CounterOpts{Name: "gwdev_trace_streams_stalled_total",
		Help: "/traces/stream clients disconnected because they accepted no bytes within the write deadline."})
	a.refused = prometheus.NewCounter(prometheus.CounterOpts{Name: "gwdev_trace_streams_refused_total",
		Help: "/traces/stream clients refused with 503 because the most streams gwdev serves at once were open."})
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gwdev_trace_streams",
		Help: "/traces/stream clients connected."}, func() float64 { n, _ := a.streamUsage(); return float64(n) })
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gwdev_trace_stream_queued_bytes",
		Help: "Estimated memory of the traces queued for /traces/stream clients (each bounded)."},
		func() float64 { _, b := a.streamUsage(); return float64(b) })
	a.reg.MustRegister(a.requests, a.duration, a.bytesOut, a.reloads, a.translate, a.objects, a.findings, dropped,
		a.stalled, a.refused, open, queued,
		refusedCollector(srv.RefusedCounts), traceBytes, spanCollector(srv.TelemetryStats), // telemetry_metrics.go
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.wg.Add(1)
	go a.collect(sub)
	return a
}

// collect turns traces into metrics until the subscription ends.
func (a *Admin) collect(sub *emulator.TraceSubscription) {
	defer a.wg.Done()
	series := map[seriesKey]*requestSeries{}
	sub.Each(func(t *emulator.Trace) { a.count(series, t) })
}

// count adds a request's trace to its metric series, looked up in (and
// added to) series, collect's cache.
func (a *Admin) count(series map[seriesKey]*requestSeries, t *emulator.Trace) {
	if t.Refused > 0 {
		return // counted as they happen (refusedCollector)
	}
	k := seriesKey{t.Gateway, t.Listener, t.Route, t.Status}
	m := series[k]
	if m == nil {
		if len(series) >= maxCachedSeries {
			clear(series) // routes come and go with reloads: start over
		}
		route := t.Route
		if route == "" {
			route = "-"
		}
		m = &requestSeries{requests: a.requests.WithLabelValues(t.Gateway, t.Listener, route, strconv.Itoa(t.Status)),
			duration: a.duration.WithLabelValues(t.Gateway, t.Listener), bytesOut: a.bytesOut.WithLabelValues(t.Gateway, t.Listener)}
		series[k] = m
	}
	m.requests.Inc()
	m.duration.Observe(time.Duration(t.Duration).Seconds())
	m.bytesOut.Add(float64(t.BytesOut))
}

// maxCachedSeries bounds collect's cache of metric series.
const maxCachedSeries = 4096

// seriesKey is what a request's metric series are chosen by.
type seriesKey struct {
	gateway, listener, route string
	status                   int
}

// requestSeries are a request's metric series, looked up once per
// seriesKey rather than hashed label by label for every request.
type requestSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
	bytesOut prometheus.Counter
}

// Register adds collectors to /metrics (the web view's, which the admin
// API serves but does not own).
func (a *Admin) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := a.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// SetReload records the translation now served.
func (a *Admin) SetReload(r *Reload) {
	a.reload.Store(r)
	a.reloads.Inc()
	a.translate.Set(r.Translate.Seconds())
	a.objects.Set(float64(r.Objects))
	for sev, n := range r.Findings {
		a.findings.WithLabelValues(sev).Set(float64(n))
	}
}

// Close stops collecting metrics.
func (a *Admin) Close() {
	a.stop()
	a.wg.Wait()
}

// Handler serves the admin API.
func (a *Admin) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	if a.status != nil {
		mux.Handle("GET /status", a.status)
	}
	mux.HandleFunc("GET /routes", a.routes)
	mux.HandleFunc("GET /traces", a.traces)
	mux.HandleFunc("GET /traces/stream", a.stream)
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "gwdev admin API: /status[?format=json] /routes /traces /traces/stream /metrics /healthz (/debug/pprof/ with --admin-pprof); the web view: /ui/")
	})
	return mux
}

// routes serves the routing table currently applied, with the findings.
func (a *Admin) routes(w http.ResponseWriter, _ *http.Request) {
	out := map[string]any{"table": a.srv.Table()}
	if rl := a.reload.Load(); rl != nil {
		if rl.FindingList != nil {
			out["findings"] = rl.FindingList
		}
		out["reloaded"] = rl.Time
	}
	writeJSON(w, out)
}

// traces serves the recent traces, newest last (?limit=N keeps the newest
// N), as a JSON array written one trace at a time: the history is never
// rendered whole in memory.
func (a *Admin) traces(w http.ResponseWriter, r *http.Request) {
	ts := a.srv.Traces()
	if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n >= 0 && n < len(ts) {
		ts = ts[len(ts)-n:]
	}
	w.Header().Set("Content-Type", "application/json")
	bw := bufio.NewWriterSize(w, 32<<10)
	_, _ = bw.WriteString("[")
	for i := range ts {
		if i > 0 {
			_, _ = bw.WriteString(",")
		}
		b, err := json.MarshalIndent(&ts[i], "  ", "  ")
		if err != nil {
			continue
		}
		ts[i] = emulator.Trace{} // the copy is no longer needed
		_, _ = bw.WriteString("\n  ")
		if _, err := bw.Write(b); err != nil {
			return // the client went away
		}
	}
	if len(ts) > 0 {
		_, _ = bw.WriteString("\n")
	}
	_, _ = bw.WriteString("]\n")
	_ = bw.Flush()
}

// streamQueue is how many traces /traces/stream queues for a client
// between its batches, and streamQueueBytes about how many bytes of them;
// past either the client misses traces, and the stream says how many in a
// "dropped" event.
const (
	streamQueue      = 1 << 12
	streamQueueBytes = 1 << 20
)

// streamKeepalive is how long /traces/stream stays quiet before it sends
// a comment line, so that idle proxies and clients keep the stream open.
const streamKeepalive = 15 * time.Second

// streamWriteTimeout is how long a /traces/stream client may take to
// accept a batch (or a keepalive): one that accepts nothing for that long
// is disconnected, and what was queued for it is let go.
const streamWriteTimeout = 10 * time.Second

// maxStreams is how many /traces/stream clients are served at once; more
// are refused with 503. Each holds at most about twice streamQueueBytes
// (its queue and the batch being written).
const maxStreams = 16

// openStream subscribes a /traces/stream client, or reports that
// maxStreams are open.
func (a *Admin) openStream() (*emulator.TraceSubscription, bool) {
	a.streamsMu.Lock()
	defer a.streamsMu.Unlock()
	if len(a.streams) >= a.maxStreams {
		return nil, false
	}
	sub := a.srv.SubscribeTracesWithin(a.streamQueue, a.streamBytes)
	a.streams[sub] = struct{}{}
	return sub, true
}

// closeStream ends a client's subscription.
func (a *Admin) closeStream(sub *emulator.TraceSubscription) {
	sub.Cancel()
	a.streamsMu.Lock()
	delete(a.streams, sub)
	a.streamsMu.Unlock()
}

// streamUsage is the number of open streams and the estimated bytes of
// the traces queued for them.
func (a *Admin) streamUsage() (streams, bytes int) {
	a.streamsMu.Lock()
	defer a.streamsMu.Unlock()
	for sub := range a.streams {
		_, b := sub.Queued()
		bytes += b
	}
	return len(a.streams), bytes
}

// streamWriter writes one batch of /traces/stream under a write deadline:
// after the first failed write it writes nothing more, and flush reports
// whether everything reached the client's connection.
type streamWriter struct {
	w   io.Writer
	rc  *http.ResponseController
	err error
}

// start sets the deadline of the batch's writes.
func (sw *streamWriter) start(timeout time.Duration) {
	if sw.err == nil {
		sw.err = sw.rc.SetWriteDeadline(time.Now().Add(timeout))
	}
}

func (sw *streamWriter) write(b []byte) {
	if sw.err == nil {
		_, sw.err = sw.w.Write(b)
	}
}

func (sw *streamWriter) str(s string) {
	if sw.err == nil {
		_, sw.err = io.WriteString(sw.w, s)
	}
}

// flush sends what the batch wrote; false: a write or the flush failed
// (the client went, or accepted nothing before the deadline).
func (sw *streamWriter) flush() bool {
	if sw.err == nil {
		sw.err = sw.rc.Flush()
	}
	return sw.err == nil
}

// stream sends every new trace as a server-sent event until the client
// goes. Traces come in batches (at most one per few milliseconds under
// load), each batch written and flushed at once under a write deadline
// (writeTimeout: a client that accepts nothing for that long is
// disconnected); a client that falls behind by more than the queue (in
// traces or bytes) gets an "event: dropped" whose data is the number of
// traces it missed since the previous one. Past maxStreams clients, a new
// one is refused with 503.
func (a *Admin) stream(w http.ResponseWriter, r *http.Request) {
	if _, ok := w.(http.Flusher); !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	sub, ok := a.openStream()
	if !ok {
		a.refused.Inc()
		w.Header().Set("Retry-After", "10")
		http.Error(w, fmt.Sprintf("too many /traces/stream clients: %d are connected, the most gwdev serves at once; close one, or read /traces", a.maxStreams),
			http.StatusServiceUnavailable)
		return
	}
	defer a.closeStream(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	sw := &streamWriter{w: w, rc: http.NewResponseController(w)}
	sw.start(a.writeTimeout)
	w.WriteHeader(http.StatusOK)
	sw.str(": gwdev traces\n\n")
	if !sw.flush() {
		a.noteStalled(sw.err)
		return
	}
	var (
		batch    []emulator.Trace
		buf      bytes.Buffer
		reported int64
	)
	enc := json.NewEncoder(&buf)
	for {
		batch, ok = sub.Next(r.Context(), a.keepalive, batch)
		if !ok {
			return
		}
		sw.start(a.writeTimeout)
		if len(batch) == 0 {
			sw.str(": keepalive\n\n")
		}
		if d := sub.Dropped(); d > reported {
			sw.str(fmt.Sprintf("event: dropped\ndata: %d\n\n", d-reported))
			reported = d
		}
		for i := range batch {
			buf.Reset()
			if err := enc.Encode(&batch[i]); err != nil {
				continue
			}
			sw.str("event: trace\ndata: ")
			sw.write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
			sw.str("\n\n")
		}
		if !sw.flush() {
			a.noteStalled(sw.err)
			return
		}
	}
}

// noteStalled counts a stream ended by its write deadline (not one whose
// client went).
func (a *Admin) noteStalled(err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		a.stalled.Inc()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// Serve serves the admin API on addr until ctx is done. It refuses a
// non-loopback address and foreign Host headers unless opts.AllowRemote is
// set (guard.go).
func Serve(ctx context.Context, addr string, a *Admin, opts Options) (net.Addr, <-chan error, error) {
	if err := checkAdminAddr(addr, opts.AllowRemote); err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("admin API: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", a.Handler())
	if opts.Pprof {
		withPprof(mux)
	}
	if opts.Web != nil {
		mux.Handle(WebPath, guardHost(ln.Addr(), opts.Web)) // loopback names only, whatever AllowRemote says
	}
	var h http.Handler = mux
	if !opts.AllowRemote {
		h = guardHost(ln.Addr(), mux)
	}
	if opts.Instance != "" {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(InstanceHeader, opts.Instance)
			inner.ServeHTTP(w, r)
		})
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() {
		err := hs.Serve(ln)
		if err == http.ErrServerClosed {
			err = nil
		}
		errc <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	return ln.Addr(), errc, nil
}
