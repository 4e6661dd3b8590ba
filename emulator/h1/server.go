package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gwdev/gwdev/emulator/internal/wire"
)

// The fast HTTP/1.1 path of HTTP and HTTPS listeners: one goroutine per client
// connection reads a request with its own parser into reused buffers,
// runs the same handler as net/http (Server.Handler) with a response writer
// of its own, and writes the answer in one write. It serves the common
// case only: an HTTP/1.1 request without a body, Expect, Upgrade or
// anything else net/http's server treats specially (parseFastRequest says
// what). Any other request, and anything unusual on the wire before a
// complete request header, hands the connection — with the bytes read so
// far replayed — to the listener's net/http server, which serves the rest
// of it exactly as it serves every other connection.
//
// What net/http does per request and the fast path does not: a background
// read of the client connection while the handler runs (the fast path
// starts one only when the handler takes longer than ClientWatchAfter),
// a per-request bufio.Writer and response object from pools, and — when
// the handler released the last request (ResponseWriter.Release) — a new
// request, context, header map and URL (slot.go).

const (
	// fastReadBufSize is the size of a connection's read buffer: a request
	// header that does not fit goes to net/http (whose limit is 1 MiB).
	fastReadBufSize = 4 << 10
	// fastWriteBufSize is the size of a connection's write buffer; a
	// response that fits is sent in one write.
	fastWriteBufSize = 4 << 10
	// ClientWatchAfter is how long a handler runs before the connection is
	// watched for the client leaving (which cancels the request, as
	// net/http's background read does from the start).
	ClientWatchAfter = 50 * time.Millisecond
	// shutdownNewConnGrace is how long a connection that has not sent a
	// request yet is left alone by a shutdown (net/http's rule for new
	// connections).
	shutdownNewConnGrace = 5 * time.Second
)

// Server is the fast path of one bound listener. Its fields are set before
// the first Start and not changed afterwards.
type Server struct {
	// Handler serves every request the fast path reads (the listener's
	// net/http server's handler).
	Handler http.Handler
	// ConnContext returns the context a connection's requests start
	// from, given the connection and when it was accepted (nil:
	// context.Background()).
	ConnContext func(c net.Conn, start time.Time) context.Context
	// Handoff is what the listener's net/http server accepts from: the
	// connections the fast path hands over.
	Handoff *wire.Queue
	// ReadHeaderTimeout and IdleTimeout are net/http's server timeouts of
	// the same names, which the fast path applies as net/http would.
	ReadHeaderTimeout, IdleTimeout time.Duration

	// handedOver counts the connections handed to net/http.
	handedOver atomic.Int64

	mu    sync.Mutex
	conns map[*fastConn]struct{}
	// shutting is set once the listener shuts down: idle connections
	// close, busy ones close after their response.
	shutting atomic.Bool
	wg       sync.WaitGroup
}

// RawReadable is a plain client connection that lets the fast path read
// its socket with system calls of its own (a *net.TCPConn needs not say
// so): CountRead is told the bytes read that way, which its Read would
// have seen. The connection's Read is not called once the connection
// carried a request.
type RawReadable interface {
	net.Conn
	syscall.Conn
	CountRead(p []byte)
}

// HandedOver is the number of connections handed to net/http so far.
func (f *Server) HandedOver() int64 { return f.handedOver.Load() }

// Start serves a new connection, accepted at start; a connection whose
// TLS handshake is done is a *tls.Conn.
func (f *Server) Start(c net.Conn, start time.Time) {
	fc := &fastConn{f: f, c: c, start: start, raw: newRawClient(c)}
	if fc.raw != nil {
		fc.rawFn = fc.rawStep
	}
	f.mu.Lock()
	if f.shutting.Load() {
		f.mu.Unlock()
		f.Handoff.Push(c) // closed once net/http shuts down too
		return
	}
	if f.conns == nil {
		f.conns = map[*fastConn]struct{}{}
	}
	f.conns[fc] = struct{}{}
	f.wg.Add(1)
	f.mu.Unlock()
	go fc.serve()
}

