package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
	// ClientCert is the client certificate and what frontend validation
	// made of it ("" : the listener does not validate client certificates).
	ClientCert string `json:"clientCert,omitempty"`
	// Host is the request host without port, lower case.
	Host   string `json:"host,omitempty"`
	Method string `json:"method,omitempty"`
	// Path is the request URI; sensitive query values are redacted.
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
	Rule   string `json:"rule,omitempty"`
	Route  string `json:"route,omitempty"`
	Source string `json:"source,omitempty"`
	// Reason says why nothing matched, why the gateway answered itself, or
	// what went wrong upstream ("" : forwarded without trouble).
	Reason string `json:"reason,omitempty"`
	// Filters lists the filters applied, in order, with what they did.
	Filters []string `json:"filters,omitempty"`
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
	// End says how a TCP connection or UDP session ended ("client closed",
	// "backend closed", "idle timeout", "session expired (…)", "refused",
	// "listener retired", "gateway stopped"); "" for HTTP requests.
	End              string      `json:"end,omitempty"`
	Duration         Duration    `json:"duration"`
	UpstreamDuration Duration    `json:"upstreamDuration,omitempty"`
	RequestHeaders   http.Header `json:"requestHeaders,omitempty"`
	ResponseHeaders  http.Header `json:"responseHeaders,omitempty"`
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

// redacted replaces credential values in traces and the access log.
const redacted = "[redacted]"

// sensitiveHeaders are the headers whose values never appear in a Trace.
var sensitiveHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// redactHeader copies h with credential values replaced.
func redactHeader(h http.Header) http.Header {
	if len(h) == 0 {
		return nil
	}
	out := h.Clone()
	for _, n := range sensitiveHeaders {
		if vs, ok := out[n]; ok {
			for i := range vs {
				vs[i] = redacted
			}
		}
	}
	return out
}

// sensitiveParam reports whether a query parameter name looks like it
// carries a credential.
func sensitiveParam(name string) bool {
	n := strings.ToLower(name)
	for _, w := range [...]string{"token", "key", "secret", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// redactQuery replaces the values of sensitive query parameters, keeping the
// rest of the raw query as sent.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	var b strings.Builder
	changed := false
	for i, part := range strings.Split(raw, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		k, _, hasValue := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && sensitiveParam(name) {
			b.WriteString(k)
			b.WriteString("=" + redacted)
			changed = true
			continue
		}
		b.WriteString(part)
	}
	if !changed {
		return raw
	}
	return b.String()
}

// requestURI renders a request's path and redacted query for a Trace.
func requestURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery == "" {
		return p
	}
	return p + "?" + redactQuery(u.RawQuery)
}

// traceRing keeps the last traces and fans them out to subscribers. A
// subscriber whose channel is full loses the trace: the data path never
// waits.
type traceRing struct {
	mu   sync.Mutex
	buf  []Trace
	next int
	full bool
	subs map[*subscription]struct{}
}

type subscription struct {
	ch      chan Trace
	dropped atomic.Int64
}

func newTraceRing(size int) *traceRing {
	return &traceRing{buf: make([]Trace, size), subs: map[*subscription]struct{}{}}
}

// record stores t and offers it to every subscriber without blocking.
func (r *traceRing) record(t Trace) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf[r.next] = t
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
	for s := range r.subs {
		select {
		case s.ch <- t:
		default:
			s.dropped.Add(1)
		}
	}
}

// snapshot copies the ring, oldest first.
func (r *traceRing) snapshot() []Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]Trace(nil), r.buf[:r.next]...)
	}
	out := make([]Trace, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

// subscribe adds a subscriber with a channel of size buf; the returned
// function removes it and closes the channel.
func (r *traceRing) subscribe(buf int) (*subscription, func()) {
	if buf < 1 {
		buf = 1
	}
	s := &subscription{ch: make(chan Trace, buf)}
	r.mu.Lock()
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	var once sync.Once
	return s, func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.subs, s)
			close(s.ch)
			r.mu.Unlock()
		})
	}
}

// accessLog writes traces as JSON lines from its own goroutine.
type accessLog struct {
	cancel func()
	done   chan struct{}
}

// startAccessLog writes the traces keep accepts (nil: all) to w.
func startAccessLog(ring *traceRing, w io.Writer, keep func(*Trace) bool) *accessLog {
	sub, cancel := ring.subscribe(4096)
	a := &accessLog{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		enc := json.NewEncoder(w)
		for t := range sub.ch {
			if keep != nil && !keep(&t) {
				continue // dropped by a discard rule (accesslog_filter.go)
			}
			_ = enc.Encode(&t) // a broken log writer must not stop the gateway
		}
	}()
	return a
}

func (a *accessLog) stop() {
	a.cancel()
	<-a.done
}
