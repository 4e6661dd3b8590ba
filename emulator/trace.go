package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/engine/table"
)

// Trace is one record per request, TCP connection or UDP session (or
// connection on an HTTP port that never carried a request): where it came
// in, what the router decided and why, and what the client got. Element
// names are the routing table's stable names. Credentials are redacted
// before a Trace leaves the data path.
type Trace struct {
	Time time.Time `json:"time"`
	// Client is the client's address ("" in Explain).
	Client string `json:"client,omitempty"`
	// Gateway is the table's Gateway name ("gateway/<ns>/<name>").
	Gateway string `json:"gateway,omitempty"`
	// Listener is the listener that took the request ("" : none matched).
	Listener string `json:"listener,omitempty"`
	// Address is the address:port the request arrived on ("" in Explain).
	Address string `json:"address,omitempty"`
	// Port is the Gateway listener port (before any port offset).
	Port  int32  `json:"port,omitempty"`
	Proto string `json:"proto,omitempty"`
	// SNI is the server name of the client's TLS ClientHello ("" : none, or
	// not TLS).
	SNI string `json:"sni,omitempty"`
	// ALPN lists the application protocols the client offered (connection
	// traces of TLS ports).
	ALPN []string `json:"alpn,omitempty"`
	// NegotiatedProtocol is the ALPN protocol agreed ("h2", "http/1.1").
	NegotiatedProtocol string `json:"negotiatedProtocol,omitempty"`
	// TLSVersion is the TLS version agreed ("TLS 1.3").
	TLSVersion string `json:"tlsVersion,omitempty"`
	// Certificate is the Secret whose certificate the listener presented in
	// the TLS handshake ("" : not TLS terminated by the gateway, or the
	// handshake ended before a listener was chosen).
	Certificate string `json:"certificate,omitempty"`
	// ClientCert is the client certificate and what frontend validation
	// made of it ("" : the listener does not validate client certificates).
	ClientCert string `json:"clientCert,omitempty"`
	// Host is the request host without port, lower case.
	Host   string `json:"host,omitempty"`
	Method string `json:"method,omitempty"`
	// Path is the request URI; sensitive query values are redacted, and a
	// URI longer than TraceValueLimit is cut.
	Path string `json:"path,omitempty"`
	// GRPC is set for gRPC requests (HTTP/2, content-type application/grpc).
	GRPC bool `json:"grpc,omitempty"`
	// GRPCService and GRPCMethod split a gRPC request's path.
	GRPCService string `json:"grpcService,omitempty"`
	GRPCMethod  string `json:"grpcMethod,omitempty"`
	// GRPCStatus is the grpc-status the client got, by name ("OK",
	// "Unimplemented"; "" : none was sent).
	GRPCStatus  string `json:"grpcStatus,omitempty"`
	VirtualHost string `json:"virtualHost,omitempty"`
	// Rule is the matched RouteRule name ("<kind>/<ns>/<name>/rule/<i>/match/<j>").
	Rule string `json:"rule,omitempty"`
	// Matched locates Rule in its route's spec (nil: no rule matched, or
	// the entry is not a route rule). Shared between traces: read only.
	Matched *RuleAt `json:"matched,omitempty"`
	Route   string  `json:"route,omitempty"`
	Source  string  `json:"source,omitempty"`
	// Reason says why nothing matched, why the gateway answered itself, or
	// what went wrong upstream ("" : forwarded without trouble).
	Reason string `json:"reason,omitempty"`
	// Hint says what to type instead when the request or connection did not
	// reach what the client likely meant: the curl (or openssl) line for
	// the listener that serves the host ("" : nothing to suggest).
	Hint string `json:"hint,omitempty"`
	// Filters lists the filters applied, in order, with what they did.
	Filters []string `json:"filters,omitempty"`
	// AuthAsked names the ExternalAuth filters (table names) whose checks
	// the request queued, pre-routing ones (listener filters) first, in
	// order; Filters says the same for people.
	AuthAsked []string `json:"authAsked,omitempty"`
	// RateLimited is the rate limit (the table's RateLimit name) that
	// refused the request ("": none did).
	RateLimited string `json:"rateLimited,omitempty"`
	// BasicAuth is the basic auth (the table's BasicAuth name) that
	// checked the request's credentials ("": none did); BasicAuthUser the
	// user it let in ("": it refused them, 401).
	BasicAuth     string `json:"basicAuth,omitempty"`
	BasicAuthUser string `json:"basicAuthUser,omitempty"`
	// Span is the request's XTelemetryPolicy span: "<trace id>/<span id>"
	// and whether it was sampled, dropped or not exported ("" : the
	// Gateway has no tracing).
	Span string `json:"span,omitempty"`
	// Backend is the chosen backend's name ("<rule>/backend/<k>").
	Backend string `json:"backend,omitempty"`
	// Service is the backend's Service ("<ns>/<name>:<port>").
	Service string `json:"service,omitempty"`
	// Target is the target kind (mapped, endpointslice, externalname, echo).
	Target string `json:"target,omitempty"`
	// Why is the table's explanation of the target choice.
	Why string `json:"why,omitempty"`
	// Candidates lists the rule's backends with their weights (Explain only).
	Candidates []string `json:"candidates,omitempty"`
	// Outranked names the other rules of the virtual host that match the
	// request too but come after Rule in precedence order (Explain only).
	Outranked []string `json:"outranked,omitempty"`
	// Upstream is the endpoint address the last attempt went to ("echo" for
	// the built-in echo backend).
	Upstream string `json:"upstream,omitempty"`
	// BackendFault says what a backend (or auth backend) did wrong on a
	// pooled HTTP/1.1 connection while serving this request: bytes after
	// its answer, or bytes no request asked for on an idle connection. The
	// connection was closed and no client got those bytes ("" : none).
	BackendFault string `json:"backendFault,omitempty"`
	// BackendClientCert says whether the gateway presented its client
	// certificate (the Gateway's spec.tls.backend) on the TLS connection to
	// the backend: "Secret <ns>/<name> presented", or not presented because
	// the backend did not ask ("" : none is configured, or the backend is
	// not reached over TLS). It names the Secret, never the key.
	BackendClientCert string `json:"backendClientCert,omitempty"`
	// Attempts counts upstream attempts (retries included).
	Attempts int `json:"attempts,omitempty"`
	// Status is the HTTP status sent (0 in Explain when the backend decides;
	// 499 when the client went away first).
	Status int `json:"status"`
	// Location is the redirect target, if any.
	Location string `json:"location,omitempty"`
	BytesIn  int64  `json:"bytesIn"`
	BytesOut int64  `json:"bytesOut"`
	// DatagramsIn and DatagramsOut count a UDP session's datagrams from and
	// to the client.
	DatagramsIn  int64 `json:"datagramsIn,omitempty"`
	DatagramsOut int64 `json:"datagramsOut,omitempty"`
	// End says how a TCP connection or UDP session ended (one of the
	// EndReason constants); "" for HTTP requests.
	End EndReason `json:"end,omitempty"`
	// SessionTimeout is, for End EndSessionExpired, the time without
	// datagrams after which the UDP session expired (0 otherwise).
	SessionTimeout Duration `json:"sessionTimeout,omitempty"`
	// Refused counts the connections, or UDP datagrams starting a session,
	// a listener refused over its limit since its previous such trace
	// (limits.go); 0 on every other trace.
	Refused          int64    `json:"refused,omitempty"`
	Duration         Duration `json:"duration"`
	UpstreamDuration Duration `json:"upstreamDuration,omitempty"`
	// RequestHeaders and ResponseHeaders are the headers as sent, with
	// credentials redacted and long values cut (redact.go).
	RequestHeaders  http.Header `json:"requestHeaders,omitempty"`
	ResponseHeaders http.Header `json:"responseHeaders,omitempty"`
	// responseFields, until the trace is recorded, are the response
	// headers of an answer the forwarding lane passed on as fields, in
	// place of ResponseHeaders (redactTrace makes the map).
	responseFields []h1.Field
	// memo, until the trace is recorded, is the redaction memo of the
	// request's connection (nil: none; redactTraceHeaders).
	memo *headerMemo
	// headerReused, until the trace is recorded, is set when the
	// request's header map serves the connection's next request (the fast
	// path reuses a released request's): the memo keeps a copy of it.
	headerReused bool
	// Truncated says which header values the trace cut or left out to stay
	// within TraceValueLimit and TraceHeaderLimit ("" : none).
	Truncated string `json:"truncated,omitempty"`
}

