package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/textproto"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Limits of the HTTP/1.1 upstream pool.
const (
	// MaxPooledBody is the largest request body (with a declared length)
	// the pool sends; it fits the loopback socket buffers, so writing it
	// never waits for a backend that answers before reading it. Larger
	// bodies, and bodies of unknown length, go through net/http.
	MaxPooledBody = 64 << 10
	// MaxResponseHeaderBytes bounds a response's header (1xx answers
	// included unless passed on), as net/http's default does.
	MaxResponseHeaderBytes = 10 << 20
	// strayPeek is how many bytes of an idle connection's stray bytes
	// the trace shows.
	strayPeek = 24
	// h1BufSize is the size of each connection's read and write buffers.
	h1BufSize = 4 << 10
)

// Pool sends plain HTTP/1.1 requests over keep-alive connections of its
// own, reading the answer on the calling goroutine: no per-connection
// reader and writer goroutines, no channel hand-offs. It takes the common
// case only (http scheme, a body of known length up to MaxPooledBody, no
// Upgrade, no Expect, no trailers); everything else goes to next, the
// upstream's net/http transport, whose dialer and idle limits it shares.
type Pool struct {
	next *http.Transport
	// fault, when set, is told what a backend did wrong on a pooled
	// connection, with the context of the request that found it.
	fault func(ctx context.Context, what string)

	mu     sync.Mutex
	idle   map[string][]*h1Conn // by address, most recently used last
	sweep  *time.Timer          // closes connections idle past next.IdleConnTimeout
	closed bool                 // closeIdle was called: no more idle connections
	// epoch is when the pool was made: a connection's idleSince is read
	// from it with one clock read (zero: a pool not made by NewPool).
	epoch time.Time
}

var _ http.RoundTripper = (*Pool)(nil)

// NewPool returns a pool in front of next, which sends what the pool does
// not and whose dialer and idle limits the pool uses. fault, when set, is
// told what a backend did wrong on a pooled connection (stray bytes), with
// the context of the request that found it.
func NewPool(next *http.Transport, fault func(ctx context.Context, what string)) *Pool {
	return &Pool{next: next, fault: fault, idle: map[string][]*h1Conn{}, epoch: clockNow()}
}

// handles reports whether the pool sends req itself.
func (p *Pool) handles(req *http.Request) bool {
	if req.URL.Scheme != "http" || len(req.Trailer) > 0 || req.ContentLength < 0 || req.ContentLength > MaxPooledBody {
		return false
	}
	if req.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody {
		return false // a body of unknown length: net/http sends it chunked
	}
	h := req.Header
	return len(h["Upgrade"]) == 0 && len(h["Expect"]) == 0
}

// RoundTrip sends req on a pooled connection. A request that fails on a
// reused connection before any answer arrived is sent once more on a new
// connection when net/http would retry it too: nothing was written, or the
// request is idempotent and its body can be sent again.
func (p *Pool) RoundTrip(req *http.Request) (*http.Response, error) {
	if !p.handles(req) {
		return p.next.RoundTrip(req)
	}
	if bad := InvalidHeader(req.Header); bad != "" {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("invalid header %s", bad) // what net/http refuses to send
	}
	var got1xx func(int, textproto.MIMEHeader) error
	if trace := httptrace.ContextClientTrace(req.Context()); trace != nil {
		got1xx = trace.Got1xxResponse
	}
	return p.Send(req.Context(), req, req.URL.Host, (*http.Request).Write, got1xx)
}

// Send is RoundTrip once the request is one the pool sends: write puts
// req's head and body on a connection to addr; got1xx, when set, is given
// the informational answers (the reverse proxy forwards them). ctx aborts
// the exchange. The data plane's forwarding lane sends its requests here too,
// with a head it writes itself.
func (p *Pool) Send(ctx context.Context, req *http.Request, addr string, write func(*http.Request, io.Writer) error,
	got1xx func(int, textproto.MIMEHeader) error) (*http.Response, error) {
	_, resp, err := p.exchange(ctx, nil, req, addr, write, got1xx, false)
	return resp, err
}

