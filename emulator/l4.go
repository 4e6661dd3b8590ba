package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// L4 timeouts where the Gateway API leaves them to the implementation.
const (
	// DefaultTCPIdleTimeout closes a TCPRoute connection after this long
	// without a byte in either direction.
	DefaultTCPIdleTimeout = time.Hour
	// DefaultUDPSessionTimeout ends a UDPRoute session (one client address)
	// after this long without a datagram in either direction.
	DefaultUDPSessionTimeout = 60 * time.Second
	// l4DialTimeout bounds connecting to one TCP backend endpoint.
	l4DialTimeout = 5 * time.Second
)

// l4Server serves a TCP or UDP listener in place of an http.Server.
type l4Server interface {
	// serve runs until stop.
	serve()
	// stop stops accepting connections (TCP) or ends every session (UDP)
	// and closes the socket, so the port can be bound again at once.
	stop()
	// drain waits for open connections until ctx is done, then closes
	// what is left with the given end.
	drain(ctx context.Context, end EndReason)
}

var (
	_ l4Server = (*tcpProxy)(nil)
	_ l4Server = (*udpProxy)(nil)
)

// isL4 reports whether a listener protocol is served by an l4Server.
func isL4(p table.ProtocolType) bool {
	return p == table.TCPProtocolType || p == table.UDPProtocolType
}

// drainRetiredL4 lets a retired L4 listener's connections finish until ctx
// is done, unless Close ends them first.
func (s *Server) drainRetiredL4(ctx context.Context, bl *boundListener) {
	s.l4Retired.Store(bl, struct{}{})
	defer s.l4Retired.Delete(bl)
	bl.l4.drain(ctx, EndListenerRetired)
}

// stopRetiredL4 closes the connections of every retired L4 listener.
func (s *Server) stopRetiredL4() {
	s.l4Retired.Range(func(k, _ any) bool {
		k.(*boundListener).l4.drain(closedContext, EndGatewayStopped)
		return true
	})
}

// streamRoutes is the compiled StreamRoute that serves a TCP or UDP port:
// the first route of the first listener that has one.
type streamRoutes struct {
	listener string
	r        *table.StreamRoute
	at       *RuleAt // Trace.Matched
	source   string
	weightedBackends
}

// stream compiles the route that serves an L4 port (nil: none attached).
func (c *compiler) stream(pr *portRoutes) *streamRoutes {
	for _, lr := range pr.listeners {
		for _, r := range lr.l.StreamRoutes {
			if r == nil {
				continue
			}
			sr := &streamRoutes{listener: lr.l.Name, r: r, at: ruleAt(r.Route, r.Index), source: sourceString(r.Source)}
			sr.picks = c.pool.picks
			for _, b := range r.Backends {
				if b == nil {
					continue
				}
				sr.add(c.backend(b), b.Weight)
			}
			return sr
		}
	}
	return nil
}

func sourceString(s table.Source) string {
	if s.File == "" {
		return ""
	}
	if s.Line > 0 {
		return s.File + ":" + strconv.Itoa(s.Line)
	}
	return s.File
}

// weightedBackends are a route's or a rule's backends, picked at random
// by weight.
type weightedBackends struct {
	backends []*backendRoutes
	// cum holds cumulative weights parallel to backends; total is their sum.
	cum   []int32
	total int32
	// picks decides the picks (nil: at random).
	picks *pickSource
}

// add appends a backend; a weight of 0 (or less) is never picked.
func (w *weightedBackends) add(b *backendRoutes, weight int32) {
	w.backends = append(w.backends, b)
	if weight > 0 {
		w.total += weight
	}
	w.cum = append(w.cum, w.total)
}

// pick chooses a backend by weight; nil when every weight is 0.
func (w *weightedBackends) pick() *backendRoutes {
	if w.total <= 0 {
		return nil
	}
	n := w.picks.int32n(w.total)
	for i, c := range w.cum {
		if n < c {
			return w.backends[i]
		}
	}
	return nil
}

// acceptLoop accepts connections on ln and hands each to handle until ln is
// closed, backing off briefly when accepting fails (out of file descriptors
// and the like).
func acceptLoop(ln net.Listener, handle func(net.Conn)) {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		handle(c)
	}
}