// RuleAt locates a table entry in the route it was compiled from.
type RuleAt struct {
	// Route is the route.
	Route table.ObjectKey `json:"route"`
	// Rule is the index of the rule in spec.rules.
	Rule int `json:"rule"`
	// Match is the index of the match in the rule's matches (-1: the kind
	// has no matches).
	Match int `json:"match"`
}

// ruleAt is the RuleAt of a table entry (nil: the table does not say).
func ruleAt(route table.ObjectKey, i *table.RuleIndex) *RuleAt {
	if i == nil {
		return nil
	}
	return &RuleAt{Route: route, Rule: i.Rule, Match: i.Match}
}

// EndReason says how a TCP connection, TLS stream or UDP session ended
// (Trace.End).
type EndReason string

// The ends of connections and sessions.
const (
	// EndClientClosed: the client closed its side first.
	EndClientClosed EndReason = "client closed"
	// EndBackendClosed: the backend closed its side first.
	EndBackendClosed EndReason = "backend closed"
	// EndRefused: the gateway refused the connection or datagram (nothing
	// serves it, or a limit).
	EndRefused EndReason = "refused"
	// EndListenerRetired: a new table removed or changed the listener.
	EndListenerRetired EndReason = "listener retired"
	// EndGatewayStopped: gwdev stopped.
	EndGatewayStopped EndReason = "gateway stopped"
	// EndSessionExpired: a UDP session saw no datagram for its timeout
	// (Trace.SessionTimeout).
	EndSessionExpired EndReason = "session expired"
	// EndIdleTimeout: a TCP connection moved no byte for its idle timeout.
	EndIdleTimeout EndReason = "idle timeout"
	// EndBackendError: reading from or writing to the backend failed.
	EndBackendError EndReason = "backend error"
)