// Exchange is Send, reading the answer's head with the pool's own parser
// when it takes it (an Answer; see there) and with net/http's
// ReadResponse otherwise (a *http.Response, informational answers passed
// to got1xx): one of the two is set when err is nil.
func (p *Pool) Exchange(ctx context.Context, req *http.Request, addr string, write func(*http.Request, io.Writer) error,
	got1xx func(int, textproto.MIMEHeader) error) (*Answer, *http.Response, error) {
	return p.exchange(ctx, nil, req, addr, write, got1xx, true)
}

// ExchangeFor is Exchange for a request the fast server serves through w,
// when ctx is that request's context or one derived from it with values
// only (no deadline, no cancel of its own): the client's connection aborts
// the exchange when the request ends (the client left, the handler
// returned) as ctx's end would, without a context.AfterFunc per request.
// The answer's body is the connection's (one per request): it is not used
// once the handler returned.
func (p *Pool) ExchangeFor(w *ResponseWriter, ctx context.Context, req *http.Request, addr string,
	write func(*http.Request, io.Writer) error, got1xx func(int, textproto.MIMEHeader) error) (*Answer, *http.Response, error) {
	return p.exchange(ctx, w.fc, req, addr, write, got1xx, true)
}

// exchange is Send and Exchange: own says whether the pool's parser may
// read the answer; fc, when set, is the client connection whose request
// ctx is (ExchangeFor).
func (p *Pool) exchange(ctx context.Context, fc *fastConn, req *http.Request, addr string, write func(*http.Request, io.Writer) error,
	got1xx func(int, textproto.MIMEHeader) error, own bool) (*Answer, *http.Response, error) {
	for try := 0; ; try++ {
		// The round's requests go out together; the yield comes before the
		// connection is taken, so that its idle probe stays right before
		// the request is written.
		yieldRound()
		pc, err := p.get(ctx, addr)
		if err != nil {
			return nil, nil, err
		}
		a, resp, err := pc.roundTrip(ctx, fc, req, write, got1xx, own)
		if err == nil {
			return a, resp, nil
		}
		if try > 0 || !pc.reused || !pc.retriable(req) || ctx.Err() != nil {
			return nil, nil, err
		}
		if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, nil, err
			}
			req = req.WithContext(ctx) // a copy: RoundTrip leaves its request alone
			req.Body = body
		}
	}
}

// InvalidHeader names a header that cannot be sent as is ("" : none):
// net/http's Transport refuses the same.
func InvalidHeader(h http.Header) string {
	for k, vs := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Sprintf("field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Sprintf("field value for %q", k) // the value may be a credential
			}
		}
	}
	return ""
}

// get returns an idle connection to addr, or dials one.
func (p *Pool) get(ctx context.Context, addr string) (*h1Conn, error) {
	for {
		p.mu.Lock()
		list := p.idle[addr]
		if len(list) == 0 {
			p.mu.Unlock()
			break
		}
		pc := list[len(list)-1]
		list[len(list)-1] = nil
		p.idle[addr] = list[:len(list)-1]
		p.mu.Unlock()
		// Every reuse looks first (one non-blocking peek, however short
		// the idle time): a backend that wrote after its answer ended (a
		// body to HEAD, bytes after Content-Length, a second answer)
		// would otherwise answer the next request with them.
		st, stray := pc.probe.look()
		if st == idleOpen {
			pc.reused = true
			return pc, nil
		}
		_ = pc.c.Close() // the backend closed it while idle, or wrote to it
		if st == idleStray {
			p.noteFault(ctx, fmt.Sprintf("backend %s sent bytes no request asked for on an idle connection (starting %q): connection closed, the request went on another", addr, stray))
		}
	}
	c, err := p.next.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	pc := &h1Conn{pool: p, addr: addr, c: c, probe: newIdleProbe(c)}
	pc.r, pc.w = h1Reader{c: c}, h1Writer{c: c}
	pc.br = bufio.NewReaderSize(&pc.r, h1BufSize)
	pc.cl.br = pc.br
	pc.abort = func() { _ = pc.c.SetDeadline(aLongTimeAgo) }
	pc.unwatchFn = pc.unwatch
	pc.bw = bufio.NewWriterSize(&pc.w, h1BufSize)
	return pc, nil
}

