package emulator

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/emulator/internal/wire"
)

// This file words what a client should type instead when gwdev refuses or
// misroutes it: the exact curl line that reaches the listener serving the
// host. The data plane calls it where an answer is already decided (a 404,
// a 421, a refused TLS handshake, a redirect to a mapped port); it never
// changes the decision.

// servedPlace is a bound socket that serves a host.
type servedPlace struct {
	// bound is the address:port gwdev listens on (after any port offset).
	bound    string
	gateway  string
	listener string
	https    bool
	// caFile is the CA bundle that verifies the listener's certificate for
	// the host ("" : none known: curl -k).
	caFile string
}

// url is the place's URL for host and path.
func (p servedPlace) url(host, path string) string {
	_, port, _ := net.SplitHostPort(p.bound)
	scheme, hostPort := "http", net.JoinHostPort(host, port)
	if p.https {
		scheme = "https"
	}
	if p.https && port == "443" || !p.https && port == "80" {
		hostPort = host
	}
	return scheme + "://" + hostPort + path
}

// curl is the command that reaches host at this place.
func (p servedPlace) curl(host, path string) string {
	addr, port, _ := net.SplitHostPort(p.bound)
	if ip := net.ParseIP(addr); ip == nil || ip.IsUnspecified() {
		addr = "127.0.0.1"
	}
	if path == "" {
		path = "/"
	}
	if p.https {
		trust := "-k"
		if p.caFile != "" {
			trust = "--cacert " + shellQuote(p.caFile)
		}
		return fmt.Sprintf("curl %s --resolve %s:%s:%s %s", trust, host, port, addr, shellQuote(p.url(host, path)))
	}
	return fmt.Sprintf("curl -H %s %s", shellQuote("Host: "+host), shellQuote("http://"+net.JoinHostPort(addr, port)+path))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// boundPorts maps each served port to the address:port its socket is
// bound on.
func (s *Server) boundPorts() map[*portRoutes]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	bound := make(map[*portRoutes]string, len(s.listeners))
	for _, bl := range s.listeners {
		if pr := bl.routes.Load(); pr != nil {
			bound[pr] = bl.bound
		}
	}
	return bound
}

// servedAt lists the HTTP and HTTPS sockets (bound: where each port
// listens) that have a route for host, in table order, skipping the port
// skip (nil: none).
func servedAt(rt *router, bound map[*portRoutes]string, trust caTrust, host string, skip *portRoutes) []servedPlace {
	if rt == nil {
		return nil
	}
	var out []servedPlace
	for _, pr := range rt.order {
		addr, ok := bound[pr]
		if !ok || pr == skip || pr.stream != nil {
			continue
		}
		i := pr.index.Lookup(host)
		if i < 0 || pr.listeners[i].index.Lookup(host) < 0 {
			continue
		}
		https := pr.tls != nil
		if https && pr.tls.listeners[i].mode != tlsHTTPS {
			continue
		}
		p := servedPlace{bound: addr, gateway: pr.gateway.Name, listener: pr.listeners[i].l.Name, https: https}
		if https && len(out) == 0 { // the first place is the hint's
			p.caFile = trust.caFileFor(pr, i, host)
		}
		out = append(out, p)
	}
	return out
}

// noteServedElsewhere adds to a 404 or 421 answer where the request's host
// is served instead: the reason (and so the body) names the address:port,
// the trace's hint has the curl line. A 404 of a host this port serves
// (no rule matched the path) is left alone.
func (s *Server) noteServedElsewhere(ex *exchange, act action) {
	noteServedElsewhere(s.current.Load(), s.boundPorts, s.trust, ex, act)
}

// noteServedElsewhere is the data plane's and Explain's: bound says where
// each port listens (asked only when the note applies), trust which CA
// file verifies an HTTPS listener's certificate.
func noteServedElsewhere(rt *router, bound func() map[*portRoutes]string, trust caTrust, ex *exchange, act action) {
	var skip *portRoutes
	switch {
	case act == actNotFound && ex.vhost == nil:
		skip = ex.port
	case act == actMisdirected:
		// the host may be served on this very port, on a connection of its own
	default:
		return
	}
	places := servedAt(rt, bound(), trust, ex.host, skip)
	if len(places) == 0 {
		return
	}
	where := make([]string, 0, len(places))
	for _, p := range places {
		where = append(where, fmt.Sprintf("%s (%s, listener %s)", p.url(ex.host, ""), p.gateway, p.listener))
	}
	ex.trace.Reason += fmt.Sprintf("; host %s is served on %s", ex.host, strings.Join(where, " and "))
	ex.trace.Hint = "try: " + places[0].curl(ex.host, ex.trace.Path)
}

