package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// bindKey identifies a bound listener: the address bound (the Gateway's or
// the override), the port the table asks for, and the transport. A listener
// whose key is unchanged across Applies is kept.
type bindKey struct {
	addr      string
	port      int32
	transport string
}

// boundListener is one listening socket and its HTTP server (or, for TCP
// and UDP listeners, its L4 proxy). routes is the port's compiled routes;
// Apply swaps it, requests load it once.
type boundListener struct {
	key bindKey
	// protocol is the listener protocol the socket serves; a port whose
	// protocol changes is bound anew.
	protocol table.ProtocolType
	ln       net.Listener // nil for UDP
	srv      *http.Server
	// l4 serves TCP and UDP listeners in place of srv (nil: srv serves).
	l4       l4Server
	bound    string
	fallback bool
	// moved says why the asked port could not be bound (fallback).
	moved  string
	routes atomic.Pointer[portRoutes]
	// tls is set on TLS ports (tlsconn.go).
	tls *tlsServe
	// fast serves the common HTTP/1.1 requests of an HTTP port, and of a
	// TLS port's HTTPS listeners (package h1; nil: Config.NoFastHTTP1).
	fast *h1.Server
	// refused counts what the listener refused over a limit (limits.go).
	refused refusals
}

// Server timeouts towards clients.
const (
	readHeaderTimeout = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	retireTimeout     = 30 * time.Second
)

// listenerFor returns the listener of a port, kept from the previous table
// or newly bound (fresh). claimed holds the listeners this Apply already
// gave to a port.
func (s *Server) listenerFor(pr *portRoutes, claimed map[bindKey]*boundListener) (bl *boundListener, fresh bool, err error) {
	addr := s.cfg.BindOverride
	if addr == "" {
		addr = pr.gateway.Address
		if addr == "" {
			return nil, false, errors.New("the Gateway has no address")
		}
		if ip, err := netip.ParseAddr(addr); err != nil || !ip.IsLoopback() {
			return nil, false, fmt.Errorf("refusing to bind %s: not a loopback address (use the address override to bind it)", addr)
		}
	}
	key := bindKey{addr, pr.port.Port, pr.port.Transport}
	if other, ok := claimed[key]; ok {
		return nil, false, fmt.Errorf("%s is already served for %s", other.bound, other.routes.Load().gateway.Name)
	}
	if bl, ok := s.listeners[key]; ok {
		if bl.protocol == pr.protocol || (isTLSProtocol(bl.protocol) && isTLSProtocol(pr.protocol)) {
			return bl, false, nil
		}
		// The port changes protocol (HTTP to TCP, say): free it for a new
		// server; the old one drains in the background.
		s.retire(bl)
		delete(s.listeners, key)
	}
	if isL4(pr.protocol) {
		bl, err := s.bindL4(pr, key) // l4.go
		return bl, err == nil, err
	}
	ln, moved, err := s.bind(addr, pr.port.Port)
	if err != nil {
		return nil, false, err
	}
	bl = &boundListener{key: key, protocol: pr.protocol, bound: ln.Addr().String(), fallback: moved != "", moved: moved}
	bl.ln = countingListener{s.limitConns(bl, ln, "HTTP")} // limits.go
	ct := newConnTracker(s, bl)                            // conntrace.go: connections without a request are traced
	bl.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(bl, w, r) }),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          log.New(io.Discard, "", 0),
		Protocols:         new(http.Protocols),
		ConnContext:       ct.connContext,
		ConnState:         ct.connState,
	}
	bl.srv.Protocols.SetHTTP1(true)
	bl.srv.Protocols.SetUnencryptedHTTP2(true) // h2c with prior knowledge
	setupHTTP2(bl.srv, pr)                     // policy.go: an implementation profile's stream limit
	s.setupStreams(bl.srv)                     // limits.go: the default stream limit, write stalls
	s.setupTLS(bl, pr)                         // TLS ports: HTTPS, TLS listeners
	if !s.cfg.NoFastHTTP1 {
		bl.fast = s.fastPath(bl)
	}
	return bl, true, nil
}

