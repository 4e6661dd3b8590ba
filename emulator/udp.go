package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
)

// maxDatagram is the largest UDP payload.
const maxDatagram = 64 << 10

// bindPacket listens for UDP on addr:port, or on addr:port+PortOffset when
// that fails.
func (s *Server) bindPacket(addr string, port int32) (pc net.PacketConn, moved string, err error) {
	pc, err = net.ListenPacket("udp", net.JoinHostPort(addr, strconv.Itoa(int(port))))
	if err == nil {
		return pc, "", nil
	}
	off := s.cfg.PortOffset
	if off <= 0 || int(port)+off > 65535 {
		return nil, "", err
	}
	alt := int(port) + off
	pc, err2 := net.ListenPacket("udp", net.JoinHostPort(addr, strconv.Itoa(alt)))
	if err2 != nil {
		return nil, "", fmt.Errorf("%w; fallback port %d: %w", err, alt, err2)
	}
	return pc, bindFailure(err), nil
}

// udpProxy serves a UDP listener. Datagrams from one client address form a
// session: its backend is chosen by weight when the session starts, and
// the backend's answers go back to that client from the listener's
// address. A session ends after the session timeout without a datagram in
// either direction, and is traced then.
type udpProxy struct {
	s       *Server
	bl      *boundListener
	pc      net.PacketConn
	timeout time.Duration
	// max bounds the sessions (Config.MaxUDPSessions).
	max int

	mu       sync.Mutex
	stopped  bool
	sessions map[string]*udpSession
	// readers counts the goroutines reading backend answers.
	readers sync.WaitGroup
}

func newUDPProxy(s *Server, bl *boundListener, pc net.PacketConn) *udpProxy {
	timeout := s.cfg.UDPSessionTimeout
	if timeout <= 0 {
		timeout = DefaultUDPSessionTimeout
	}
	_, maxSessions, _ := s.cfg.limits()
	return &udpProxy{s: s, bl: bl, pc: pc, timeout: timeout, max: maxSessions, sessions: map[string]*udpSession{}}
}

// full reports whether the proxy holds as many sessions as it may.
func (p *udpProxy) full() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions) >= p.max
}

func (p *udpProxy) serve() {
	buf := make([]byte, maxDatagram)
	var backoff time.Duration
	for {
		n, addr, err := p.pc.ReadFrom(buf)
		if err == nil {
			backoff = 0
			p.datagram(buf[:n], addr)
			continue
		}
		if errors.Is(err, net.ErrClosed) {
			return
		}
		backoff = min(max(2*backoff, time.Millisecond), 100*time.Millisecond)
		time.Sleep(backoff)
	}
}

func (p *udpProxy) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	_ = p.pc.Close()
}

// drain ends every session at once: without the socket no answer can reach
// a client.
func (p *udpProxy) drain(ctx context.Context, end EndReason) {
	p.mu.Lock()
	ss := make([]*udpSession, 0, len(p.sessions))
	for _, ss1 := range p.sessions {
		ss = append(ss, ss1)
	}
	p.mu.Unlock()
	for _, ss1 := range ss {
		ss1.end(end, "")
	}
	_ = waitCtx(ctx, &p.readers)
}

// datagram handles one datagram from a client: into its session, or a new
// one. A refused session is decided again when the table changed.
func (p *udpProxy) datagram(b []byte, client net.Addr) {
	key := client.String()
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	ss := p.sessions[key]
	p.mu.Unlock()
	if ss != nil && ss.refused && ss.routes != p.bl.routes.Load() {
		ss.end(EndRefused, "")
		ss = nil
	}
	if ss == nil && p.full() {
		p.s.refuse(p.bl, "UDP", key, fmt.Sprintf("%d UDP sessions are open on this listener, the limit (gwdev up --max-udp-sessions)", p.max))
		return // limits.go
	}
	if ss == nil {
		ss = p.newSession(client)
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			ss.end(EndGatewayStopped, "")
			return
		}
		p.sessions[key] = ss
		p.mu.Unlock()
		if ss.refused {
			// Traced now, with the datagram that started it; the next
			// ones are dropped quietly until the session expires.
			t := ss.trace
			t.End, t.BytesIn, t.DatagramsIn = EndRefused, int64(len(b)), 1
			p.s.traces.record(t)
		}
	}
	ss.fromClient(b)
}

// udpSession is one client address's datagrams through a udpProxy.
type udpSession struct {
	p      *udpProxy
	key    string
	client net.Addr
	start  time.Time
	routes *portRoutes
	trace  Trace
	// refused sessions drop the client's datagrams; they were traced when
	// they started.
	refused bool
	echo    *echosrv.Target
	up      net.Conn // the connected socket to the backend (nil: echo, refused)

	last        atomic.Int64 // unix nanoseconds of the last datagram either way
	in, out     atomic.Int64 // bytes
	inDg, outDg atomic.Int64 // datagrams
	// writing is held for reading while an answer is sent and counted
	// (toClient), and for writing while end takes the counts.
	writing sync.RWMutex

	mu    sync.Mutex
	timer *time.Timer
	ended bool
}