// l4Trace starts the trace of a connection or session on an L4 port that
// arrived on address ("" in Explain).
func l4Trace(address string, pr *portRoutes, proto, client string, now time.Time) Trace {
	t := Trace{Time: now, Client: client, Address: address, Proto: proto}
	if pr != nil {
		t.Gateway, t.Port = pr.gateway.Name, pr.port.Port
		if len(pr.listeners) > 0 {
			t.Listener = pr.listeners[0].l.Name
		}
	}
	return t
}

// decideL4 picks the backend of a new connection or session. It returns
// nil with t.Reason set when the connection must be refused.
func decideL4(pr *portRoutes, t *Trace, kind string) *backendRoutes {
	if pr == nil {
		t.Reason = "no Gateway serves this address and port"
		return nil
	}
	sr := pr.stream
	if sr == nil {
		t.Reason = fmt.Sprintf("no %s is attached to the listener", kind)
		return nil
	}
	t.Listener, t.Rule, t.Matched, t.Route, t.Source = sr.listener, sr.r.Name, sr.at, sr.r.Route.String(), sr.source
	b := sr.pick()
	if b == nil {
		t.Reason = "every backendRef of " + sr.r.Name + " has weight 0"
		if len(sr.backends) == 0 {
			t.Reason = sr.r.Name + " has no backendRefs"
		}
		return nil
	}
	t.Backend, t.Service = b.b.Name, b.service
	if b.b.Target != nil {
		t.Target, t.Why = b.b.Target.Kind, b.b.Target.Why
	}
	switch {
	case b.b.Invalid != "" || b.up == nil:
		t.Reason = "backend " + b.b.Name + " is invalid: " + b.b.Invalid
		return nil
	case b.up.echo == nil && len(b.up.addrs) == 0:
		t.Reason = "backend " + b.b.Name + " has no endpoints"
		return nil
	}
	return b
}

// bindL4 binds a TCP or UDP listener and its proxy.
func (s *Server) bindL4(pr *portRoutes, key bindKey) (*boundListener, error) {
	bl := &boundListener{key: key, protocol: pr.protocol}
	if pr.protocol == table.UDPProtocolType {
		pc, moved, err := s.bindPacket(key.addr, key.port)
		if err != nil {
			return nil, err
		}
		bl.bound, bl.fallback, bl.moved = pc.LocalAddr().String(), moved != "", moved
		bl.l4 = newUDPProxy(s, bl, pc)
		return bl, nil
	}
	ln, moved, err := s.bind(key.addr, key.port)
	if err != nil {
		return nil, err
	}
	bl.bound, bl.fallback, bl.moved = ln.Addr().String(), moved != "", moved
	bl.ln = s.limitConns(bl, ln, "TCP") // limits.go
	bl.l4 = newTCPProxy(s, bl, bl.ln)
	return bl, nil
}

// tcpProxy serves a TCP listener: each connection goes, whole, to one
// backend of the port's TCPRoute, chosen by weight.
type tcpProxy struct {
	s    *Server
	bl   *boundListener
	ln   net.Listener
	idle time.Duration

	mu      sync.Mutex
	stopped bool
	conns   map[*tcpConn]struct{}
	wg      sync.WaitGroup
}

func newTCPProxy(s *Server, bl *boundListener, ln net.Listener) *tcpProxy {
	idle := s.cfg.TCPIdleTimeout
	if idle <= 0 {
		idle = DefaultTCPIdleTimeout
	}
	return &tcpProxy{s: s, bl: bl, ln: ln, idle: idle, conns: map[*tcpConn]struct{}{}}
}

func (p *tcpProxy) serve() {
	acceptLoop(p.ln, func(c net.Conn) {
		tc := &tcpConn{p: p, client: c, start: time.Now()}
		if !p.track(tc) {
			_ = c.Close()
			return
		}
		go tc.run()
	})
}

// track registers a new connection; false once the proxy is stopped.
func (p *tcpProxy) track(tc *tcpConn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.conns[tc] = struct{}{}
	p.wg.Add(1)
	return true
}

func (p *tcpProxy) untrack(tc *tcpConn) {
	p.mu.Lock()
	delete(p.conns, tc)
	p.mu.Unlock()
	p.wg.Done()
}

