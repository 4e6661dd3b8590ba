package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"time"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine/table"
)

// Config configures a Server.
type Config struct {
	// PortOffset is added to a port that cannot be bound (privileged without
	// rights, or in use): with DefaultPortOffset, 80 falls back to 8080 and
	// 443 to 8443. 0 or negative: no fallback.
	PortOffset int
	// BindOverride, when set, is the address every Gateway binds (the
	// --address flag). "" : each Gateway binds its loopback address from
	// the table; non-loopback addresses are then refused.
	BindOverride string
	// Via names the Server in the Via entry it adds to every request it
	// forwards or mirrors: "gwdev-" and Via ("": "gwdev-" and 12 random hex
	// digits, so that two gwdev processes chained into each other count
	// apart, loop.go). Servers that stand for one gwdev (migrate
	// --compare's two sides) share one, so their backends see the same
	// request.
	Via string
	// AccessLog receives one JSON line per request (a Trace, credentials
	// redacted). nil: no access log. A slow writer loses lines; it never
	// slows requests.
	AccessLog io.Writer
	// TraceBuffer is the number of traces kept for Traces (0: 1000).
	TraceBuffer int
	// TraceBytes bounds the memory of the traces kept for Traces: the
	// oldest are forgotten past it (0: DefaultTraceBytes, 64 MiB). Each
	// trace is itself bounded (TraceValueLimit, TraceHeaderLimit).
	TraceBytes int
	// TCPIdleTimeout closes a TCPRoute connection without traffic either
	// way for this long (0: DefaultTCPIdleTimeout, one hour).
	TCPIdleTimeout time.Duration
	// MaxConnsPerListener bounds the open connections of each bound TCP
	// socket; more are refused (0: DefaultMaxConnsPerListener).
	MaxConnsPerListener int
	// MaxUDPSessions bounds the sessions of each UDP listener; datagrams
	// that would start more are dropped (0: DefaultMaxUDPSessions).
	MaxUDPSessions int
	// WriteStallTimeout ends a response the client accepts no bytes of for
	// this long (0: DefaultWriteStallTimeout).
	WriteStallTimeout time.Duration
	// UDPSessionTimeout ends a UDPRoute session (one client address)
	// without datagrams either way for this long (0:
	// DefaultUDPSessionTimeout, 60 seconds).
	UDPSessionTimeout time.Duration
	// NoFastHTTP1 serves every request of HTTP and HTTPS listeners through
	// net/http's server (package h1); false: the fast path serves the
	// common HTTP/1.1 requests.
	NoFastHTTP1 bool
	// NoForwardLane forwards every request through httputil.ReverseProxy
	// (lane.go); false: the fast path's plain requests to plain-HTTP
	// backends take the forwarding lane.
	NoForwardLane bool
	// CAFiles are the CA bundles a hint's curl line may trust with
	// --cacert, tried in order and read when a hint is written (the
	// dashboard's copy-as-curl uses the same list). nil: hints use curl -k.
	CAFiles []string
	// PickSeed, when not 0, seeds the weighted choice of backends: the same
	// requests sent one after another get the same backends every run
	// (gwdev test). 0: random picks.
	PickSeed uint64
	// RateLimitClock, when set, is the time rate limits count a request
	// at instead of its arrival: gwdev test counts a case's requests as
	// one burst, whatever the machine's speed, and starts each case with
	// every client's bucket drained. nil: the request's arrival.
	RateLimitClock func() time.Time
}

// DefaultPortOffset is the port offset the gwdev command uses.
const DefaultPortOffset = table.DefaultPortOffset

const defaultTraceBuffer = 1000

// DefaultTraceBytes is the default memory budget of the trace history.
const DefaultTraceBytes = 64 << 20

// Server is the data plane: it binds the table's listeners and serves them.
// All methods are safe for concurrent use.
type Server struct {
	cfg Config
	// trust is cfg.CAFiles as a caTrust (cafiles.go).
	trust caTrust

	mu        sync.Mutex // serialises Apply and Close
	closed    bool
	listeners map[bindKey]*boundListener
	pool      *upstreamPool
	current   atomic.Pointer[router]
	// retiring counts listeners shutting down and serve loops running.
	retiring sync.WaitGroup
	// refusedTotal counts refusals over limits as they happen (limits.go).
	refusedMu    sync.Mutex
	refusedTotal map[RefusedKey]int64
	// l4Retired holds the retired TCP/UDP listeners still draining
	// (*boundListener keys), which Close ends at once.
	l4Retired sync.Map

	traces *traceRing
	access *accessLog
	// stall is the write-stall timeout of responses (limits.go).
	stall time.Duration
	proxy *httputil.ReverseProxy
	// laneServed counts the requests the forwarding lane sent (lane.go).
	laneServed atomic.Int64
	// laneParsed counts the answers among them the pool's own parser read
	// and the lane passed on as header fields (laneForward).
	laneParsed atomic.Int64

	echoMu   sync.Mutex
	echoLogs map[string]*echosrv.Log

	mirrorSem chan struct{}
	mirrors   sync.WaitGroup
	// via is the Via entry every request the Server forwards or mirrors
	// carries, and by which it recognises its own (loop.go).
	via viaEntries

	// telemetry holds the Gateways' XTelemetryPolicy tracers (telemetry.go).
	telemetry telemetryHub
}