// EndText is how people read t.End: the reason, with the timeout of an
// expired session ("session expired (30s without datagrams)").
func (t *Trace) EndText() string {
	if t.End == EndSessionExpired && t.SessionTimeout != 0 {
		return fmt.Sprintf("%s (%s without datagrams)", t.End, time.Duration(t.SessionTimeout))
	}
	return string(t.End)
}

// Duration is a time.Duration that serialises as a string such as "1.5ms".
type Duration time.Duration

// String formats the duration like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a string such as "1.5ms".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// traceRing keeps the last traces, within a count and a byte budget, and
// fans them out to subscribers. A subscriber whose queue is full loses the
// trace: the data path never waits.
type traceRing struct {
	mu sync.Mutex
	// buf holds n traces from head on (wrapping); sizes their estimated
	// bytes, which add up to bytes.
	buf    []Trace
	sizes  []int
	head   int
	n      int
	bytes  int
	budget int
	subs   []*subscription // in subscription order; a slice: record walks it per trace
	// seq counts the traces recorded: the newest kept is number seq-1, the
	// oldest seq-n. readers are the TraceReaders' ready channels, each given
	// a token (when it has none) per trace.
	seq     uint64
	readers []chan struct{}
}

// traceBatchWindow is how long a subscriber lets traces gather after it
// took a batch: the first trace after a quiet spell is delivered at once,
// but under load a subscriber wakes at most once per window instead of
// once per request (each wake-up of a parked goroutine costs the request
// path a scheduler hand-off, often a futex call to start another thread).
const traceBatchWindow = 5 * time.Millisecond