// Stop stops the fast path gracefully: idle connections close now, busy
// ones after their response, until ctx is done; then every one is closed.
// The net/http server is shut down separately. A nil Server has nothing to
// stop.
func (f *Server) Stop(ctx context.Context) error {
	if f == nil {
		return nil
	}
	f.shutting.Store(true)
	wait := 5 * time.Millisecond
	for {
		if f.closeIdle() == 0 {
			f.wg.Wait()
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.closeAll()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// closeIdle closes the connections waiting for a request and returns how
// many are left.
func (f *Server) closeIdle() int {
	f.mu.Lock()
	now := time.Now()
	var idle []*fastConn
	for fc := range f.conns {
		if fc.idle.Load() && (fc.requests.Load() > 0 || now.Sub(fc.start) > shutdownNewConnGrace) {
			idle = append(idle, fc)
		}
	}
	left := len(f.conns)
	f.mu.Unlock()
	for _, fc := range idle {
		fc.kill()
	}
	return left
}

// closeAll closes every connection.
func (f *Server) closeAll() {
	f.mu.Lock()
	all := make([]*fastConn, 0, len(f.conns))
	for fc := range f.conns {
		all = append(all, fc)
	}
	f.mu.Unlock()
	for _, fc := range all {
		fc.kill()
	}
}

// kill closes the connection from another goroutine (a shutdown). One
// served inside a raw read (serveRaw) is shut down first, which a handler's
// writes and the client watch see at once, and closed in the background:
// its Close waits for the raw read, which the handler runs in, to end.
func (fc *fastConn) kill() {
	if fc.raw == nil {
		_ = fc.c.Close()
		return
	}
	fc.raw.shutdown()
	go func() { _ = fc.c.Close() }()
}

// closeOwn closes the connection from its own goroutine (a write broke
// off). Inside a raw read a Close would wait for that raw read to end: the
// socket is shut down instead, and serve closes it.
func (fc *fastConn) closeOwn() {
	if fc.src.raw != nil {
		fc.raw.shutdown()
		return
	}
	_ = fc.c.Close()
}

func (f *Server) forget(fc *fastConn) {
	f.mu.Lock()
	delete(f.conns, fc)
	f.mu.Unlock()
	f.wg.Done()
}

// fastConn is one client connection on the fast path.
type fastConn struct {
	f     *Server
	c     net.Conn
	start time.Time
	src   watchedReader
	br    *bufio.Reader
	bw    *bufio.Writer
	// bodyBuf is the response body's buffer (ResponseWriter.w), reused.
	bodyBuf *bufio.Writer
	// spare is the last request's response writer when its handler
	// released it (ResponseWriter.Release), for the next request (nil:
	// none).
	spare *ResponseWriter
	// fields holds a forwarded answer's header fields
	// (ResponseWriter.WriteForwarded), reused.
	fields []Field
	// werr is the first error writing to the client.
	werr error
	// idle is set while the connection waits for the first bytes of a
	// request.
	idle     atomic.Bool
	requests atomic.Int64
	ctx      context.Context
	// tlsState is the TLS connection's state (nil: plain HTTP).
	tlsState *tls.ConnectionState
	// remote is the client's address, made at the first request.
	remote string
	// lastHead is the last request head read (sameOrString).
	lastHead string
	// watch, when it fires, starts watching the client (watchClient)
	// once the running request is ClientWatchAfter old. It is armed by
	// the first request that finds it unarmed and re-arms itself while
	// requests run, so that a request costs no timer change (watchArmed,
	// under watchMu).
	watch      *time.Timer
	watchArmed bool
	watchMu    sync.Mutex
	// cancel ends the current request's context (nil: none running);
	// reqStart is when that request started.
	cancel   context.CancelFunc
	reqStart time.Time
	// watching is closed by the watch once it stopped reading.
	watching chan struct{}
	// slot is what the next request is made of (nil: a new one is
	// made): the last request's, emptied, when its handler released it.
	slot *reqSlot
	// answerBody is the body of the answer the running request's
	// exchange got (ExchangeFor), reused by the next request.
	answerBody Body
	// upstream is the pool connection of the running request's exchange
	// (Pool.ExchangeFor; nil: none): the request's end aborts it.
	upstream *h1Conn
	// watchable is set when the connection's context never ends (only the
	// requests' do), so that ExchangeFor may watch the client instead.
	watchable bool
	// writeDeadline is the write deadline set on the connection (zero:
	// none). A handler's deadline stays after its response (clearing and
	// setting it again costs a timer change per request): the next
	// request inherits it (inherited), and it is cleared before the
	// fast path writes for a request whose handler neither set nor
	// adopted it (ResponseWriter.AdoptWriteDeadline), and before a
	// hand-over to net/http.
	writeDeadline time.Time
	inherited     bool
	// idleArmed is set while the connection's read deadline is an idle
	// deadline set by awaitIdle (no later than idleUntil, the one due
	// now): the next wait for a request keeps it (awaitIdle).
	idleArmed bool
	idleUntil time.Time
	// hdrArmed is set while the connection's read deadline is the request
	// header's deadline, hdrDeadline (armHeader).
	hdrArmed    bool
	hdrDeadline time.Time

	// raw reads the socket with system calls of its own once the
	// connection carried a request (serveRaw; nil: a TLS connection, or one
	// that must be read through its Read). rawFn is rawStep, made once;
	// rawEnd is how rawStep ended; idleWait is set while rawStep waits for
	// a request's first bytes.
	raw      *rawClient
	rawFn    func(fd uintptr) bool
	rawEnd   rawEnd
	idleWait bool
	// rawMode is set once serveRaw serves the connection (under
	// watchMu); watchConn is then the duplicate of the connection the
	// client watch reads (nil: none made yet; under watchMu).
	rawMode   bool
	watchConn net.Conn
}

// rawEnd is how serveRaw's callback ended.
type rawEnd int

const (
	rawWaitFailed rawEnd = iota // the wait for the socket failed (a deadline, a close)
	rawClose                    // the connection closes
	rawHandOver                 // the connection goes to net/http
)

var fastReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, fastReadBufSize) }}
var fastWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, fastWriteBufSize) }}

