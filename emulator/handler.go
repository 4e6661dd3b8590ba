package emulator

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gwdev/gwdev/emulator/clientcert"
	"github.com/gwdev/gwdev/emulator/cors"
	"github.com/gwdev/gwdev/emulator/extauth"
	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/engine/table"
)

// action is what the routing decision asks the data plane to do.
type action int

const (
	actNotFound       action = iota // 404: no listener, virtual host or rule
	actDirect                       // the rule's DirectStatus
	actPreflight                    // a CORS preflight answered by the gateway
	actRedirect                     // a RequestRedirect
	actUnsupported                  // a filter gwdev cannot apply: 500
	actInvalidBackend               // the chosen backend is invalid: 500
	actNoEndpoints                  // the chosen backend has no endpoints: 503
	actProxy                        // forward to the backend
	actMisdirected                  // 421: the Host belongs to another listener than the SNI (tls.go)
	actRefused                      // 403/505: refused by a listener or rule policy (policy.go)
	actPreRouting                   // run the listener's pre-routing ExternalAuth checks, then decide again (prerouting.go)
)

// exchange is one request's state from routing to the trace.
type exchange struct {
	// rec is the response writer serve answers through (unused by
	// Explain).
	rec responseRecorder
	// ctx is the request's context with the exchange (forward).
	ctx   exchangeContext
	start time.Time
	req   *http.Request
	view  reqView
	host  string
	trace Trace

	port     *portRoutes
	listener *listenerRoutes
	vhost    *vhostRoutes
	rule     *ruleRoutes
	backend  *backendRoutes

	// status is the gateway's own answer (every action but actProxy).
	status int
	// location is the redirect target.
	location string

	reqMods  []*headerMod
	respMods []*headerMod
	modsArr  [4]*headerMod // the first reqMods and respMods, without an allocation
	// forwardedVals holds the outbound request's X-Forwarded-For, -Host
	// and -Proto values (setXForwarded). The exchange is taken again only
	// after the lane's outbound header was emptied (reusable), so nothing
	// refers to them then.
	forwardedVals [3]string
	rewriteHost   string
	rewritePath   string
	cors          *cors.Policy
	corsOrigin    string // set when the request's Origin is allowed
	mirrors       []*backendRoutes
	// auths are the ExternalAuth checks to pass before the gateway
	// forwards or redirects (extauth.go); authHeaders is what they allowed
	// onto the request to the backend, in order.
	auths       []*extAuthRoutes
	authHeaders []extauth.HeaderOp
	// preRouted is set once the listener's pre-routing filters have
	// passed (prerouting.go): the second decide matches the routes.
	preRouted bool

	// pinAddr is the endpoint a session pins (-1: round robin).
	pinAddr int
	// sessionValue, when set, is sent to the client to start a session.
	sessionValue string
	// session is the session policy that pinned the endpoint: the rule's
	// or the chosen backend's (nil: none).
	session *sessionPolicy

	upgrade       bool
	upgraded      bool
	attempts      int
	upstreamAddr  string
	upstreamStart time.Time
	upstreamDur   time.Duration
	clientGone    bool
	// pathRefused is set when the path policy refused the request
	// (path.go): a gRPC client gets INTERNAL, as Envoy answers.
	pathRefused bool
	body        *countingReader
	// bodyBuf is the buffered request body (retries and mirrors), if any.
	bodyBuf []byte
	// span is the request's XTelemetryPolicy span (nil: its Gateway has
	// no tracing; telemetry.go).
	span *requestSpan
	// challenge is the WWW-Authenticate of a 401 ("": none; policy.go).
	challenge string
	// release ends the request's count against its rule's connection
	// limit (nil: not counted; emulator/ratelimit).
	release func()
	// laneServed is set when the forwarding lane served the request
	// (lane.go).
	laneServed bool
	// via is the Server's Via entries (loop.go; nil: the offline Explain,
	// which recognises no Server's); passes is how many times the request
	// already went through this Server, by its Via fields.
	via    *viaEntries
	passes int
}

type exchangeKey struct{}

// exchangeContext is a request's context with its exchange as the value
// of exchangeKey{} (context.WithValue's, inside the exchange).
type exchangeContext struct {
	context.Context
	ex *exchange
}