// subscription is one subscriber's queue of traces not yet taken.
type subscription struct {
	ring *traceRing
	// queue holds up to max traces, under ring.mu; wake has a token when
	// the queue went from empty to not empty.
	queue []Trace
	spare []Trace // the array the subscriber gave back, reused by the queue
	max   int
	// bytes is the queue's estimated memory (traceSize), at most maxBytes
	// past its first trace (maxBytes 0: no byte bound); under ring.mu.
	bytes, maxBytes int
	wake            chan struct{}
	done            chan struct{} // closed by cancel
	dropped         atomic.Int64
	// last is when the subscriber took its previous batch (next's
	// goroutine only).
	last time.Time
}

// newTraceRing keeps up to size traces and about budget bytes of them.
func newTraceRing(size, budget int) *traceRing {
	return &traceRing{buf: make([]Trace, size), sizes: make([]int, size), budget: budget}
}

// record redacts t, stores it (forgetting the oldest traces past the count
// or the byte budget) and queues it for every subscriber without blocking.
func (r *traceRing) record(t Trace) { r.recordOwned(&t) }

// recordOwned is record for a trace nothing reads after: it is redacted
// where it is and copied once, into the ring (a trace is about a kilobyte).
func (r *traceRing) recordOwned(tp *Trace) {
	headerBytes := redactTrace(tp) // redact.go: the one place credentials are redacted
	size := traceSize(tp, headerBytes)
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.n > 0 && (r.n == len(r.buf) || r.bytes+size > r.budget) {
		if r.n < len(r.buf) {
			r.buf[r.head] = Trace{} // let the collector have it
		} // else it is the slot t is written to below (head+n does not move)
		r.bytes -= r.sizes[r.head]
		r.head = (r.head + 1) % len(r.buf)
		r.n--
	}
	i := (r.head + r.n) % len(r.buf)
	r.buf[i], r.sizes[i] = *tp, size
	t := &r.buf[i]
	r.n++
	r.bytes += size
	r.seq++
	for _, ready := range r.readers {
		select {
		case ready <- struct{}{}:
		default: // a token is pending: the reader has not read yet
		}
	}
	for _, s := range r.subs {
		if len(s.queue) >= s.max || (s.maxBytes > 0 && len(s.queue) > 0 && s.bytes+size > s.maxBytes) {
			s.dropped.Add(1)
			continue
		}
		s.bytes += size
		if s.queue == nil {
			s.queue, s.spare = s.spare[:0], nil
		}
		s.queue = append(s.queue, *t)
		if len(s.queue) == 1 {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

// subscribe adds a subscriber whose queue holds up to limit traces and,
// with maxBytes > 0, about maxBytes of them (traceSize; a first trace is
// always queued); the returned function removes it (any number of calls).
func (r *traceRing) subscribe(limit, maxBytes int) (*subscription, func()) {
	s := &subscription{ring: r, max: max(limit, 1), maxBytes: max(maxBytes, 0), wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.mu.Lock()
	r.subs = append(r.subs, s)
	r.mu.Unlock()
	var once sync.Once
	return s, func() {
		once.Do(func() {
			r.mu.Lock()
			r.subs = slices.DeleteFunc(r.subs, func(o *subscription) bool { return o == s })
			r.mu.Unlock()
			close(s.done)
		})
	}
}

// next waits for traces and returns them, oldest first, after letting
// them gather for traceBatchWindow since the previous batch. ok is false
// once the subscription is cancelled or ctx is done (the traces still
// queued then are returned with it). With idle > 0, a wait that finds no
// trace for idle returns an empty batch (ok true), for a consumer that
// sends keepalives. prev, the previous batch, is reused: the caller must
// be done with it. One goroutine at a time calls next.
func (s *subscription) next(ctx context.Context, idle time.Duration, prev []Trace) (batch []Trace, ok bool) {
	var idleC <-chan time.Time
	if idle > 0 {
		t := time.NewTimer(idle)
		defer t.Stop()
		idleC = t.C
	}
	select {
	case <-s.wake:
	case <-s.done:
		return s.take(prev), false
	case <-ctx.Done():
		return s.take(prev), false
	case <-idleC:
		clear(prev)
		return prev[:0], true
	}
	if wait := traceBatchWindow - time.Since(s.last); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.done:
			t.Stop()
			return s.take(prev), false
		case <-ctx.Done():
			t.Stop()
			return s.take(prev), false
		}
	}
	s.last = time.Now()
	return s.take(prev), true
}

// take swaps the queue for prev's array (cleared).
func (s *subscription) take(prev []Trace) []Trace {
	clear(prev)
	s.ring.mu.Lock()
	defer s.ring.mu.Unlock()
	out := s.queue
	s.queue, s.spare, s.bytes = nil, prev[:0], 0
	return out
}

// queued is the number of traces queued and their estimated bytes.
func (s *subscription) queued() (n, bytes int) {
	s.ring.mu.Lock()
	defer s.ring.mu.Unlock()
	return len(s.queue), s.bytes
}

// each calls f for every trace, in order, until the subscription is
// cancelled (traces still queued then are passed too).
func (s *subscription) each(f func(*Trace)) {
	var batch []Trace
	for {
		var ok bool
		batch, ok = s.next(context.Background(), 0, batch)
		for i := range batch {
			f(&batch[i])
		}
		if !ok {
			return
		}
	}
}

// snapshot copies the ring, oldest first.
func (r *traceRing) snapshot() []Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Trace, 0, r.n)
	for i := range r.n {
		out = append(out, r.buf[(r.head+i)%len(r.buf)])
	}
	return out
}