// serve serves the connection's requests until it closes or is handed to
// net/http.
func (fc *fastConn) serve() {
	handedOver := false
	defer func() {
		// A handler's panic (http.ErrAbortHandler when a response breaks
		// off) ends the connection, as net/http ends it; net/http's log
		// of it is discarded here too.
		_ = recover()
		if fc.watch != nil {
			fc.stopWatch()
			fc.watch.Stop()
		}
		fc.watchMu.Lock()
		if fc.watchConn != nil {
			_ = fc.watchConn.Close()
		}
		fc.watchMu.Unlock()
		fc.release()
		if !handedOver {
			_ = fc.c.Close()
		}
		fc.f.forget(fc)
	}()
	fc.src = watchedReader{c: fc.c}
	if tc, ok := fc.c.(*tls.Conn); ok {
		st := tc.ConnectionState()
		fc.tlsState = &st
	} else {
		fc.src.limit = len("PRI * HTTP/2.0")
	}
	fc.br = fastReaders.Get().(*bufio.Reader)
	fc.br.Reset(&fc.src)
	fc.bw = fastWriters.Get().(*bufio.Writer)
	fc.bw.Reset(connErrorWriter{fc})
	fc.ctx = context.Background()
	if fc.f.ConnContext != nil {
		fc.ctx = fc.f.ConnContext(fc.c, fc.start)
	}
	fc.watchable = fc.ctx.Done() == nil
	for {
		if fc.raw != nil && fc.requests.Load() > 0 {
			var hdrDeadline time.Time
			handedOver, hdrDeadline = fc.serveRaw()
			if handedOver {
				fc.handOver(hdrDeadline)
			}
			return
		}
		req, hdrDeadline, ok := fc.readRequest()
		if !ok {
			return
		}
		if req == nil {
			handedOver = true
			fc.handOver(hdrDeadline)
			return
		}
		if !fc.serveRequest(req) {
			return
		}
	}
}

// release returns the connection's buffers to their pools.
func (fc *fastConn) release() {
	if fc.br != nil {
		fc.br.Reset(nil)
		fastReaders.Put(fc.br)
	}
	if fc.bw != nil {
		fc.bw.Reset(nil)
		fastWriters.Put(fc.bw)
	}
	fc.br, fc.bw = nil, nil
}

