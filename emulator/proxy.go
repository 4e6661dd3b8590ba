package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gwdev/gwdev/emulator/clientcert"
	"github.com/gwdev/gwdev/emulator/extauth"
	"github.com/gwdev/gwdev/emulator/internal/wire"
)

// Limits of the forwarding path.
const (
	// maxReplayBody is the largest request body kept in memory so that a
	// retry or a mirror can send it again; larger bodies are streamed once.
	maxReplayBody = 1 << 20
	// mirrorTimeout bounds a mirrored request.
	mirrorTimeout = 30 * time.Second
	// maxMirrorsInFlight bounds concurrent mirrored requests; more are dropped.
	maxMirrorsInFlight = 256
)

// Timeout causes, told apart when mapping errors to statuses.
var (
	errRequestTimeout = errors.New("request timeout exceeded")
	errBackendTimeout = errors.New("backendRequest timeout exceeded")
)

// backendTimeoutError is an attempt that exceeded timeouts.backendRequest.
type backendTimeoutError struct {
	timeout time.Duration
	attempt int
}

func (e *backendTimeoutError) Error() string {
	return fmt.Sprintf("backendRequest timeout of %s exceeded (attempt %d)", e.timeout, e.attempt)
}

// newProxy builds the one reverse proxy every listener shares; per-request
// decisions travel in the request context (the exchange).
func (s *Server) newProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:        s.rewrite,
		Transport:      attemptTransport{},
		ModifyResponse: modifyResponse,
		ErrorHandler:   errorHandler,
		ErrorLog:       log.New(io.Discard, "", 0),
		BufferPool:     &bufferPool{},
	}
}

// forward proxies a matched request to its backend under the rule's request
// timeout. Upgrades (WebSocket) are not timed: they are long-lived.
func (s *Server) forward(ex *exchange, w http.ResponseWriter, r *http.Request) {
	ex.ctx = exchangeContext{r.Context(), ex}
	ctx := context.Context(&ex.ctx) // no allocation: the exchange's
	if s.forwardLane(ctx, ex, w, r) {
		return // lane.go
	}
	if d := ex.rule.requestTimeout; d > 0 && !ex.upgrade {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, errRequestTimeout)
		defer cancel()
	}
	out := r.WithContext(ctx)
	if (ex.rule.retry != nil || len(ex.mirrors) > 0) && out.Body != nil && out.Body != http.NoBody {
		ex.bufferBody(out)
	}
	s.proxy.ServeHTTP(w, out)
}

// bufferBody reads a request body of up to maxReplayBody into memory and
// makes it replayable (GetBody); a larger body is streamed once.
func (ex *exchange) bufferBody(r *http.Request) {
	orig := r.Body
	buf, err := io.ReadAll(io.LimitReader(orig, maxReplayBody+1))
	if err != nil || len(buf) > maxReplayBody {
		rest := io.Reader(orig)
		if err != nil {
			rest = errReader{err}
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(buf), rest), orig}
		return
	}
	ex.bodyBuf = buf
	r.Body = io.NopCloser(bytes.NewReader(buf))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	r.ContentLength = int64(len(buf))
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// rewrite builds the outbound request: X-Forwarded-*, the client's Host,
// request header modifiers, URLRewrite, the upstream scheme; then fires the
// mirrors with the request as the backend will see it.
func (s *Server) rewrite(pr *httputil.ProxyRequest) {
	s.rewriteFor(exchangeFrom(pr.In.Context()), pr)
}

// rewriteFor is rewrite for the exchange ex: the forwarding lane (lane.go)
// builds its outbound request with it too.
func (s *Server) rewriteFor(ex *exchange, pr *httputil.ProxyRequest) {
	out := pr.Out
	if xff, ok := pr.In.Header["X-Forwarded-For"]; ok {
		out.Header["X-Forwarded-For"] = slices.Clone(xff)
	}
	setXForwarded(pr, ex.forwardedVals[:])
	out.Host = pr.In.Host
	extauth.Apply(out.Header, ex.authHeaders)
	if ex.span != nil {
		ex.span.inject(out.Header) // telemetry.go
	}
	for _, m := range ex.reqMods {
		m.apply(out.Header, &out.Host)
	}
	if ex.rewriteHost != "" {
		out.Host = ex.rewriteHost
	}
	if ex.rewritePath != "" {
		out.URL.Path, out.URL.RawPath = ex.rewritePath, ""
	}
	if ex.via != nil {
		ex.via.addVia(out.Header, pr.In) // after the filters, which cannot remove it (loop.go)
	}
	up := ex.backend.up
	out.URL.Scheme, out.URL.Host = up.scheme, "echo"
	if len(up.addrs) > 0 {
		out.URL.Host = up.addrs[0] // each attempt picks its endpoint
	}
	for _, m := range ex.mirrors {
		s.mirror(ex, m, out)
	}
}