// Value is the exchange for exchangeKey{}, else the request context's.
func (c *exchangeContext) Value(key any) any {
	if _, ok := key.(exchangeKey); ok {
		return c.ex
	}
	return c.Context.Value(key)
}

// exchangeFrom returns the exchange a proxied request belongs to.
func exchangeFrom(ctx context.Context) *exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

// exchanges keeps the exchanges of requests the forwarding lane served
// (exchange.reusable) for the next requests: an exchange is the largest
// allocation of a request (about 1.5 KB, the trace in it).
var exchanges = sync.Pool{New: func() any { return new(exchange) }}

func newExchange(r *http.Request, now time.Time) *exchange {
	ex := exchanges.Get().(*exchange) // zero: new, or zeroed when put back
	ex.start, ex.req, ex.view, ex.host, ex.pinAddr = now, r, newReqView(r), requestHost(r.Host), -1
	ex.reqMods, ex.respMods = ex.modsArr[:0:2], ex.modsArr[2:2:4]
	ex.trace = Trace{Time: now, Proto: r.Proto, Host: ex.host, Method: r.Method,
		Path: requestURI(r.URL), GRPC: ex.view.grpc}
	if up := r.Header.Get("Upgrade"); up != "" && r.ProtoMajor == 1 && !strings.EqualFold(up, "h2c") {
		ex.upgrade = true // WebSocket and the like: proxied, never timed or retried
	}
	return ex
}

// decide runs the routing decision: listener, virtual host, rule, filters
// and backend. It touches no network; Explain and the data plane share it.
func (ex *exchange) decide(pr *portRoutes) action {
	t := &ex.trace
	if pr == nil {
		t.Reason = "no Gateway serves this address and port"
		ex.status = http.StatusNotFound
		return actNotFound
	}
	ex.port = pr
	t.Gateway, t.Port = pr.gateway.Name, pr.port.Port
	if a, done := ex.checkTLS(pr); done {
		return a
	}
	if ex.req.Method == "PRI" {
		// "PRI * HTTP/2.0" not followed by the rest of the HTTP/2 preface
		// (which would have started HTTP/2): no request to forward.
		t.Reason = "a malformed HTTP/2 connection preface (PRI * HTTP/2.0 not followed by SM): refused, never forwarded as HTTP/1.1"
		ex.status = http.StatusBadRequest
		return actRefused
	}
	if a, done := ex.normalizePath(pr); done {
		return a
	}
	l, vh, r, reason := pr.route(&ex.view, ex.host)
	ex.listener, ex.vhost = l, vh
	if l != nil {
		t.Listener = l.l.Name
	}
	if a, done, _ := ex.preRouting(l); done {
		ex.vhost = nil
		t.VirtualHost = ""
		return a
	}
	if vh != nil {
		t.VirtualHost = vh.vh.Name
	}
	if a, done := ex.checkListenerPolicy(l, r); done {
		return a
	}
	if r == nil {
		t.Reason = reason
		ex.status = http.StatusNotFound
		return actNotFound
	}
	ex.rule = r
	t.Rule, t.Matched, t.Route, t.Source = r.r.Name, r.at, r.route, r.source
	if a, done := ex.checkLoop(); done { // loop.go
		return a
	}
	if a, done := ex.checkRulePolicy(r); done {
		return a
	}
	if r.r.DirectStatus != 0 {
		t.Reason = r.r.DirectReason
		ex.status = r.r.DirectStatus
		return actDirect
	}
	if a, done := ex.collect(r.filters, r.mirrors, r.auths); done {
		return a
	}
	b := ex.chooseBackend(r)
	if b == nil {
		t.Reason = "every backendRef of the rule has weight 0"
		ex.status = http.StatusInternalServerError
		return actInvalidBackend
	}
	ex.backend = b
	t.Backend, t.Service = b.b.Name, b.service
	if b.b.Target != nil {
		t.Target, t.Why = b.b.Target.Kind, b.b.Target.Why
	}
	if b.up != nil && b.up.clientCert != "" {
		t.BackendClientCert = clientcert.Configured(b.up.clientCert)
	}
	if pod := podOf(b.b, ex.pinAddr); pod != "" {
		t.Why += "; Pod " + pod
	}
	if ex.pinAddr >= 0 && ex.session != nil {
		if ex.sessionValue == "" {
			t.Why += " (pinned by session)"
		} else {
			t.Why += " (new session)"
		}
	}
	if b.b.Invalid != "" || b.up == nil {
		t.Reason = "backend " + b.b.Name + " is invalid: " + b.b.Invalid
		ex.status = http.StatusInternalServerError
		return actInvalidBackend
	}
	if a, done := ex.collect(b.filters, b.mirrors, b.auths); done {
		return a
	}
	if b.up.tlsErr != "" {
		t.Reason = b.up.tlsErr
		ex.status = http.StatusInternalServerError
		return actInvalidBackend
	}
	if b.up.echo == nil && len(b.up.addrs) == 0 {
		t.Reason = "backend " + b.b.Name + " has no endpoints"
		ex.status = http.StatusServiceUnavailable
		return actNoEndpoints
	}
	return actProxy
}