// put keeps a connection whose exchange ended cleanly for the next request.
func (p *Pool) put(pc *h1Conn) {
	pc.idleSince = clockAfter(p.epoch)
	p.mu.Lock()
	list := p.idle[pc.addr]
	if p.closed || len(list) >= p.next.MaxIdleConnsPerHost {
		p.mu.Unlock()
		_ = pc.c.Close()
		return
	}
	p.idle[pc.addr] = append(list, pc)
	if p.sweep == nil {
		p.sweep = time.AfterFunc(p.next.IdleConnTimeout, p.closeStale)
	}
	p.mu.Unlock()
}

// closeStale closes connections idle for longer than the idle timeout, and
// comes back while any connection is idle.
func (p *Pool) closeStale() {
	limit := clockAfter(p.epoch).Add(-p.next.IdleConnTimeout)
	var stale []*h1Conn
	p.mu.Lock()
	for addr, list := range p.idle {
		keep := list[:0]
		for _, pc := range list {
			if pc.idleSince.Before(limit) {
				stale = append(stale, pc)
			} else {
				keep = append(keep, pc)
			}
		}
		clear(list[len(keep):])
		if len(keep) == 0 {
			delete(p.idle, addr)
		} else {
			p.idle[addr] = keep
		}
	}
	p.sweep = nil
	if len(p.idle) > 0 {
		p.sweep = time.AfterFunc(p.next.IdleConnTimeout/2, p.closeStale)
	}
	p.mu.Unlock()
	for _, pc := range stale {
		_ = pc.c.Close()
	}
}

// CloseIdle closes every idle connection; connections in use close when
// their exchange ends. The pool keeps no connection afterwards.
func (p *Pool) CloseIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = map[string][]*h1Conn{}, true
	if p.sweep != nil {
		p.sweep.Stop()
		p.sweep = nil
	}
	p.mu.Unlock()
	for _, list := range idle {
		for _, pc := range list {
			_ = pc.c.Close()
		}
	}
	p.next.CloseIdleConnections()
}

// h1Conn is one pooled connection to a backend.
type h1Conn struct {
	pool      *Pool
	addr      string
	c         net.Conn
	r         h1Reader
	w         h1Writer
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
	// probe looks at the connection before each reuse.
	probe *idleProbe
	// reused is set when the connection served an earlier request.
	reused bool
	// answer and cl are the current exchange's answer and body reader
	// when the pool's parser read it (Exchange), reused.
	answer Answer
	// lastHead is the last answer head the pool's parser read
	// (sameOrString).
	lastHead string
	// memo is the last answer head parsed and what it made (parseAnswer).
	memo answerMemo
	cl   clReader
	// abort makes the exchange's reads and writes fail (made once: an
	// aborted context calls it).
	abort func()
	// watcher is the client connection that aborts the current exchange
	// (ExchangeFor; nil: none), unwatchFn its stop (made once).
	watcher   *fastConn
	unwatchFn func() bool
}

// unwatch is the stop of an exchange its client connection watches: true
// when the connection had not aborted it.
func (pc *h1Conn) unwatch() bool {
	fc := pc.watcher
	pc.watcher = nil
	return fc == nil || fc.unwatchUpstream(pc)
}

// h1Writer counts the bytes of the current request written to a
// connection.
type h1Writer struct {
	c net.Conn
	n int64
}

func (w *h1Writer) Write(p []byte) (int, error) {
	n, err := w.c.Write(p)
	w.n += int64(n)
	return n, err
}