// readRequest waits for the next request and parses its header. ok false:
// the connection ends (closed silently, as net/http does between
// requests). req nil with ok: the connection goes to net/http; hdrDeadline
// is the header deadline running (zero: none yet).
func (fc *fastConn) readRequest() (req *http.Request, hdrDeadline time.Time, ok bool) {
	n := fc.requests.Load()
	fc.idle.Store(true)
	fc.hdrArmed, fc.hdrDeadline = true, time.Time{}
	if n == 0 {
		fc.hdrDeadline = fc.start.Add(fc.f.ReadHeaderTimeout)
		_ = fc.c.SetReadDeadline(fc.hdrDeadline)
		if _, err := fc.br.Peek(1); err != nil {
			fc.idle.Store(false)
			return nil, fc.hdrDeadline, !fc.f.shutting.Load() // net/http traces it
		}
	} else {
		if !fc.awaitIdle() {
			return nil, time.Time{}, false
		}
		// The header deadline is set only when the header needs another
		// read or the connection goes to net/http (armHeader): a header
		// that came whole needs none, and setting it costs a timer change
		// (and reading the clock).
		fc.hdrArmed = false
	}
	fc.idle.Store(false)
	if fc.f.shutting.Load() {
		return nil, fc.hdrDeadline, false
	}
	req, _ = fc.readHead() // reads wait here: never told to
	return req, fc.hdrDeadline, true
}

// readHead parses the request head in the buffer, reading more while it
// is incomplete: the request when the fast path takes it; nil with wait
// when the raw reader has nothing more now (serveRaw then waits); nil
// otherwise when the connection goes to net/http (fc.hdrDeadline is the
// header deadline running, zero: none).
func (fc *fastConn) readHead() (req *http.Request, wait bool) {
	for {
		buf, _ := fc.br.Peek(fc.br.Buffered())
		head := sameOrString(&fc.lastHead, buf) // the request's fields are substrings
		end := scanHeader(head)
		if end < 0 {
			fc.armHeader()
			return nil, false // net/http answers at once
		}
		if end > 0 {
			if fc.slot == nil {
				fc.slot = newReqSlot(fc.ctx)
			}
			r := parseFastRequest(head[:end], fc.slot)
			if r == nil {
				fc.armHeader()
				return nil, false
			}
			_, _ = fc.br.Discard(end)
			if fc.remote == "" {
				fc.remote = fc.c.RemoteAddr().String()
			}
			r.RemoteAddr, r.TLS = fc.remote, fc.tlsState
			return r, false
		}
		fc.armHeader()
		if fc.br.Buffered() == fc.br.Size() {
			return nil, false // a header this long: net/http
		}
		if _, err := fc.br.Peek(fc.br.Buffered() + 1); err != nil {
			return nil, err == errWouldBlock // else net/http answers as it would have
		}
	}
}

// armHeader sets the header deadline, unless it is set already.
func (fc *fastConn) armHeader() {
	if !fc.hdrArmed {
		fc.hdrArmed = true
		fc.idleArmed = false
		fc.hdrDeadline = time.Now().Add(fc.f.ReadHeaderTimeout)
		_ = fc.c.SetReadDeadline(fc.hdrDeadline)
	}
}

// errWouldBlock is what the raw reader returns when the socket has nothing
// to read now.
var errWouldBlock = errors.New("nothing to read now")

// serveRaw serves the connection's requests once it carried one, each wait
// for bytes inside one raw read of its socket (rawClient): rawStep reads,
// runs the handler and writes the answer inside the raw read's callback and
// waits only when its last read emptied the socket, so the read after an
// answer that would find nothing (and park) is not made. handOver: the
// connection goes to net/http, hdrDeadline being the header deadline
// running.
func (fc *fastConn) serveRaw() (handOver bool, hdrDeadline time.Time) {
	fc.watchMu.Lock()
	fc.rawMode = true
	fc.watchMu.Unlock()
	fc.src.raw, fc.src.limit = fc.raw, 0
	fc.hdrArmed, fc.hdrDeadline, fc.idleWait = false, time.Time{}, false
	fc.armIdle() // the read deadline may be the first request's header deadline
	for {
		fc.rawEnd = rawWaitFailed
		err := fc.raw.wait(fc.rawFn)
		fc.idle.Store(false)
		switch {
		case fc.rawEnd == rawClose:
			return false, time.Time{}
		case fc.rawEnd == rawHandOver:
			return true, fc.hdrDeadline
		case fc.hdrArmed:
			return true, fc.hdrDeadline // the header's wait failed: net/http answers as it would have
		}
		var ne net.Error
		if err == nil || !errors.As(err, &ne) || !ne.Timeout() || !time.Now().Before(fc.idleUntil) {
			return false, time.Time{}
		}
		_ = fc.c.SetReadDeadline(fc.idleUntil) // an earlier idle deadline fired
	}
}