func (p *tcpProxy) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	_ = p.ln.Close()
}

func (p *tcpProxy) drain(ctx context.Context, end EndReason) {
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	p.mu.Lock()
	for tc := range p.conns {
		tc.abort(end)
	}
	p.mu.Unlock()
	<-done
}

// tcpConn is one client connection through a tcpProxy.
type tcpConn struct {
	p        *tcpProxy
	client   net.Conn
	start    time.Time
	trace    Trace
	activity atomic.Int64 // unix nanoseconds of the last byte either way

	mu       sync.Mutex
	upstream net.Conn
	aborted  EndReason // why the gateway closed the connection, if it did
}

func (tc *tcpConn) run() {
	defer tc.p.untrack(tc)
	pr := tc.p.bl.routes.Load()
	tc.trace = l4Trace(tc.p.bl.bound, pr, "TCP", tc.client.RemoteAddr().String(), tc.start)
	t := &tc.trace
	tc.touch()
	defer func() {
		_ = tc.client.Close()
		t.Duration = Duration(time.Since(tc.start))
		tc.p.s.traces.record(*t)
	}()
	b := decideL4(pr, t, "TCPRoute")
	if b == nil {
		t.End = EndRefused
		return
	}
	var up net.Conn
	if b.up.echo != nil {
		// The echo backend answers in process (echotls.go, echol4.go).
		t.Upstream = "echo"
		gw, echoSide := wire.Pipe()
		go echosrv.ServeStream(echoSide, b.up.echo, pr.gateway.Gateway.Name, nil, tc.idleTimeout())
		up = gw
	} else {
		c, err := b.up.dialEndpoints(l4DialTimeout, &tc.trace)
		if err != nil {
			t.Reason, t.End = err.Error(), EndRefused
			return
		}
		up = c
	}
	tc.mu.Lock()
	tc.upstream = up
	aborted := tc.aborted
	tc.mu.Unlock()
	if aborted != "" {
		_ = up.Close()
		t.End = aborted
		return
	}
	upStart := time.Now()
	tc.splice(up)
	t.UpstreamDuration = Duration(time.Since(upStart))
}

// dialEndpoints connects to the backend's endpoints round-robin, trying
// each once, and records the endpoint and attempts in t.
func (up *upstream) dialEndpoints(timeout time.Duration, t *Trace) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	var errs []error
	first := up.nextAddr()
	for i := range up.addrs {
		addr := up.addrs[(first+i)%len(up.addrs)]
		t.Upstream = addr
		t.Attempts++
		c, err := d.Dial("tcp", addr)
		if err == nil {
			return c, nil
		}
		errs = append(errs, fmt.Errorf("upstream %s: %w", addr, err))
	}
	return nil, errors.Join(errs...)
}

// splice copies both ways until both sides have closed, one side fails, or
// the connection is idle too long. A side that half-closes (CloseWrite) is
// passed on as a half-close, so the other side can still answer.
func (tc *tcpConn) splice(up net.Conn) {
	t := &tc.trace
	var in, out atomic.Int64
	var eofOrder atomic.Int32
	results := make(chan copyResult, 2)
	go backendWriter{tc: tc, dst: up, src: tc.client, n: &in, eofOrder: &eofOrder}.run(results)
	go clientWriter{tc: tc, dst: tc.client, src: up, n: &out, eofOrder: &eofOrder}.run(results)
	var first *copyResult
	eofs := make([]string, 0, 2)
	for range 2 {
		r := <-results
		if r.err == nil {
			// Results arrive in any order (a half-close lets the other
			// side finish before this result is sent); the order of the
			// EOFs themselves is what says who closed first.
			eofs = append(eofs, r.from)
			if r.eof == 1 && len(eofs) == 2 {
				eofs[0], eofs[1] = eofs[1], eofs[0]
			}
			continue
		}
		if first == nil {
			first = &r
			_ = tc.client.Close()
			_ = up.Close()
		}
	}
	_ = up.Close()
	t.BytesIn, t.BytesOut = in.Load(), out.Load()
	tc.finish(first, eofs)
}