// collect applies a list of filters (the rule's, then the chosen backend's)
// to the exchange. done reports that the gateway answers by itself.
func (ex *exchange) collect(fs []filterStep, mirrors []*backendRoutes, auths []*extAuthRoutes) (action, bool) {
	t := &ex.trace
	var redirect bool
	var cp *cors.Policy
	for i := range fs {
		f := &fs[i]
		switch {
		case f.unsupported != "":
			t.Filters = append(t.Filters, string(f.typ)+": "+f.unsupported)
			t.Reason = f.unsupported
			ex.status = http.StatusInternalServerError
			return actUnsupported, true
		case f.reqHeaders != nil:
			ex.reqMods = append(ex.reqMods, f.reqHeaders)
			t.Filters = f.addNote(t.Filters, i)
		case f.respHeaders != nil:
			ex.respMods = append(ex.respMods, f.respHeaders)
			t.Filters = f.addNote(t.Filters, i)
		case f.rewrite != nil:
			ex.applyRewrite(f)
		case f.redirect != nil:
			if redirect || ex.location != "" {
				continue
			}
			ex.location, ex.status = redirectLocation(f.redirect, ex.req, ex.host, ex.port.port.Port)
			t.Location = ex.location
			t.Filters = append(t.Filters, fmt.Sprintf("RequestRedirect: %d %s", ex.status, ex.location))
			redirect = true
		case f.mirror >= 0:
			ex.addMirror(f, mirrors)
		case f.extAuth >= 0:
			if ex.addAuth(f, auths) {
				return actUnsupported, true
			}
		case f.cors != nil:
			cp = f.cors
		}
	}
	if cp != nil {
		ex.cors = cp
		origin := ex.req.Header.Get("Origin")
		allowed := cp.Allows(origin)
		if cp.IsPreflight(ex.req) {
			if allowed {
				ex.corsOrigin = origin
				ex.status = cp.PreflightStatus()
				t.Filters = append(t.Filters, "CORS: preflight from "+origin+" allowed")
			} else {
				ex.status = http.StatusForbidden
				t.Filters = append(t.Filters, "CORS: preflight from "+origin+" not allowed")
				t.Reason = "CORS preflight from an origin that is not allowed"
			}
			return actPreflight, true
		}
		switch {
		case allowed:
			ex.corsOrigin = cmp.Or(origin, "*")
			t.Filters = append(t.Filters, "CORS: origin "+origin+" allowed")
		case origin != "":
			t.Filters = append(t.Filters, "CORS: origin "+origin+" not allowed")
		}
	}
	if redirect {
		return actRedirect, true
	}
	return 0, false
}

func (ex *exchange) applyRewrite(step *filterStep) {
	f := step.rewrite
	var parts []string
	if f.Hostname != "" {
		ex.rewriteHost = f.Hostname
		parts = append(parts, "hostname "+ex.rewriteHost)
	}
	if f.Path != nil {
		cur := ex.view.path
		if ex.rewritePath != "" {
			cur = ex.rewritePath
		}
		if f.Path.Type == table.ReplaceRegexMatch {
			ex.rewritePath = replaceRegex(step.rewriteRE, f.Path.Value, cur)
		} else {
			ex.rewritePath = modifyPath(f.Path, cur)
		}
		parts = append(parts, "path "+ex.rewritePath)
	}
	ex.trace.Filters = append(ex.trace.Filters, "URLRewrite: "+strings.Join(parts, ", "))
}