// rawStep is serveRaw's callback, inside a raw read of the socket fd: it
// serves every request it can read without waiting. false: wait until the
// socket is readable (the raw read calls it again); true: done, fc.rawEnd
// says how.
func (fc *fastConn) rawStep(fd uintptr) bool {
	fc.raw.enter(fd)
	for {
		if !fc.hdrArmed {
			// A request's first bytes, within the idle timeout.
			if _, err := fc.br.Peek(4); err != nil {
				if err != errWouldBlock {
					fc.rawEnd = rawClose
					return true
				}
				if !fc.idleWait {
					fc.idleWait = true
					fc.armIdle()
				}
				fc.idle.Store(true)
				return false
			}
			fc.idle.Store(false)
			fc.idleWait = false
			if fc.f.shutting.Load() {
				fc.rawEnd = rawClose
				return true
			}
		}
		req, wait := fc.readHead()
		if wait {
			return false
		}
		if req == nil {
			fc.rawEnd = rawHandOver
			return true
		}
		fc.hdrArmed, fc.hdrDeadline = false, time.Time{}
		if !fc.serveRequest(req) {
			fc.rawEnd = rawClose
			return true
		}
	}
}

// awaitIdle waits up to the idle timeout for the next request's first
// bytes; false: none came (the timeout, the client closed, an error).
// The idle deadline is set only when the connection's read deadline is
// not an earlier idle deadline already (a deadline change is a runtime
// timer change and two clock reads): an earlier one that fires while the
// real one (idleUntil) is still ahead is moved to it and the wait goes on,
// so the connection closes IdleTimeout after the request's start to wait,
// as when the deadline is set every time.
func (fc *fastConn) awaitIdle() bool {
	fc.armIdle()
	for {
		_, err := fc.br.Peek(4)
		if err == nil {
			return true
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !time.Now().Before(fc.idleUntil) {
			return false
		}
		_ = fc.c.SetReadDeadline(fc.idleUntil) // an earlier idle deadline fired
	}
}

// armIdle starts the idle timeout: the connection closes when no request
// starts before fc.idleUntil. The read deadline is set only when it is not
// an (earlier) idle deadline already (see awaitIdle).
func (fc *fastConn) armIdle() {
	fc.idleUntil = clockAfter(fc.reqStart).Add(fc.f.IdleTimeout) // one clock read after a request
	if !fc.idleArmed {
		fc.idleArmed = true
		_ = fc.c.SetReadDeadline(fc.idleUntil)
	}
}

// sameOrString returns last when it holds b's bytes (a keep-alive client
// or backend sends the same head again and again), else b as a new string,
// which becomes last: the one allocation of a head, made once per head
// that changed. Strings never change, so the head and the substrings made
// of it are the same whichever copy holds the bytes.
func sameOrString(last *string, b []byte) string {
	if string(b) == *last { // compared without a copy
		return *last
	}
	*last = string(b)
	return *last
}

// handOver gives the connection to the listener's net/http server, the
// bytes read so far first.
func (fc *fastConn) handOver(hdrDeadline time.Time) {
	if fc.slot != nil {
		fc.slot.cancel() // a parsed request net/http serves instead: its context's end
	}
	var rest []byte
	if n := fc.br.Buffered(); n > 0 {
		b, _ := fc.br.Peek(n)
		rest = append(rest, b...)
	}
	if fc.src.pending {
		rest = append(rest, fc.src.b[0])
	}
	if !fc.writeDeadline.IsZero() {
		_ = fc.c.SetWriteDeadline(time.Time{}) // net/http sets its own
		fc.writeDeadline = time.Time{}
	}
	fc.f.handedOver.Add(1)
	rc := &ReplayConn{Conn: fc.c, rest: rest, Served: fc.requests.Load(), Start: fc.start, clamp: hdrDeadline}
	if tc, ok := fc.c.(*tls.Conn); ok {
		fc.f.Handoff.Push(tlsReplayConn{rc, tc})
		return
	}
	fc.f.Handoff.Push(rc)
}

// serveRequest runs the handler for req and writes its answer; false: the
// connection closes.
// req is fc.slot's request: a released one leaves the slot, emptied, to
// the next request.
func (fc *fastConn) serveRequest(req *http.Request) bool {
	fc.requests.Add(1)
	slot := fc.slot
	w := newFastResponse(fc, req)
	fc.startWatch(slot.cancel)
	fc.inherited = !fc.writeDeadline.IsZero()
	fc.f.Handler.ServeHTTP(w, req)
	fc.stopWatch()
	slot.cancel()
	fc.abortUpstream()
	w.finish()
	again := w.reuse() && !fc.f.shutting.Load() && !fc.src.gone
	if w.released {
		fc.spare = w
	}
	if w.released && slot.reusable() {
		slot.reset()
	} else {
		fc.slot = nil
	}
	return again
}

// startWatch arms the watch of the client for the request running, unless
// it is armed already (it then fires for an earlier request and waits
// again for this one).
func (fc *fastConn) startWatch(cancel context.CancelFunc) {
	now := clockNow() // the wall clock too: the request's time in its trace
	fc.watchMu.Lock()
	defer fc.watchMu.Unlock()
	fc.cancel, fc.reqStart = cancel, now
	switch {
	case fc.watchArmed:
	case fc.watch == nil:
		fc.watch = time.AfterFunc(ClientWatchAfter, fc.watchClient) // it waits for watchMu
	default:
		fc.watch.Reset(ClientWatchAfter)
	}
	fc.watchArmed = true
}

// Started is when the fast path started the request (the clock read it
// makes for the client watch): the handler may take it as the request's
// start instead of reading the clock again.
func (w *ResponseWriter) Started() time.Time { return w.fc.reqStart }

// watchClient reads the client connection while a handler runs, like
// net/http's background read, once the request is ClientWatchAfter old:
// the client leaving cancels the request; a byte that arrives (a pipelined
// request) is kept for the next read.
func (fc *fastConn) watchClient() {
	fc.watchMu.Lock()
	if fc.cancel == nil {
		fc.watchArmed = false // no request runs: the next one arms it
		fc.watchMu.Unlock()
		return
	}
	if wait := ClientWatchAfter - time.Since(fc.reqStart); wait > 0 {
		fc.watch.Reset(wait) // armed for an earlier request
		fc.watchMu.Unlock()
		return
	}
	fc.watchArmed = false
	if fc.watching != nil || fc.src.pending || fc.br.Buffered() > 0 {
		// One watch runs already, or the next request is here already.
		fc.watchMu.Unlock()
		return
	}
	src := fc.c
	if fc.rawMode {
		// The handler runs inside a raw read, which holds the
		// connection's read lock: the watch reads a duplicate of it.
		if fc.watchConn == nil {
			wc, err := fc.raw.dup()
			if err != nil {
				closed, cancel := errors.Is(err, net.ErrClosed), fc.cancel
				if closed { // a shutdown closes it (kill)
					fc.src.gone = true // read by the request's goroutine after stopWatch
				}
				fc.watchMu.Unlock()
				if closed {
					cancel()
					fc.abortUpstream()
				}
				return // else no descriptor for it: this request goes unwatched
			}
			fc.watchConn = wc
		}
		src = fc.watchConn
	} else {
		_ = fc.c.SetReadDeadline(time.Time{}) // before stopWatch can end the read
	}
	done := make(chan struct{})
	fc.watching = done
	cancel := fc.cancel
	fc.watchMu.Unlock()
	defer close(done)
	n, err := src.Read(fc.src.b[:])
	if n == 1 {
		fc.src.pending = true
		return
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return // stopWatch ended the read
	}
	fc.src.gone = true
	cancel()
	fc.abortUpstream()
}

// watchUpstream makes the end of the running request, whose context ctx
// is, abort pc's exchange (see Pool.ExchangeFor); false: it cannot (the
// request ended already, another exchange is watched, the connection's
// context may end), ctx must be watched instead.
func (fc *fastConn) watchUpstream(ctx context.Context, pc *h1Conn) bool {
	if !fc.watchable {
		return false
	}
	fc.watchMu.Lock()
	defer fc.watchMu.Unlock()
	if fc.upstream != nil || ctx.Err() != nil {
		return false
	}
	fc.upstream = pc
	return true
}

// unwatchUpstream ends the watch of pc's exchange: true when the request's
// end had not aborted it (context.AfterFunc's stop).
func (fc *fastConn) unwatchUpstream(pc *h1Conn) bool {
	fc.watchMu.Lock()
	defer fc.watchMu.Unlock()
	if fc.upstream != pc {
		return false
	}
	fc.upstream = nil
	return true
}

// abortUpstream aborts the watched exchange, if any: the request ended
// (its context was cancelled just before).
func (fc *fastConn) abortUpstream() {
	fc.watchMu.Lock()
	pc := fc.upstream
	fc.upstream = nil
	fc.watchMu.Unlock()
	if pc != nil {
		pc.abort()
	}
}

// stopWatch ends the watch of the client: it waits for a read in progress
// to stop. The timer stays armed (see startWatch); one that fires with no
// request running disarms itself.
func (fc *fastConn) stopWatch() {
	fc.watchMu.Lock()
	fc.cancel = nil
	done := fc.watching
	fc.watching = nil
	raw, wc := fc.rawMode, fc.watchConn
	fc.watchMu.Unlock()
	if done == nil {
		// No watch reads; one that fires with no request running
		// returns at once.
		return
	}
	if raw {
		// The watch reads the duplicate: the connection's deadlines stay.
		_ = wc.SetReadDeadline(aLongTimeAgo)
		<-done
		_ = wc.SetReadDeadline(time.Time{})
		return
	}
	// A watch reads, possibly one an earlier firing of the timer started
	// late (its Stop above then reported nothing).
	_ = fc.c.SetReadDeadline(aLongTimeAgo)
	<-done
	_ = fc.c.SetReadDeadline(time.Time{})
	fc.idleArmed = false
}

// watchedReader is what a fast connection's bufio.Reader reads: the byte
// the client watch read first, then the connection.
type watchedReader struct {
	c net.Conn
	// raw, when set, reads the socket instead of c (serveRaw).
	raw     *rawClient
	b       [1]byte
	pending bool
	// gone is set when the client watch saw the client leave.
	gone bool
	// limit, while positive, bounds the bytes read: net/http reads a new
	// connection's first bytes up to the length of the HTTP/2 preface's
	// request line before anything else, and the connection's trace
	// shows the first read (conntrace.go).
	limit int
}

func (r *watchedReader) Read(p []byte) (int, error) {
	if r.pending && len(p) > 0 {
		p[0] = r.b[0]
		r.pending = false
		return 1, nil
	}
	if r.raw != nil {
		return r.raw.read(p)
	}
	if r.limit > 0 {
		p = p[:min(len(p), r.limit)]
		n, err := r.c.Read(p)
		r.limit -= n
		if err != nil {
			r.limit = 0
		}
		return n, err
	}
	return r.c.Read(p)
}

// connErrorWriter writes to the client and keeps the first error.
type connErrorWriter struct{ fc *fastConn }

func (w connErrorWriter) Write(p []byte) (int, error) {
	if w.fc.inherited {
		// The previous request's deadline, which this request's
		// handler did not adopt: the write has none, as after a clear.
		_ = w.fc.c.SetWriteDeadline(time.Time{})
		w.fc.writeDeadline, w.fc.inherited = time.Time{}, false
	}
	n, err := w.fc.c.Write(p)
	if err != nil && w.fc.werr == nil {
		w.fc.werr = err
	}
	return n, err
}

// ReplayConn is a connection handed to net/http: it reads the bytes the
// fast path read first. clamp, when set, is the header deadline already
// running: net/http's read deadlines do not extend it until it has read a
// request header (its first call clearing the deadline).
type ReplayConn struct {
	net.Conn
	rest []byte
	// Served is the number of requests the fast path served on it.
	Served int64
	// Start is when the connection was accepted.
	Start time.Time
	clamp time.Time
}

func (c *ReplayConn) Read(p []byte) (int, error) {
	if len(c.rest) > 0 {
		n := copy(p, c.rest)
		c.rest = c.rest[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// SetReadDeadline sets the read deadline, no later than the clamp.
func (c *ReplayConn) SetReadDeadline(t time.Time) error {
	if !c.clamp.IsZero() {
		if t.IsZero() {
			c.clamp = time.Time{}
		} else if t.After(c.clamp) {
			t = c.clamp
		}
	}
	return c.Conn.SetReadDeadline(t)
}

// Replayed returns the ReplayConn c is (nil: c was not handed over by the
// fast path).
func Replayed(c net.Conn) *ReplayConn {
	switch rc := c.(type) {
	case *ReplayConn:
		return rc
	case tlsReplayConn:
		return rc.ReplayConn
	}
	return nil
}

// tlsReplayConn is a ReplayConn over TLS: net/http takes a connection with
// a ConnectionState for an HTTPS one.
type tlsReplayConn struct {
	*ReplayConn
	tc *tls.Conn
}

// ConnectionState is the state of the connection's TLS session.
func (c tlsReplayConn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

// CloseWrite half-closes the connection.
func (c *ReplayConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
