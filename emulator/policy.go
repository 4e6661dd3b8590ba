package emulator

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gwdev/gwdev/emulator/auth"
	"github.com/gwdev/gwdev/engine/table"
)

// Implementation-profile behaviour of listeners and rules (the routing
// table's ListenerTable.Policy and RouteRule.Policy): RBAC (emulator/auth),
// HTTP/1.x-only listeners, the HTTP/2 stream limit and the stream idle
// timeout. A table without policies costs two nil checks per request.

// checkListenerPolicy applies the chosen listener's policy before its
// routes: a listener that allows only HTTP/1.0 and HTTP/1.1 answers HTTP/2
// requests (h2c or h2) with 505, and its RBAC refuses with 403 whether or
// not a rule matches. A refused request's trace still names the rule it
// would have reached (r, nil when none).
func (ex *exchange) checkListenerPolicy(l *listenerRoutes, r *ruleRoutes) (action, bool) {
	if l == nil || l.l.Policy == nil {
		return 0, false
	}
	p := l.l.Policy
	a, done := actRefused, false
	if p.AllowHTTP10 && ex.req.ProtoMajor >= 2 {
		ex.trace.Reason = "listener " + l.l.Name + " serves only HTTP/1.0 and HTTP/1.1 (" + p.Profile + " allowHTTP10); " + ex.req.Proto + " is refused"
		ex.status = http.StatusHTTPVersionNotSupported
		done = true
	} else {
		a, done = ex.checkRBAC(p.RBAC)
	}
	if done && r != nil {
		ex.rule = r
		ex.trace.Rule, ex.trace.Route, ex.trace.Source = r.r.Name, r.r.Route.String(), r.source
	}
	return a, done
}

// checkRulePolicy applies the matched rule's policy on its virtual host:
// the route's host RBAC, then the rule's.
func (ex *exchange) checkRulePolicy(r *ruleRoutes) (action, bool) {
	if r == nil || r.r.Policy == nil {
		return 0, false
	}
	p := r.r.Policy
	if a, done := ex.checkBodyLength(p.MaxRequestBody); done {
		return a, done // nginx checks Content-Length when it picks the location
	}
	if ex.nginxPreflight(r) {
		return 0, false // answered in nginx's rewrite phase, before access checks
	}
	if a, done := ex.checkRBAC(p.HostRBAC); done {
		return a, done
	}
	if a, done := ex.checkRBAC(p.RBAC); done {
		return a, done
	}
	if p.BasicAuth != nil {
		return ex.checkBasicAuth(p.BasicAuth) // emulator/auth decides
	}
	return 0, false
}

// nginxPreflight reports whether the rule answers the request as an
// ingress-nginx CORS preflight.
func (ex *exchange) nginxPreflight(r *ruleRoutes) bool {
	for i := range r.filters {
		if c := r.filters[i].cors; c != nil && c.Nginx() && c.IsPreflight(ex.req) {
			return true
		}
	}
	return false
}

// setupHTTP2 applies the port's HTTP/2 stream limit to a freshly bound
// server: the smallest MaxConcurrentStreams of its listeners (the limit
// belongs to the connection, before a Host picks a listener). A kept
// server keeps the limit it was bound with.
func setupHTTP2(srv *http.Server, pr *portRoutes) {
	var limit uint32
	for _, l := range pr.listeners {
		if p := l.l.Policy; p != nil && p.MaxConcurrentStreams > 0 && (limit == 0 || p.MaxConcurrentStreams < limit) {
			limit = p.MaxConcurrentStreams
		}
	}
	if limit == 0 {
		return
	}
	if srv.HTTP2 == nil {
		srv.HTTP2 = &http.HTTP2Config{}
	}
	srv.HTTP2.MaxConcurrentStreams = int(limit)
}

// streamIdleTimeout is the idle timeout a TLS or TCP listener's policy
// sets for the port's connections (the smallest of its listeners'; 0:
// none, the server's default applies).
func streamIdleTimeout(pr *portRoutes) time.Duration {
	var idle time.Duration
	for _, l := range pr.listeners {
		if d := listenerStreamIdle(l.l); d > 0 && (idle == 0 || d < idle) {
			idle = d
		}
	}
	return idle
}