func (ex *exchange) addMirror(f *filterStep, mirrors []*backendRoutes) {
	t := &ex.trace
	if f.mirror >= len(mirrors) {
		t.Filters = append(t.Filters, "RequestMirror: skipped (the table resolves no backend for it)")
		return
	}
	m := mirrors[f.mirror]
	switch {
	case ex.passes > 0:
		t.Filters = append(t.Filters, ex.mirrorLoops(m.service)) // loop.go
	case m.b.Invalid != "" || m.up == nil:
		t.Filters = append(t.Filters, "RequestMirror: skipped ("+m.service+" is invalid: "+m.b.Invalid+")")
	case f.mirrorFraction <= 0 || (f.mirrorFraction < 1 && rand.Float64() >= f.mirrorFraction):
		t.Filters = append(t.Filters, "RequestMirror: "+m.service+" not sampled")
	default:
		ex.mirrors = append(ex.mirrors, m)
		t.Filters = append(t.Filters, "RequestMirror: "+m.service)
	}
}

// chooseBackend resumes the client's session or picks a backend by weight
// (and, with session persistence, pins an endpoint). A backend with its
// own session persistence (an XBackend's) is chosen by weight only, as
// GEP-1619 asks, and pins the endpoint with its own session; the rule's
// session serves the rule's other backends. A pods target always pins an
// endpoint, so the trace (and explain) names the Pod.
func (ex *exchange) chooseBackend(r *ruleRoutes) *backendRoutes {
	sp := r.session
	if sp != nil {
		if v := sp.read(ex.req); v != "" {
			if b, idx, ok := r.resume(v, ex.start); ok && b.session == nil {
				ex.pinAddr, ex.session = idx, sp
				return b
			}
		}
	}
	b := r.pick()
	switch {
	case b == nil:
		return nil
	case b.session != nil:
		ex.pinEndpoint(b, b.session)
	case sp != nil:
		ex.pinEndpoint(b, sp)
	case b.up != nil && b.up.pods != nil:
		ex.pinAddr = b.up.nextAddr()
	}
	return b
}

// pinEndpoint pins an endpoint of b with session policy sp: the one the
// client's session value names when it is b's and valid, else the next
// round robin with a new session value.
func (ex *exchange) pinEndpoint(b *backendRoutes, sp *sessionPolicy) {
	ex.session = sp
	if v := sp.read(ex.req); v != "" {
		if tok, ep, ok := parseSession(v, ex.start); ok && tok == b.token {
			if idx, ok := b.endpoint(ep); ok {
				ex.pinAddr = idx
				return
			}
		}
	}
	idx := 0
	if b.up != nil {
		idx = b.up.nextAddr()
	}
	ex.pinAddr = idx
	ex.sessionValue = sp.issue(b, idx, ex.start)
}

// beforeResponse sets what the gateway adds to every response of a matched
// rule: response header modifications, CORS headers, a new session.
func (ex *exchange) beforeResponse(h http.Header) {
	for _, m := range ex.respMods {
		m.apply(h, nil)
	}
	if ex.corsOrigin != "" && ex.cors != nil {
		ex.cors.ActualHeaders(h, ex.corsOrigin)
	}
	if ex.sessionValue != "" && ex.session != nil {
		ex.session.write(h, ex.sessionValue)
	}
}