// usage is the number of traces kept and their estimated bytes.
func (r *traceRing) usage() (n, bytes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, r.bytes
}

// What traceSize counts besides the strings' bytes: a trace's fixed part,
// each string (or slice element) and each header name.
const traceFixedBytes, traceStringBytes, traceHeaderBytes = 600, 16, 64

// traceSize estimates the memory a trace holds: its fixed part and every
// string it refers to; headerBytes is its header maps' share (headerSize
// of each, as redactTrace returns it).
func traceSize(t *Trace, headerBytes int) int {
	n := traceFixedBytes + headerBytes
	for _, s := range [...]string{t.Client, t.Gateway, t.Listener, t.Address, t.Proto, t.SNI,
		t.NegotiatedProtocol, t.TLSVersion, t.ClientCert, t.Host, t.Method, t.Path, t.GRPCService,
		t.GRPCMethod, t.GRPCStatus, t.VirtualHost, t.Rule, t.Route, t.Source, t.Reason, t.Backend,
		t.Service, t.Target, t.Why, t.Upstream, t.BackendFault, t.BackendClientCert, t.Location, string(t.End), t.Truncated, t.Span, t.BasicAuth, t.BasicAuthUser} {
		n += len(s)
	}
	for _, l := range [...][]string{t.ALPN, t.Filters, t.AuthAsked, t.Candidates} {
		for _, s := range l {
			n += traceStringBytes + len(s)
		}
	}
	return n
}

// headerSize estimates the memory a trace's header map holds (traceSize).
func headerSize(h http.Header) int {
	n := 0
	for k, vs := range h {
		n += traceHeaderBytes + len(k)
		for _, v := range vs {
			n += traceStringBytes + len(v)
		}
	}
	return n
}

// accessLog writes traces as JSON lines from its own goroutine.
type accessLog struct {
	cancel func()
	done   chan struct{}
}

// startAccessLog writes the traces keep accepts (nil: all) to w.
func startAccessLog(ring *traceRing, w io.Writer, keep func(*Trace) bool) *accessLog {
	sub, cancel := ring.subscribe(4096, 0)
	a := &accessLog{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		enc := json.NewEncoder(w)
		sub.each(func(t *Trace) {
			if keep != nil && !keep(t) {
				return // dropped by a discard rule (accesslog_filter.go)
			}
			_ = enc.Encode(t) // a broken log writer must not stop the gateway
		})
	}()
	return a
}

func (a *accessLog) stop() {
	a.cancel()
	<-a.done
}