// h1Reader counts the bytes read from a connection and, while limit is
// positive, refuses to read more than limit (the response header limit).
type h1Reader struct {
	c     net.Conn
	n     int64
	limit int64
}

func (r *h1Reader) Read(p []byte) (int, error) {
	if r.limit > 0 {
		if r.n >= r.limit {
			return 0, fmt.Errorf("backend response headers exceed %d bytes", MaxResponseHeaderBytes)
		}
		p = p[:min(int64(len(p)), r.limit-r.n)]
	}
	n, err := r.c.Read(p)
	r.n += int64(n)
	return n, err
}

// aLongTimeAgo is a deadline that makes every pending and future read and
// write on a connection fail at once.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip writes req (with write) and reads the answer's header, with
// the pool's parser when own is set and it takes it (an Answer), else with
// ReadResponse; the body streams from the connection, which goes back to
// the pool when it is read to the end. ctx aborts the exchange (the
// connection is then closed), through fc when set (ExchangeFor).
func (pc *h1Conn) roundTrip(ctx context.Context, fc *fastConn, req *http.Request, write func(*http.Request, io.Writer) error,
	got1xx func(int, textproto.MIMEHeader) error, own bool) (*Answer, *http.Response, error) {
	stop := func() bool { return true }
	if fc != nil && fc.watchUpstream(ctx, pc) {
		pc.watcher = fc
		stop = pc.unwatchFn
	} else if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, pc.abort)
	}
	fail := func(err error) (*Answer, *http.Response, error) {
		stop()
		_ = pc.c.Close()
		if ctx.Err() != nil {
			return nil, nil, context.Cause(ctx)
		}
		return nil, nil, err
	}
	pc.w.n = 0
	pc.r.n, pc.r.limit = 0, MaxResponseHeaderBytes
	err := write(req, pc.bw)
	if err == nil && pc.w.n == 0 {
		// The whole request is in the buffer: send it and wait for the
		// answer without a read that finds nothing yet.
		err = pc.probe.flushAwait(pc.bw)
	} else if err == nil {
		err = pc.bw.Flush()
	}
	if err != nil {
		return fail(err)
	}
	if own {
		if a, ok := pc.readAnswer(req.Method); ok {
			pc.r.limit = 0
			pc.cl.n = a.ContentLength
			if a.NoBody {
				pc.cl.n = 0
			}
			// Even an answer without a body ends its exchange on the
			// first Read or Close: the Answer is the connection's until then.
			// The client connection's request reads the body before it
			// ends (ExchangeFor): the connection's body serves each.
			var b *Body
			if fc != nil {
				b = &fc.answerBody
			} else {
				b = new(Body)
			}
			*b = Body{pc: pc, ctx: ctx, body: &pc.cl, stop: stop, keep: !a.Close && !req.Close}
			a.Body = b
			if a.chunked && !a.NoBody {
				a.Body.body = &chunkedBody{br: pc.br, cr: httputil.NewChunkedReader(pc.br)}
			}
			return a, nil, nil
		}
	}
	resp, err := pc.readResponse(req, got1xx)
	if err != nil {
		return fail(err)
	}
	pc.r.limit = 0
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// Upgrades go through net/http; a backend switching protocols
		// unasked cannot be followed.
		return fail(errors.New("backend switched protocols on a request that asked for no upgrade"))
	}
	keep := !resp.Close && !req.Close
	if resp.Body == http.NoBody {
		pc.finish(ctx, stop, keep)
		return nil, resp, nil
	}
	resp.Body = &Body{pc: pc, ctx: ctx, body: resp.Body, stop: stop, keep: keep}
	return nil, resp, nil
}