// listenerStreamIdle parses a listener policy's stream idle timeout.
func listenerStreamIdle(l *table.ListenerTable) time.Duration {
	if l == nil || l.Policy == nil || l.Policy.StreamIdleTimeout == "" {
		return 0
	}
	d, err := time.ParseDuration(l.Policy.StreamIdleTimeout)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// idleTimeout is a TCP connection's idle timeout: the port's listener
// policy (for example gwin's stream.idleTimeout), else the proxy's.
func (tc *tcpConn) idleTimeout() time.Duration {
	if pr := tc.p.bl.routes.Load(); pr != nil {
		if d := streamIdleTimeout(pr); d > 0 {
			return d
		}
	}
	return tc.p.idle
}

// withStreamIdle bounds a forwarded TLS stream by the port's listener
// policy idle timeout: it ends when neither side sent anything for that
// long. Without a policy timeout the connections are returned as they are.
func withStreamIdle(pr *portRoutes, client, backend net.Conn) (net.Conn, net.Conn) {
	if pr == nil {
		return client, backend
	}
	d := streamIdleTimeout(pr)
	if d <= 0 {
		return client, backend
	}
	last := new(atomic.Int64)
	last.Store(time.Now().UnixNano())
	return &idleConn{Conn: client, idle: d, last: last}, &idleConn{Conn: backend, idle: d, last: last}
}

// idleConn is one side of a stream with an idle timeout shared with the
// other side: a read or write deadline that passes while the other side
// moved is extended; otherwise the stream has been idle and errIdle ends
// it.
type idleConn struct {
	net.Conn
	idle time.Duration
	last *atomic.Int64 // UnixNano of the last byte either way
}

func (c *idleConn) touch() { c.last.Store(time.Now().UnixNano()) }

func (c *idleConn) quiet() bool { return time.Since(time.Unix(0, c.last.Load())) >= c.idle }

func (c *idleConn) Read(p []byte) (int, error) {
	for {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.idle))
		n, err := c.Conn.Read(p)
		if n > 0 {
			c.touch()
		}
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
		if c.quiet() {
			return 0, fmt.Errorf("%w: no traffic for %s", errIdle, c.idle)
		}
	}
}

func (c *idleConn) Write(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.touch()
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, fmt.Errorf("%w: no traffic for %s", errIdle, c.idle)
	}
	return n, err
}

// CloseWrite half-closes the underlying connection when it can.
func (c *idleConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// checkRateLimit applies the matched rule's rate limit to a request the
// data plane is about to serve (not to explain, which has no client
// history). It reports false when the request was answered.
func (s *Server) checkRateLimit(ex *exchange, w http.ResponseWriter) bool {
	r := ex.rule
	if r == nil || r.limiter == nil {
		return true
	}
	host, _, err := net.SplitHostPort(ex.req.RemoteAddr)
	if err != nil {
		host = ex.req.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return true // not an IP client (a test's pipe): nothing to count by
	}
	now := ex.start
	if s.cfg.RateLimitClock != nil {
		now = s.cfg.RateLimitClock()
	}
	release, refused := r.limiter.Admit(addr.Unmap(), now)
	if refused != "" {
		ex.trace.Reason = "rate limit " + r.limiter.Limit().Name + ": " + addr.String() + " " + refused
		ex.trace.RateLimited = r.limiter.Limit().Name
		ex.trace.Backend, ex.trace.Service, ex.trace.Target, ex.trace.Why = "", "", "", ""
		ex.status = r.limiter.Limit().Status
		if ex.status == 0 {
			ex.status = http.StatusServiceUnavailable
		}
		ex.writeError(w, ex.status, ex.trace.Reason)
		return false
	}
	ex.release = release
	return true
}

// HTTP basic authentication (the table's RulePolicy.BasicAuth, from
// ingress-nginx's auth-type basic): RFC 7617 credentials checked against
// htpasswd hashes, as nginx's auth_basic_user_file does. A request without
// valid credentials gets 401 with the Basic challenge; the password and the
// hashes never reach a trace (Authorization is redacted, redact.go).

// checkBasicAuth reports whether the request's credentials are valid; when
// not, it sets the 401 answer.
func (ex *exchange) checkBasicAuth(ba *table.BasicAuth) (action, bool) {
	user, pass, ok := ex.req.BasicAuth()
	ex.trace.BasicAuth = ba.Name
	switch {
	case ok && user == "":
		// nginx refuses credentials without a user name before it reads
		// the user file.
		ex.trace.Reason = "basic auth " + ba.Name + ": the credentials have an empty user name"
	case ok:
		for _, u := range ba.Users {
			if u.Name == user && auth.HtpasswdMatches(u.Hash, pass) {
				ex.trace.Filters = append(ex.trace.Filters, "BasicAuth: "+ba.Name+" user "+strconv.Quote(user)+" allowed")
				ex.trace.BasicAuthUser = user
				return 0, false
			}
		}
		ex.trace.Reason = "basic auth " + ba.Name + ": user " + strconv.Quote(user) + " or its password is wrong (users of " + ba.Secret + ")"
	default:
		ex.trace.Reason = "basic auth " + ba.Name + ": no credentials"
	}
	ex.status = http.StatusUnauthorized
	ex.challenge = "Basic realm=" + strconv.Quote(ba.Realm)
	return actRefused, true
}

// checkRBAC applies one policy to the exchange: it records the decision in
// the trace's filters and, on refusal, answers 403.
func (ex *exchange) checkRBAC(p *table.RBAC) (action, bool) {
	if p == nil {
		return 0, false
	}
	v := auth.EvalRBAC(p, ex.req)
	t := &ex.trace
	t.Filters = append(t.Filters, "RBAC "+p.Name+": "+v.Why)
	if v.Allowed {
		return 0, false
	}
	t.Reason = "refused by RBAC " + p.Name + ": " + v.Why
	ex.status = http.StatusForbidden
	return actRefused, true
}