// fastPath returns the fast HTTP/1.1 path of a bound listener (package
// h1): it runs the listener's handler, its requests' contexts carry what
// net/http's connections carry (connContext), and the connections it hands
// over go to the listener's net/http server (a TLS port's: the HTTPS
// server's queue).
func (s *Server) fastPath(bl *boundListener) *h1.Server {
	f := &h1.Server{
		Handler:           bl.srv.Handler,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		ConnContext: func(c net.Conn, start time.Time) context.Context {
			ctx := context.WithValue(withServedCert(context.Background(), c), trackedConnKey{}, &trackedConn{start: start}) // tlsconn.go, conntrace.go
			// The listener's server, as net/http's connections carry it: a
			// reverse proxy whose copy of an answer breaks off then aborts
			// the response (http.ErrAbortHandler) instead of ending it as
			// if whole.
			return context.WithValue(ctx, http.ServerContextKey, bl.srv)
		},
	}
	if bl.tls != nil {
		f.Handoff = bl.tls.queue
	} else {
		f.Handoff = wire.NewQueue(bl.ln.Addr())
	}
	return f
}

// bind listens on addr:port, or on addr:port+PortOffset when that fails;
// moved then says why port could not be bound (bindFailure).
func (s *Server) bind(addr string, port int32) (ln net.Listener, moved string, err error) {
	ln, err = net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(int(port))))
	if err == nil {
		return ln, "", nil
	}
	off := s.cfg.PortOffset
	if off <= 0 || int(port)+off > 65535 {
		return nil, "", err
	}
	alt := int(port) + off
	ln, err2 := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(alt)))
	if err2 != nil {
		return nil, "", fmt.Errorf("%w; fallback port %d: %w", err, alt, err2)
	}
	return ln, bindFailure(err), nil
}

// bindFailure says in a few words why a port could not be bound: in use,
// or privileged; otherwise the system's words.
func bindFailure(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "in use by another process"
	case errors.Is(err, syscall.EACCES):
		return "privileged: binding it needs root or CAP_NET_BIND_SERVICE"
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	return err.Error()
}

// serveListener starts serving a freshly bound listener.
func (s *Server) serveListener(bl *boundListener) {
	s.retiring.Add(1)
	go func() {
		defer s.retiring.Done()
		if bl.l4 != nil {
			bl.l4.serve() // returns on stop
			return
		}
		if bl.fast != nil && bl.tls == nil {
			s.retiring.Add(1)
			go func() {
				defer s.retiring.Done()
				acceptLoop(bl.ln, func(c net.Conn) { bl.fast.Start(c, time.Now()) }) // returns when the socket is closed
			}()
			_ = bl.srv.Serve(bl.fast.Handoff) // what the fast path hands over
			return
		}
		_ = bl.srv.Serve(s.acceptor(bl)) // returns on Shutdown or Close
	}()
}

// retire shuts a listener down gracefully in the background: it stops
// accepting, in-flight requests finish, idle connections close.
func (s *Server) retire(bl *boundListener) {
	// Stop accepting now, so that the next Apply can bind the port again;
	// Shutdown then waits for the connections in the background.
	if bl.l4 != nil {
		bl.l4.stop()
	} else {
		_ = bl.ln.Close()
	}
	s.retiring.Add(1)
	go func() {
		defer s.retiring.Done()
		ctx, cancel := context.WithTimeout(context.Background(), retireTimeout)
		defer cancel()
		if bl.l4 != nil {
			s.drainRetiredL4(ctx, bl) // TCP connections go on until they end, ctx or Close
			return
		}
		if err := bl.srv.Shutdown(ctx); err != nil {
			_ = bl.srv.Close()
		}
		_ = bl.fast.Stop(ctx)
		bl.tls.drain(ctx, EndListenerRetired)
	}()
}