// New returns a Server with no listeners; Apply gives it a table.
func New(cfg Config) *Server {
	if cfg.TraceBuffer <= 0 {
		cfg.TraceBuffer = defaultTraceBuffer
	}
	if cfg.TraceBytes <= 0 {
		cfg.TraceBytes = DefaultTraceBytes
	}
	s := &Server{
		cfg:       cfg,
		trust:     trustCAFiles(cfg.CAFiles),
		listeners: map[bindKey]*boundListener{},
		traces:    newTraceRing(cfg.TraceBuffer, cfg.TraceBytes),
		echoLogs:  map[string]*echosrv.Log{},
		mirrorSem: make(chan struct{}, maxMirrorsInFlight),
		via:       newViaEntries(cfg.Via),
	}
	_, _, s.stall = cfg.limits()
	s.pool = newUpstreamPool(s.echoLog)
	s.pool.picks = newPickSource(cfg.PickSeed)
	s.proxy = s.newProxy()
	s.current.Store(compile(nil, nil))
	if cfg.AccessLog != nil {
		s.access = startAccessLog(s.traces, cfg.AccessLog, s.keepAccessLine)
	}
	return s
}

// ApplyReport says, per Gateway port, what Apply bound.
type ApplyReport struct {
	// Ports are in table order: Gateways by namespace/name, then port.
	Ports []PortReport `json:"ports"`
}

// PortReport is the outcome of one Gateway port.
type PortReport struct {
	// Gateway is the table's Gateway name ("gateway/<ns>/<name>").
	Gateway string `json:"gateway"`
	// Address is the Gateway's address from the table.
	Address   string `json:"address"`
	Port      int32  `json:"port"`
	Transport string `json:"transport"`
	Protocol  string `json:"protocol,omitempty"`
	// Bound is the address:port actually listening ("" : nothing bound).
	Bound string `json:"bound,omitempty"`
	// Fallback is set when Bound uses Port+PortOffset.
	Fallback bool `json:"fallback,omitempty"`
	// Moved says why Port itself could not be bound when Fallback is set
	// ("in use by another process", "privileged: ..."; "": not moved).
	Moved string `json:"moved,omitempty"`
	// Reused is set when the listener was kept from the previous table.
	Reused bool `json:"reused,omitempty"`
	// NotServed says why the port is not served (yet), for example HTTPS.
	NotServed string `json:"notServed,omitempty"`
	// Error is why binding failed.
	Error string `json:"error,omitempty"`
}

// Err joins the bind errors of the report (nil: none).
func (r *ApplyReport) Err() error {
	var errs []error
	for _, p := range r.Ports {
		if p.Error != "" {
			errs = append(errs, fmt.Errorf("%s port %d: %s", p.Gateway, p.Port, p.Error))
		}
	}
	return errors.Join(errs...)
}

// Apply atomically installs a new table. New listeners are bound; listeners
// whose (address, port, transport) disappeared are closed gracefully;
// unchanged ones are kept (not re-bound) and switch to the new table for
// their next request. In-flight requests finish on the table they started
// with.
func (s *Server) Apply(t *table.Table) *ApplyReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := &ApplyReport{}
	if s.closed {
		rep.Ports = append(rep.Ports, PortReport{Error: "server is closed"})
		return rep
	}
	rt := compile(t, s.pool)
	rt.via = &s.via      // Server.Explain counts the Server's own Via entries (loop.go)
	s.telemetry.apply(t) // before any listener serves the new table
	keep := map[bindKey]*boundListener{}
	var started []*boundListener
	for _, pr := range rt.order {
		p := PortReport{Gateway: pr.gateway.Name, Address: pr.gateway.Address, Port: pr.port.Port,
			Transport: pr.port.Transport, Protocol: string(pr.protocol)}
		if pr.notServed != "" {
			p.NotServed = pr.notServed
			rep.Ports = append(rep.Ports, p)
			continue
		}
		bl, fresh, err := s.listenerFor(pr, keep)
		if err != nil {
			p.Error = err.Error()
			rep.Ports = append(rep.Ports, p)
			continue
		}
		bl.routes.Store(pr)
		keep[bl.key] = bl
		if fresh {
			started = append(started, bl)
		}
		p.Bound, p.Fallback, p.Moved, p.Reused = bl.bound, bl.fallback, bl.moved, !fresh
		rep.Ports = append(rep.Ports, p)
	}
	s.current.Store(rt)
	for _, bl := range started {
		s.serveListener(bl)
	}
	for k, bl := range s.listeners {
		if _, ok := keep[k]; !ok {
			s.retire(bl)
		}
	}
	s.listeners = keep
	for _, u := range s.pool.dropped {
		u.closeIdle()
	}
	return rep
}