// finish sets how the connection ended.
func (tc *tcpConn) finish(first *copyResult, eofs []string) {
	t := &tc.trace
	tc.mu.Lock()
	aborted := tc.aborted
	tc.mu.Unlock()
	switch {
	case aborted != "":
		t.End = aborted
	case first != nil && errors.Is(first.err, errIdle):
		t.End = EndIdleTimeout
		t.Reason = fmt.Sprintf("no traffic for %s (idle timeout)", tc.idleTimeout())
	case first != nil:
		t.End = EndBackendError
		if first.from == "client" {
			t.End = EndClientClosed
		}
		t.Reason = first.err.Error()
	case len(eofs) > 0 && eofs[0] == "client":
		t.End = EndClientClosed
	case len(eofs) > 0:
		t.End = EndBackendClosed
	}
}

// abort closes the connection from the gateway's side.
func (tc *tcpConn) abort(end EndReason) {
	tc.mu.Lock()
	if tc.aborted == "" {
		tc.aborted = end
	}
	up := tc.upstream
	tc.mu.Unlock()
	_ = tc.client.Close()
	if up != nil {
		_ = up.Close()
	}
}

func (tc *tcpConn) touch() { tc.activity.Store(time.Now().UnixNano()) }

// idleFor is how long the connection has been without traffic.
func (tc *tcpConn) idleFor() time.Duration {
	return time.Since(time.Unix(0, tc.activity.Load()))
}

// errIdle ends a copy when neither direction moved for the idle timeout.
var errIdle = errors.New("idle timeout")

// copyResult is how one direction of a spliced connection ended: err is nil
// when its source half-closed cleanly.
type copyResult struct {
	from string
	err  error
	// eof is the order in which this direction saw its EOF among the
	// connection's directions (1: first), taken before the half-close is
	// passed on; 0 when err is set.
	eof int32
}

// streamCopy copies src to dst, counting bytes in n. On EOF it half-closes
// dst. Reads and writes are bounded by the idle timeout: a deadline that
// passes while the other direction moved is extended.
type streamCopy struct {
	tc       *tcpConn
	dst, src net.Conn
	n        *atomic.Int64
	// from names the source side in results ("client" or "backend").
	from string
	// eofOrder numbers the EOFs of the connection's directions (nil: the
	// echo, which has one direction).
	eofOrder *atomic.Int32
}

// backendWriter copies the client's bytes to the backend.
type backendWriter streamCopy

func (c backendWriter) run(results chan<- copyResult) {
	c.from = "client"
	results <- streamCopy(c).copy()
}

// clientWriter copies the backend's bytes (or, for echo, the client's own)
// to the client.
type clientWriter streamCopy

func (c clientWriter) run(results chan<- copyResult) {
	if c.from == "" {
		c.from = "backend"
	}
	results <- streamCopy(c).copy()
}

func (c streamCopy) copy() copyResult {
	bp := l4Buffers.Get().(*[]byte)
	defer l4Buffers.Put(bp)
	buf := *bp
	idle := c.tc.idleTimeout() // policy.go: a listener policy's stream.idleTimeout, else the proxy's
	for {
		_ = c.src.SetReadDeadline(time.Now().Add(idle))
		n, err := c.src.Read(buf)
		if n > 0 {
			c.tc.touch()
			_ = c.dst.SetWriteDeadline(time.Now().Add(idle))
			w, werr := c.dst.Write(buf[:n])
			c.n.Add(int64(w))
			if werr != nil {
				if errors.Is(werr, os.ErrDeadlineExceeded) {
					werr = errIdle
				}
				return copyResult{from: c.from, err: fmt.Errorf("writing what the %s sent: %w", c.from, werr)}
			}
			c.tc.touch()
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			if c.tc.idleFor() >= idle {
				return copyResult{from: c.from, err: errIdle}
			}
		case errors.Is(err, io.EOF):
			var order int32 = 1
			if c.eofOrder != nil {
				order = c.eofOrder.Add(1)
			}
			if cw, ok := c.dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			return copyResult{from: c.from, eof: order}
		default:
			return copyResult{from: c.from, err: fmt.Errorf("reading from the %s: %w", c.from, err)}
		}
	}
}

var l4Buffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
