package emulator

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Limits on what clients can hold open, so that one listener cannot take
// the descriptors or memory every other listener and the admin API need.
const (
	// DefaultMaxConnsPerListener bounds the open connections of one bound
	// TCP socket (HTTP, HTTPS, TLS and TCP listeners alike); more are
	// accepted and closed at once.
	DefaultMaxConnsPerListener = 4096
	// DefaultMaxUDPSessions bounds the sessions (client addresses) of one
	// UDP listener; datagrams that would start another are dropped.
	DefaultMaxUDPSessions = 4096
	// DefaultMaxHTTP2Streams is the HTTP/2 concurrent stream limit of a
	// connection when no listener policy sets one.
	DefaultMaxHTTP2Streams = 250
	// DefaultWriteStallTimeout ends a response the client lets the gateway
	// write nothing of for this long (an HTTP/2 stream whose flow-control
	// window never opens, a client that stops reading).
	DefaultWriteStallTimeout = time.Minute
	// refusalNoteEvery is how often a listener refusing over a limit traces
	// it (with the count refused meanwhile).
	refusalNoteEvery = time.Second
)

// limits returns the server's limits with defaults applied.
func (c *Config) limits() (conns, udpSessions int, stall time.Duration) {
	conns, udpSessions, stall = c.MaxConnsPerListener, c.MaxUDPSessions, c.WriteStallTimeout
	if conns <= 0 {
		conns = DefaultMaxConnsPerListener
	}
	if udpSessions <= 0 {
		udpSessions = DefaultMaxUDPSessions
	}
	if stall <= 0 {
		stall = DefaultWriteStallTimeout
	}
	return conns, udpSessions, stall
}

// refusals counts what one listener refused over a limit and traces it at
// most every refusalNoteEvery.
type refusals struct {
	mu      sync.Mutex
	pending int64
	last    time.Time
}

// refuse notes one refusal by bl of client; what says which limit. The
// refusal is counted at once (RefusedCounts, gwdev_refused_total); its
// trace comes at most every refusalNoteEvery, with the count meanwhile.
func (s *Server) refuse(bl *boundListener, proto, client, what string) {
	k := RefusedKey{Proto: proto}
	pr := bl.routes.Load()
	if pr != nil {
		k.Gateway = pr.gateway.Name
		if len(pr.listeners) > 0 {
			k.Listener = pr.listeners[0].l.Name
		}
	}
	s.refusedMu.Lock()
	if s.refusedTotal == nil {
		s.refusedTotal = map[RefusedKey]int64{}
	}
	s.refusedTotal[k]++
	s.refusedMu.Unlock()
	r := &bl.refused
	r.mu.Lock()
	r.pending++
	now := time.Now()
	if now.Sub(r.last) < refusalNoteEvery {
		r.mu.Unlock()
		return
	}
	n := r.pending
	r.pending, r.last = 0, now
	r.mu.Unlock()
	t := Trace{Time: now, Client: client, Address: bl.bound, Proto: proto, End: EndRefused, Refused: n,
		Gateway: k.Gateway, Listener: k.Listener,
		Reason: fmt.Sprintf("refused: %s (%d refused since the last note)", what, n)}
	if pr != nil {
		t.Port = pr.port.Port
	}
	s.traces.record(t)
}

// RefusedKey names the listener and protocol of refusals over a limit.
type RefusedKey struct {
	Gateway, Listener, Proto string
}

// RefusedCounts returns how many connections and UDP datagrams each
// listener refused over its limits since the server started, counted as
// they happen (refusal traces are rate-limited; these counts are not).
func (s *Server) RefusedCounts() map[RefusedKey]int64 {
	s.refusedMu.Lock()
	defer s.refusedMu.Unlock()
	return maps.Clone(s.refusedTotal)
}

// limitConns wraps a bound socket so that it holds at most the configured
// number of open connections.
func (s *Server) limitConns(bl *boundListener, ln net.Listener, proto string) net.Listener {
	max, _, _ := s.cfg.limits()
	return &limitListener{Listener: ln, max: int64(max), refuse: func(c net.Conn) {
		s.refuse(bl, proto, c.RemoteAddr().String(),
			fmt.Sprintf("%d connections are open on this listener, the limit (gwdev up --max-conns)", max))
	}}
}

// limitListener accepts at most max open connections; one over the limit
// is closed as soon as it is accepted.
type limitListener struct {
	net.Listener
	max    int64
	active atomic.Int64
	refuse func(net.Conn)
}

// Accept returns the next connection within the limit.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.active.Add(1) <= l.max {
			return &limitConn{Conn: c, l: l}, nil
		}
		l.active.Add(-1)
		l.refuse(c)
		_ = c.Close()
	}
}

// limitConn gives its slot back when closed.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.active.Add(-1) })
	return err
}

// SyscallConn is the socket's, when the connection has one.
func (c *limitConn) SyscallConn() (syscall.RawConn, error) { return syscallConn(c.Conn) }

// CloseWrite half-closes the connection.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// setupStreams sets an HTTP listener's HTTP/2 limits: the stream limit
// (when no listener policy set one) and the write-stall timeout of a
// connection.
func (s *Server) setupStreams(srv *http.Server) {
	_, _, stall := s.cfg.limits()
	if srv.HTTP2 == nil {
		srv.HTTP2 = &http.HTTP2Config{}
	}
	if srv.HTTP2.MaxConcurrentStreams == 0 {
		srv.HTTP2.MaxConcurrentStreams = DefaultMaxHTTP2Streams
	}
	srv.HTTP2.WriteByteTimeout = stall
}

// extendWriteDeadline keeps a response's write deadline at least half the
// write-stall timeout away: a response the client lets the gateway write
// nothing of for that long fails (an HTTP/2 stream is reset).
func (w *responseRecorder) extendWriteDeadline() {
	if w.stall <= 0 {
		return
	}
	if w.deadline.IsZero() {
		if a, ok := w.ResponseWriter.(interface{ AdoptWriteDeadline() time.Time }); ok {
			w.deadline = a.AdoptWriteDeadline() // the previous response's, still set on the connection
		}
	}
	if -clockSince(w.deadline) > w.stall/2 { // one clock read, monotonic: the deadline has one
		return
	}
	w.deadline = clockNow().Add(w.stall)
	_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(w.deadline)
}