// Close stops every listener, letting in-flight requests finish until ctx
// is done, then closes what is left.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ls := s.listeners
	s.listeners = map[bindKey]*boundListener{}
	s.mu.Unlock()

	var errs []error
	var wg sync.WaitGroup
	var emu sync.Mutex
	for _, bl := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if bl.l4 != nil {
				// TCP connections are long-lived: close them now.
				bl.l4.stop()
				bl.l4.drain(closedContext, EndGatewayStopped)
				return
			}
			if bl.tls != nil {
				// TLS ports: stop the accept loop (the HTTP server serves a
				// queue); TLSRoute streams are long-lived: close them now.
				_ = bl.ln.Close()
				defer bl.tls.drain(closedContext, EndGatewayStopped)
			}
			if bl.fast != nil && bl.tls == nil {
				_ = bl.ln.Close() // the fast path's accept loop
			}
			err := bl.srv.Shutdown(ctx)
			if err != nil {
				_ = bl.srv.Close()
			}
			if ferr := bl.fast.Stop(ctx); err == nil {
				err = ferr
			}
			if err != nil {
				emu.Lock()
				errs = append(errs, fmt.Errorf("closing %s: %w", bl.bound, err))
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	s.stopRetiredL4() // l4.go
	if err := waitCtx(ctx, &s.retiring); err != nil {
		errs = append(errs, fmt.Errorf("waiting for retired listeners: %w", err))
	}
	if err := waitCtx(ctx, &s.mirrors); err != nil {
		errs = append(errs, fmt.Errorf("waiting for mirrored requests: %w", err))
	}
	s.telemetry.close(ctx)
	for _, u := range s.pool.upstreams {
		u.closeIdle()
	}
	if s.access != nil {
		s.access.stop()
	}
	return errors.Join(errs...)
}

// closedContext is done from the start.
var closedContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func waitCtx(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TelemetryStats counts, per Gateway with XTelemetryPolicy tracing, the
// spans exported, failed, dropped and left unexported (telemetry.go).
func (s *Server) TelemetryStats() []TelemetryStats { return s.telemetry.stats() }

// Traces returns a snapshot of the trace ring, newest last.
func (s *Server) Traces() []Trace { return s.traces.snapshot() }

// EchoLog returns the log lines of the echo backend of a Service
// ("<namespace>/<name>"), oldest first.
func (s *Server) EchoLog(service string) []string {
	return s.EchoLogSince(service, time.Time{})
}

// EchoLogSince returns the log lines of the echo backend of a Service
// ("<namespace>/<name>") logged at or after since, oldest first; a zero
// since returns them all (like a pod log's sinceTime).
func (s *Server) EchoLogSince(service string, since time.Time) []string {
	s.echoMu.Lock()
	l := s.echoLogs[service]
	s.echoMu.Unlock()
	if l == nil {
		return nil
	}
	return l.Since(since)
}

func (s *Server) echoLog(service string) *echosrv.Log {
	s.echoMu.Lock()
	defer s.echoMu.Unlock()
	l := s.echoLogs[service]
	if l == nil {
		l = &echosrv.Log{}
		s.echoLogs[service] = l
	}
	return l
}

// Table returns the table the server currently serves (nil before Apply).
func (s *Server) Table() *table.Table { return s.current.Load().table }

// Explain runs the routing decision of the currently served table; see the
// package-level Explain.
func (s *Server) Explain(gatewayAddr string, port int32, req *http.Request) *Trace {
	return explainProbe(s.current.Load(), requestProbe(gatewayAddr, port, req))
}

// ExplainProbe answers for a probe with the currently served table; see
// the package-level ExplainProbe.
func (s *Server) ExplainProbe(p Probe) *Trace { return explainProbe(s.current.Load(), p) }