// setXForwarded is httputil.ProxyRequest.SetXForwarded with the three
// fields' values in vals's array (three long: the exchange's, so that no
// request allocates one; each field's slice capped: an Add copies).
func setXForwarded(pr *httputil.ProxyRequest, vals []string) {
	h := pr.Out.Header
	if clientIP, _, err := net.SplitHostPort(pr.In.RemoteAddr); err == nil {
		if prior := h["X-Forwarded-For"]; len(prior) > 0 {
			clientIP = strings.Join(prior, ", ") + ", " + clientIP
		}
		vals[0] = clientIP
		h["X-Forwarded-For"] = vals[0:1:1]
	} else {
		delete(h, "X-Forwarded-For")
	}
	vals[1] = pr.In.Host
	h["X-Forwarded-Host"] = vals[1:2:2]
	vals[2] = "http"
	if pr.In.TLS != nil {
		vals[2] = "https"
	}
	h["X-Forwarded-Proto"] = vals[2:3:3]
}

// mirror sends a copy of out to a mirror backend and ignores the answer.
// It never waits: when too many mirrors are in flight the copy is dropped.
func (s *Server) mirror(ex *exchange, m *backendRoutes, out *http.Request) {
	up := m.up
	if up.echo == nil && len(up.addrs) == 0 {
		ex.trace.Filters = append(ex.trace.Filters, "RequestMirror: "+m.service+" has no endpoints")
		return
	}
	select {
	case s.mirrorSem <- struct{}{}:
	default:
		ex.trace.Filters = append(ex.trace.Filters, "RequestMirror: "+m.service+" dropped (too many in flight)")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), mirrorTimeout)
	if up.clientCert != "" {
		ctx = clientcert.WithDial(ctx) // its connections may serve later requests
	}
	mr := out.Clone(ctx)
	mr.RequestURI = ""
	mr.Body, mr.GetBody, mr.ContentLength = nil, nil, 0
	if ex.bodyBuf != nil {
		mr.Body = io.NopCloser(bytes.NewReader(ex.bodyBuf))
		mr.ContentLength = int64(len(ex.bodyBuf))
	}
	u := *out.URL
	u.Scheme = up.scheme
	if up.echo == nil {
		u.Host = up.addrs[up.nextAddr()]
	}
	mr.URL = &u
	rt := up.transport(m.h2c || ex.view.grpc)
	s.mirrors.Add(1)
	go func() {
		defer s.mirrors.Done()
		defer func() { <-s.mirrorSem }()
		defer cancel()
		resp, err := rt.RoundTrip(mr)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxReplayBody))
		_ = resp.Body.Close()
	}()
}

// attemptTransport sends a request to the chosen backend: endpoint choice,
// per-attempt timeout, retries with backoff.
type attemptTransport struct{}

var _ http.RoundTripper = attemptTransport{}

func (attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := exchangeFrom(req.Context())
	if ex == nil || ex.backend == nil || ex.backend.up == nil {
		return nil, errors.New("request without a routing decision")
	}
	up := ex.backend.up
	rt := up.transport(ex.backend.h2c || ex.view.grpc)
	var p *retryPolicy
	tries := 1
	if !ex.upgrade && ex.rule.retry != nil {
		p = ex.rule.retry
		tries += p.retries
	}
	ex.upstreamStart = time.Now()
	defer func() { ex.upstreamDur = time.Since(ex.upstreamStart) }()
	ex.backend.budget.request(ex.upstreamStart)
	for i := 0; ; i++ {
		resp, err := ex.attempt(rt, req)
		replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		if i+1 >= tries || !replayable || !p.retriable(req.Context(), resp, err) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
		}
		if err := ex.backend.budget.allowRetry(time.Now()); err != nil {
			return nil, err // retrybudget.go
		}
		if err := wire.Sleep(req.Context(), p.delay(i+1)); err != nil {
			return nil, err
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req.Body = body
		}
	}
}