// serve answers one request on a bound listener.
func (s *Server) serve(bl *boundListener, w http.ResponseWriter, r *http.Request) {
	ex := newExchange(r, requestStart(w))
	ex.trace.Client, ex.trace.Address = r.RemoteAddr, bl.bound
	ex.trace.memo = noteRequest(r.Context())           // conntrace.go
	ex.via, ex.passes = &s.via, s.via.passes(r.Header) // loop.go
	if r.Body != nil && r.Body != http.NoBody {
		ex.body = &countingReader{r: r.Body}
		r.Body = ex.body
	}
	rec := &ex.rec // one allocation with the exchange
	*rec = responseRecorder{ResponseWriter: w, ex: ex, stall: s.stall}
	defer func() {
		p := recover()
		if ex.release != nil {
			ex.release()
		}
		s.finish(ex, rec, p)
		if p != nil {
			panic(p)
		}
		fw := ex.releasedWriter(w)
		if ex.reusable() {
			*ex = exchange{}
			exchanges.Put(ex)
		}
		if fw != nil {
			fw.Release() // nothing refers to it or its request either (reusable)
		}
	}()
	routes := bl.routes.Load()
	s.startSpan(ex, routes, r) // telemetry.go
	act := ex.decide(routes)
	if act == actPreRouting {
		if !ex.passPreRouting(rec, r) {
			return // denied, or refused because an auth backend failed
		}
		act = ex.decide(routes)
	}
	if (act == actProxy || act == actDirect || act == actNoEndpoints) && !s.checkRateLimit(ex, rec) {
		return // over the rule's rate or connection limit (checkRateLimit, policy.go)
	}
	if (act == actProxy || act == actRedirect) && !ex.authorize(rec, r) {
		return // denied, or refused because an auth backend failed
	}
	if act == actProxy && !ex.limitBody(rec, r) {
		return // a body over the rule's limit (bodylimit.go)
	}
	switch act {
	case actProxy:
		s.forward(ex, rec, r)
	case actPreflight:
		if ex.status < 300 {
			ex.cors.PreflightHeaders(rec.Header(), r)
			ex.corsOrigin = "" // already set
		}
		rec.Header().Set("Content-Length", "0")
		rec.WriteHeader(ex.status)
	case actRedirect:
		if note := s.mappedRedirect(ex); note != "" {
			ex.trace.Location = ex.location
			ex.trace.Filters = append(ex.trace.Filters, note)
		}
		rec.Header().Set("Location", ex.location)
		rec.Header().Set("Content-Length", "0")
		rec.WriteHeader(ex.status)
	default:
		s.noteServedElsewhere(ex, act)
		if r.Method == "PRI" {
			rec.Header().Set("Connection", "close") // what follows is no HTTP/1.1
		}
		if ex.challenge != "" {
			rec.Header().Set("WWW-Authenticate", ex.challenge)
		}
		ex.writeError(rec, ex.status, ex.trace.Reason)
	}
}

// requestStart is when the request started: the fast path's clock read
// for it, or now.
func requestStart(w http.ResponseWriter) time.Time {
	if fw, ok := w.(*h1.ResponseWriter); ok {
		return fw.Started()
	}
	return clockNow()
}

// reusable reports whether nothing refers to the exchange once its trace
// is recorded, so that the next request may take it: the forwarding lane
// served it (nothing of it outlives the lane's return: the pool's body
// reader ended and reads nothing of it after), without a span, a body, a
// connection-limit count, a mirror or an upgrade, each of which may hand
// it (or its context) to code that runs later. Nothing refers to its
// request then either (its header map, URL and context): the fast path
// reuses them for the connection's next request (h1.ResponseWriter.Release),
// and the trace's redaction memo keeps a copy of the header
// (Trace.headerReused).
func (ex *exchange) reusable() bool {
	return ex.laneServed && ex.span == nil && ex.body == nil && ex.release == nil && len(ex.mirrors) == 0 && !ex.upgrade
}

// releasedWriter is the fast path's writer w is when the exchange is
// reusable: serve releases it, and its request, once the trace is recorded
// (nil: nothing is released).
func (ex *exchange) releasedWriter(w http.ResponseWriter) *h1.ResponseWriter {
	if !ex.reusable() {
		return nil
	}
	fw, _ := w.(*h1.ResponseWriter)
	return fw
}

// finish completes and records the trace.
func (s *Server) finish(ex *exchange, rec *responseRecorder, panicked any) {
	t := &ex.trace
	t.Duration = Duration(clockSince(ex.start))
	t.Status = rec.status
	switch {
	case ex.upgraded && rec.status == 0:
		t.Status = http.StatusSwitchingProtocols
	case ex.clientGone && rec.status == 0:
		t.Status = 499
	}
	if rec.stalled && t.Reason == "" {
		t.Reason = fmt.Sprintf("the client accepted no bytes of the response for %s (write-stall timeout): response ended", rec.stall)
	}
	if panicked != nil && t.Reason == "" {
		t.Reason = fmt.Sprintf("response aborted: %v", panicked)
	}
	t.BytesOut = rec.bytes
	if ex.body != nil {
		t.BytesIn = ex.body.n.Load()
	}
	t.Upstream, t.Attempts = ex.upstreamAddr, ex.attempts
	t.UpstreamDuration = Duration(ex.upstreamDur)
	t.RequestHeaders = ex.req.Header // record redacts them
	if fw, ok := rec.ResponseWriter.(*h1.ResponseWriter); ok && fw.Forwarded() != nil {
		t.responseFields = fw.Forwarded() // no map made: record redacts them into one
	} else {
		t.ResponseHeaders = rec.Header()
	}
	if ex.view.grpc {
		ex.traceGRPC(rec.Header()) // grpctrace.go
	}
	if ex.span != nil {
		ex.span.end(ex, rec.Header()) // telemetry.go
	}
	if ex.reusable() {
		// The exchange is cleared next, and the request released (serve).
		t.headerReused = ex.releasedWriter(rec.ResponseWriter) != nil
		s.traces.recordOwned(t)
	} else {
		s.traces.record(*t)
	}
}