// tlsRefusalHint is what to type instead when a TLS port refused a
// connection: connect by a name a listener of the port serves, with
// --resolve so that the name reaches this address. rec is what the client
// sent before the refusal (a plain HTTP request names its Host and path).
func tlsRefusalHint(bound string, pr *portRoutes, trust caTrust, sni string, rec []byte) string {
	if pr == nil || pr.tls == nil {
		return ""
	}
	names := servedNames(pr)
	if len(names) == 0 {
		return ""
	}
	_, isHTTP := wire.PlainHTTP(rec)
	host, path := "", "/"
	if isHTTP {
		if req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(rec))); err == nil {
			host, path = requestHost(req.Host), req.URL.RequestURI()
		}
	}
	pick := names[0] // the shortest name: the likeliest meant (app.example.com before admin.app.example.com)
	for _, n := range names {
		if n.name == host || host == "" && strings.Count(n.name, ".") < strings.Count(pick.name, ".") {
			pick = n
		}
	}
	if host != "" { // a Host the port serves wins over the shortest name
		for _, n := range names {
			if n.name == host {
				pick = n
			}
		}
	}
	var cmd string
	if pick.https {
		cmd = servedPlace{bound: bound, https: true, caFile: trust.caFileFor(pr, pr.tls.listenerFor(pr, pick.name), pick.name)}.curl(pick.name, path)
	} else {
		addr, port, _ := net.SplitHostPort(bound)
		cmd = fmt.Sprintf("openssl s_client -connect %s:%s -servername %s", addr, port, pick.name)
	}
	var why string
	switch {
	case isHTTP:
		why = "this port speaks TLS, not plain HTTP"
	case sni == "":
		why = "the client sent no SNI: connect by name"
	case sni == "localhost" || net.ParseIP(sni) != nil:
		why = fmt.Sprintf("TLS picks the listener by the name the client connects to (SNI %q), not by a Host header: connect by name", sni)
	default:
		why = fmt.Sprintf("no listener or TLSRoute of this port serves SNI %q", sni)
	}
	also := ""
	if len(names) > 1 {
		list := make([]string, len(names))
		for i, n := range names {
			list[i] = n.name
		}
		also = " (this port serves " + strings.Join(list, ", ") + ")"
	}
	return fmt.Sprintf("%s; try: %s%s", why, cmd, also)
}

// servedName is a name a TLS port serves; https is false for a TLS
// (TLSRoute) listener's.
type servedName struct {
	name  string
	https bool
}

// servedNames lists the names a TLS port serves, in listener order: the
// hostnames of its HTTPS virtual hosts and TLS routes, a wildcard's
// example ("*.example.com" as "www.example.com") when nothing is exact.
func servedNames(pr *portRoutes) []servedName {
	var names []servedName
	seen := map[string]bool{}
	add := func(h string, https bool) {
		if h == "" || h == "*" {
			return
		}
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			h = "www." + rest
		}
		if !seen[h] {
			seen[h] = true
			names = append(names, servedName{h, https})
		}
	}
	for i, l := range pr.listeners {
		tl := pr.tls.listeners[i]
		if tl.broken != "" {
			continue
		}
		https := tl.mode == tlsHTTPS
		n := len(names)
		for _, vh := range l.vhosts {
			add(vh.vh.Hostname, https)
		}
		for _, r := range tl.routes {
			for _, h := range r.r.Hostnames {
				add(h, https)
			}
		}
		if len(names) == n {
			add(l.l.Hostname, https)
		}
	}
	return names
}

// mappedRedirect rewrites a redirect's Location when it points at a port
// gwdev serves on another port (80→8080 when 80 could not be bound), so
// that following it works; note says what was rewritten ("" : nothing).
func (s *Server) mappedRedirect(ex *exchange) (note string) {
	u, err := url.Parse(ex.location)
	if err != nil || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		default:
			return ""
		}
	}
	want, err := strconv.Atoi(port)
	if err != nil {
		return ""
	}
	to := s.fallbackFor(ex, int32(want))
	if to == "" {
		return ""
	}
	old := ex.location
	u.Host = net.JoinHostPort(u.Hostname(), to)
	ex.location = u.String()
	return fmt.Sprintf("port mapping: Location %s rewritten to port %s (gwdev serves port %d on %s; --port-offset)", old, to, want, to)
}

// fallbackFor returns the port gwdev serves port on, when it serves it on
// another one: of the request's Gateway first, else of any Gateway ("" :
// not mapped).
func (s *Server) fallbackFor(ex *exchange, port int32) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	other := ""
	for _, bl := range s.listeners {
		if !bl.fallback || bl.key.port != port || bl.key.transport != "TCP" {
			continue
		}
		_, p, _ := net.SplitHostPort(bl.bound)
		if pr := bl.routes.Load(); pr != nil && ex.port != nil && pr.gateway == ex.port.gateway {
			return p
		}
		other = p
	}
	return other
}