// attempt sends one try to one endpoint.
func (ex *exchange) attempt(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	up := ex.backend.up
	addr := "echo"
	if up.echo == nil {
		i := ex.pinAddr
		if i < 0 || i >= len(up.addrs) {
			i = up.nextAddr()
		}
		addr = up.addrs[i]
	}
	ex.upstreamAddr = addr
	ex.attempts++
	ctx, cancel := req.Context(), context.CancelFunc(func() {})
	d := ex.rule.backendTimeout
	if d > 0 && !ex.upgrade {
		ctx, cancel = context.WithTimeoutCause(ctx, d, errBackendTimeout)
	}
	o := req
	if octx := ex.traceClientCert(ctx); octx != req.Context() {
		o = req.WithContext(octx)
	}
	if up.echo == nil && req.URL.Host != addr {
		if o == req {
			o = req.WithContext(ctx)
		}
		u := *req.URL
		u.Host = addr
		o.URL = &u
	}
	resp, err := rt.RoundTrip(o)
	if err != nil {
		if context.Cause(ctx) == errBackendTimeout && req.Context().Err() == nil {
			err = &backendTimeoutError{timeout: d, attempt: ex.attempts}
		}
		cancel()
		return nil, err
	}
	if ex.upgrade {
		// No attempt timeout was set (cancel is a no-op), and the body must
		// stay the raw io.ReadWriteCloser the proxy switches protocols on.
		cancel()
		return resp, nil
	}
	// The attempt's context ends when the body is closed, so the timeout
	// covers reading the whole response.
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// traceClientCert adds to an upstream attempt's context what notes, in the
// exchange's trace, whether the connection the request goes out on had the
// Gateway's client certificate presented (emulator/clientcert).
func (ex *exchange) traceClientCert(ctx context.Context) context.Context {
	secret := ex.backend.up.clientCert
	if secret == "" {
		return ctx
	}
	return clientcert.Trace(ctx, secret, func(note string) { ex.trace.BackendClientCert = note })
}

// retriable reports whether an attempt's outcome may be retried: a
// connection error or timeout of the attempt, or a listed status code.
func (p *retryPolicy) retriable(ctx context.Context, resp *http.Response, err error) bool {
	if p == nil || ctx.Err() != nil {
		return false
	}
	if err != nil {
		return true
	}
	return slices.Contains(p.codes, resp.StatusCode)
}

// delay is the wait before retry n (1-based): the backoff doubled each
// time, capped at maxBackoff times the backoff.
func (p *retryPolicy) delay(n int) time.Duration {
	d := p.backoff
	for i := 1; i < n && d < p.backoff*maxBackoff; i++ {
		d *= 2
	}
	return min(d, p.backoff*maxBackoff)
}

// cancelOnClose ends an attempt's context when its response body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// modifyResponse notes upgrades (their headers bypass WriteHeader) and
// replaces the answers the rule's error pages intercept (errorpages.go).
func modifyResponse(resp *http.Response) error {
	if resp.StatusCode != http.StatusSwitchingProtocols {
		if ex := exchangeFrom(resp.Request.Context()); ex != nil && ex.intercepts(resp.StatusCode) {
			return ex.replaceAnswer(resp)
		}
		return nil
	}
	if ex := exchangeFrom(resp.Request.Context()); ex != nil {
		ex.upgraded = true
		ex.beforeResponse(resp.Header)
	}
	return nil
}

// bufferPool recycles the proxy's copy buffers. The pool holds pointers to
// fixed-size arrays, so that neither Get nor Put allocates.
type bufferPool struct{ p sync.Pool }

// copyBufferSize is the size of the proxy's copy buffers.
const copyBufferSize = 32 << 10

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[copyBufferSize]byte); ok {
		return v[:]
	}
	return new([copyBufferSize]byte)[:]
}

func (b *bufferPool) Put(buf []byte) {
	if cap(buf) == copyBufferSize {
		b.p.Put((*[copyBufferSize]byte)(buf[:copyBufferSize]))
	}
}