// readResponse reads the final answer's header, passing informational (1xx)
// answers to got1xx (the reverse proxy forwards them; nil: dropped).
func (pc *h1Conn) readResponse(req *http.Request, got1xx func(int, textproto.MIMEHeader) error) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(pc.br, req)
		if err != nil {
			return nil, err
		}
		code := resp.StatusCode
		if code < 100 || code > 199 || code == http.StatusSwitchingProtocols {
			return resp, nil
		}
		if got1xx != nil {
			if err := got1xx(code, textproto.MIMEHeader(resp.Header)); err != nil {
				return nil, err
			}
			pc.r.limit = pc.r.n + MaxResponseHeaderBytes // passed on: the limit starts again
		}
	}
}

// retriable reports whether a failed exchange may be sent again on a new
// connection (see RoundTrip): no answer byte arrived, the body can be sent
// again, and nothing was written or the request is idempotent.
func (pc *h1Conn) retriable(req *http.Request) bool {
	if pc.r.n > 0 || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
		return false
	}
	if pc.w.n == 0 {
		return true
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return len(req.Header["Idempotency-Key"]) > 0 || len(req.Header["X-Idempotency-Key"]) > 0
}

// finish ends an exchange: the connection goes back to the pool when the
// answer was read to its end, nothing aborted it, both sides keep it alive
// and nothing follows the answer; otherwise it is closed. Bytes after the
// answer are the backend's fault, noted in ctx's trace.
func (pc *h1Conn) finish(ctx context.Context, stop func() bool, keep bool) {
	stopped := stop()
	if n := pc.br.Buffered(); n > 0 && keep {
		extra, _ := pc.br.Peek(min(n, strayPeek))
		pc.pool.noteFault(ctx, fmt.Sprintf("backend %s sent %d byte(s) after its answer ended (starting %q): connection closed", pc.addr, n, extra))
		keep = false
	}
	if stopped && keep {
		pc.pool.put(pc)
		return
	}
	_ = pc.c.Close()
}

// idleState is what idleProbe finds on an idle connection.
type idleState int

const (
	idleOpen   idleState = iota // nothing to read: reusable
	idleClosed                  // the backend closed it (or it failed)
	idleStray                   // bytes no request asked for
)

// noteFault tells the pool's fault function what a backend did wrong.
func (p *Pool) noteFault(ctx context.Context, what string) {
	if p.fault != nil {
		p.fault(ctx, what)
	}
}

// Idle is the number of idle connections to addr the pool keeps.
func (p *Pool) Idle(addr string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle[addr])
}

// Body is a pooled connection's response body.
type Body struct {
	pc   *h1Conn
	ctx  context.Context
	body io.Reader
	stop func() bool
	keep bool
	// err is what every Read returns once the exchange ended (io.EOF after
	// the whole body; nil: not ended).
	err error
	mu  sync.Mutex // Close may come from another goroutine than Read
}

// Buffered is the number of the body's bytes already read from the
// connection and not yet returned by Read (and of any bytes after it).
func (b *Body) Buffered() int { return b.pc.br.Buffered() }

// Trailer is what followed a chunked body the pool's parser read, once
// Read returned io.EOF (nil: no trailers).
func (b *Body) Trailer() http.Header {
	if cb, ok := b.body.(*chunkedBody); ok {
		return cb.trailer
	}
	return nil
}

// errBodyClosed is the error of a Read after Close.
var errBodyClosed = errors.New("read on a closed response body")

func (b *Body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	if err != nil {
		b.pc.finish(b.ctx, b.stop, b.keep && err == io.EOF)
		if err != io.EOF && b.ctx.Err() != nil {
			err = context.Cause(b.ctx) // the exchange was aborted
		}
		b.err = err
	}
	return n, err
}

// Close ends the exchange; a body not read to its end closes the
// connection (it is not drained: it may never end).
func (b *Body) Close() error {
	if !b.mu.TryLock() {
		// A Read is blocked on the connection: make it fail.
		_ = b.pc.c.SetDeadline(aLongTimeAgo)
		b.mu.Lock()
	}
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = errBodyClosed
		b.pc.finish(b.ctx, b.stop, false)
	}
	return nil
}