func (p *udpProxy) newSession(client net.Addr) *udpSession {
	now := time.Now()
	pr := p.bl.routes.Load()
	ss := &udpSession{p: p, key: client.String(), client: client, start: now, routes: pr,
		trace: l4Trace(p.bl.bound, pr, "UDP", client.String(), now)}
	ss.last.Store(now.UnixNano())
	t := &ss.trace
	b := decideL4(pr, t, "UDPRoute")
	switch {
	case b == nil:
		ss.refused = true
	case b.up.echo != nil:
		ss.echo, t.Upstream = b.up.echo, "echo"
	default:
		addr := b.up.addrs[b.up.nextAddr()]
		t.Upstream, t.Attempts = addr, 1
		up, err := net.DialTimeout("udp", addr, l4DialTimeout)
		if err != nil {
			t.Reason = fmt.Sprintf("upstream %s: %v", addr, err)
			ss.refused = true
			break
		}
		ss.up = up
		p.readers.Add(1)
		go ss.readBackend()
	}
	ss.mu.Lock()
	ss.timer = time.AfterFunc(p.timeout, ss.check)
	ss.mu.Unlock()
	return ss
}

// fromClient forwards (or echoes, or drops) one datagram from the client.
func (ss *udpSession) fromClient(b []byte) {
	ss.touch()
	ss.in.Add(int64(len(b)))
	ss.inDg.Add(1)
	switch {
	case ss.refused:
	case ss.echo != nil:
		ss.toClient(ss.echo.UDPAnswer(b, ss.routes.gateway.Gateway.Name, ss.client)) // echol4.go
	default:
		if _, err := ss.up.Write(b); err != nil {
			ss.end(EndBackendError, fmt.Sprintf("upstream %s: %v", ss.trace.Upstream, err))
		}
	}
}

// readBackend sends the backend's answers to the client.
func (ss *udpSession) readBackend() {
	defer ss.p.readers.Done()
	buf := make([]byte, maxDatagram)
	for {
		n, err := ss.up.Read(buf)
		if err != nil {
			// A closed socket means the session ended; anything else (an
			// ICMP port unreachable: nothing listens) ends it.
			ss.end(EndBackendError, fmt.Sprintf("upstream %s: %v", ss.trace.Upstream, err))
			return
		}
		ss.touch()
		ss.toClient(buf[:n])
	}
}

// toClient sends one datagram to the client and counts it, holding writing
// so that end, which takes the counts, waits for it: a client that got an
// answer and then ended the session (gwdev stops, the route goes) finds
// the answer in the session's trace.
func (ss *udpSession) toClient(b []byte) {
	ss.writing.RLock()
	defer ss.writing.RUnlock()
	if _, err := ss.p.pc.WriteTo(b, ss.client); err == nil {
		ss.out.Add(int64(len(b)))
		ss.outDg.Add(1)
	}
}

func (ss *udpSession) touch() { ss.last.Store(time.Now().UnixNano()) }

// check ends the session when it has been idle for the session timeout, or
// checks again when it will have been.
func (ss *udpSession) check() {
	idle := time.Since(time.Unix(0, ss.last.Load()))
	if idle < ss.p.timeout {
		ss.mu.Lock()
		if !ss.ended {
			ss.timer.Reset(ss.p.timeout - idle)
		}
		ss.mu.Unlock()
		return
	}
	ss.end(EndSessionExpired, "")
}

// end closes the session once and traces it (refused sessions were traced
// when they started).
func (ss *udpSession) end(end EndReason, reason string) {
	ss.mu.Lock()
	if ss.ended {
		ss.mu.Unlock()
		return
	}
	ss.ended = true
	if ss.timer != nil {
		ss.timer.Stop()
	}
	ss.mu.Unlock()
	p := ss.p
	p.mu.Lock()
	if p.sessions[ss.key] == ss {
		delete(p.sessions, ss.key)
	}
	p.mu.Unlock()
	if ss.up != nil {
		_ = ss.up.Close()
	}
	if ss.refused {
		return
	}
	t := &ss.trace
	t.End = end
	if end == EndSessionExpired {
		t.SessionTimeout = Duration(p.timeout)
	}
	if reason != "" && t.Reason == "" {
		t.Reason = reason
	}
	ss.writing.Lock()
	t.BytesIn, t.BytesOut = ss.in.Load(), ss.out.Load()
	t.DatagramsIn, t.DatagramsOut = ss.inDg.Load(), ss.outDg.Load()
	ss.writing.Unlock()
	t.Duration = Duration(time.Since(ss.start))
	if ss.up != nil {
		t.UpstreamDuration = t.Duration
	}
	p.s.traces.record(*t)
	if ss.echo != nil {
		ss.echo.Log(fmt.Sprintf("Answered %d datagrams (%d bytes) to client (%s) over UDP", t.DatagramsOut, t.BytesOut, t.Client))
	}
}