var (
	_ http.ResponseWriter             = (*responseRecorder)(nil)
	_ interface{ FlushError() error } = (*responseRecorder)(nil)
	_ interface {
		Unwrap() http.ResponseWriter
	} = (*responseRecorder)(nil)
)

// responseRecorder counts what is written and lets the exchange add its
// response headers just before they are sent.
type responseRecorder struct {
	http.ResponseWriter
	ex     *exchange
	status int
	bytes  int64
	// stall is the write-stall timeout; deadline the write deadline set
	// (limits.go).
	stall    time.Duration
	deadline time.Time
	// stalled is set when a write failed past the deadline.
	stalled bool
}

// WriteHeader applies the exchange's response headers once; 1xx
// informational answers (other than 101) pass through, except a backend's
// 100 Continue to a client that asked for one: the client's 100 is the
// server's own, sent when the body is first read (as the gateway starts
// forwarding it), and passing the backend's on too would give the client
// two, in either order (TestExpectContinueOneInterim).
func (w *responseRecorder) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	if code == http.StatusContinue && w.ex.req != nil && expectsContinue(w.ex.req.Header) {
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.status = code
	w.ex.beforeResponse(w.Header())
	w.extendWriteDeadline()
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.extendWriteDeadline()
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	if err != nil && w.stall > 0 && clockSince(w.deadline) >= 0 { // the deadline passed
		w.stalled = true
	}
	return n, err
}

// FlushError flushes buffered data to the client.
func (w *responseRecorder) FlushError() error {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// writeForwarded is WriteHeader for an answer the forwarding lane passes
// on as header fields (h1.ResponseWriter.WriteForwarded): the exchange's
// response header modifications are applied to the fields. The lane sends
// no answer here that needs the exchange's other response edits (CORS, a
// new session: laneOwnsAnswer).
func (w *responseRecorder) writeForwarded(code int, fields []h1.Field) {
	if w.status != 0 {
		return
	}
	w.status = code
	for _, m := range w.ex.respMods {
		fields = m.applyFields(fields)
	}
	w.extendWriteDeadline()
	w.ResponseWriter.(*h1.ResponseWriter).WriteForwarded(code, fields)
}

// Unwrap gives http.ResponseController (hijacking for upgrades, deadlines)
// the underlying writer.
func (w *responseRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countingReader counts request body bytes and keeps the first read error
// other than EOF (a malformed chunked body, a body cut short).
type countingReader struct {
	r   io.ReadCloser
	n   atomic.Int64 // the transport may read the body from its own goroutine
	err atomic.Pointer[error]
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if err != nil && err != io.EOF {
		c.err.CompareAndSwap(nil, &err)
	}
	return n, err
}

// readErr is the first error reading the client's body (nil: none).
func (c *countingReader) readErr() error {
	if c == nil {
		return nil
	}
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *countingReader) Close() error { return c.r.Close() }

// candidates lists a rule's or a route's backends with their weights (for
// Explain).
func candidates(r *weightedBackends) []string {
	var out []string
	for _, b := range r.backends {
		s := fmt.Sprintf("%s → %s (weight %d", b.b.Name, b.service, b.b.Weight)
		if b.b.Invalid != "" {
			s += ", invalid: " + b.b.Invalid
		} else if b.b.Target != nil {
			s += ", " + b.b.Target.Kind
		}
		out = append(out, s+")")
	}
	return out
}

// expectsContinue reports whether a request's Expect field asks for
// 100 Continue (the only expectation servers honour; others get 417).
func expectsContinue(h http.Header) bool {
	for _, v := range h["Expect"] {
		if strings.EqualFold(strings.TrimSpace(v), "100-continue") {
			return true
		}
	}
	return false
}
