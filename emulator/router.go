package emulator

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gwdev/gwdev/emulator/ratelimit"
	"github.com/gwdev/gwdev/engine/table"
)

// router is a compiled routing table: the engine's table plus what makes
// per-request work cheap (host indexes, path indexes, compiled regular
// expressions, cumulative weights, resolved upstreams). It is immutable once
// built; a new table gets a new router.
type router struct {
	table *table.Table
	ports map[portKey]*portRoutes
	// order lists ports in table order (gateways by namespace/name, then port).
	order []*portRoutes
	// via is the Via entries of the Server serving the router (loop.go;
	// nil: the offline Explain's).
	via *viaEntries
}

// portKey identifies a Gateway port: the Gateway's address, the port and the
// transport ("TCP" or "UDP").
type portKey struct {
	addr      string
	port      int32
	transport string
}

// portRoutes is one Gateway port with its listeners in hostname precedence
// order.
type portRoutes struct {
	gateway   *table.GatewayTable
	port      *table.PortTable
	protocol  table.ProtocolType
	notServed string // "" : served over HTTP
	listeners []*listenerRoutes
	index     hostIndex
	// tls is set for ports of HTTPS and TLS listeners (tls.go).
	tls *tlsRoutes
	// stream is the route serving a TCP or UDP port (nil: none, or not L4).
	stream *streamRoutes
}

type listenerRoutes struct {
	l      *table.ListenerTable
	vhosts []*vhostRoutes
	index  hostIndex
	// preAuth are the listener's pre-routing ExternalAuth checks
	// (prerouting.go), nil entries where the table has none.
	preAuth []*extAuthRoutes
}

// vhostRoutes holds a virtual host's rules in table (precedence) order with
// indexes: Exact paths by value; PathPrefix rules by normalised prefix;
// regular expressions by the path segments their literal prefix fixes
// ("/re/1/[a-z]+" must start with "/re/1/", so it is keyed "/re/1"), or in
// a list when it fixes none; gRPC rules in a list. A request looks up each
// segment prefix of its path. Matching takes the lowest rule index any
// index yields, so the table's order decides.
type vhostRoutes struct {
	// gen is the last compile that used it (reuse.go).
	gen   uint64
	vh    *table.VirtualHost
	rules []*ruleRoutes
	// limited is set when a rule has a rate limit (never reused: reuse.go).
	limited  bool
	exact    map[string][]int32
	prefix   map[string][]int32
	regexIdx map[string][]int32
	regex    []int32
	grpc     []int32
}

// ruleRoutes is a compiled RouteRule.
type ruleRoutes struct {
	// gen is the last compile that used it (reuse.go).
	gen  uint64
	r    *table.RouteRule
	at   *RuleAt // Trace.Matched
	http *httpMatch
	grpc *grpcMatch
	// broken, when set, is why the rule can never match (an expression that
	// does not compile, an unknown match type).
	broken  string
	filters []filterStep
	weightedBackends
	session *sessionPolicy
	// requestTimeout and backendTimeout are 0 when unset or disabled.
	requestTimeout time.Duration
	backendTimeout time.Duration
	retry          *retryPolicy
	// mirrors parallels the rule's RequestMirror filters (RouteRule.Mirrors).
	mirrors []*backendRoutes
	// auths parallels the rule's ExternalAuth filters (extauth.go).
	auths []*extAuthRoutes
	// errorPages replaces error answers (nil: none; errorpages.go).
	errorPages *errorPages
	// limiter counts the requests of the rule's rate limit (nil: none;
	// emulator/ratelimit).
	limiter *ratelimit.Limiter
	source  string
	// route is r.Route's name, made once rather than per request.
	route string
}

// backendRoutes is a compiled Backend.
type backendRoutes struct {
	// gen is the last compile that used it (reuse.go).
	gen     uint64
	b       *table.Backend
	service string // "<ns>/<name>:<port>"
	up      *upstream
	filters []filterStep
	// mirrors parallels the backendRef's RequestMirror filters.
	mirrors []*backendRoutes
	// auths parallels the backendRef's ExternalAuth filters.
	auths []*extAuthRoutes
	// token identifies the backend in session cookies and headers;
	// endpoints indexes its endpoints by the key sessions name them with
	// (backend.go).
	token     string
	endpoints map[string]int
	h2c       bool
	// budget limits the retries to the backend (nil: none).
	budget *retryBudget
	// session is the backend's own session persistence (an XBackend's),
	// which wins over the rule's for requests sent to it (nil: none).
	session *sessionPolicy
}

// retryPolicy is the table's Retry.
type retryPolicy struct {
	codes   []int
	retries int
	backoff time.Duration
}

// maxBackoff caps the doubling backoff: no wait exceeds ten times the
// first.
const maxBackoff = 10

// compiler builds a router, reusing rules, virtual hosts, upstreams and
// expressions from pool, which it leaves holding what the router uses
// (reuse.go).
type compiler struct {
	pool *upstreamPool
	// gen is this compile's generation and used what it marked with it;
	// reused are the last compile's virtual hosts reused, their rules not
	// marked yet; lastVHosts is how many the last compile left; inVHost is
	// set while a virtual host's rules compile, and others counts the
	// backends compiled outside one (reuse.go).
	gen        uint64
	used       poolUse
	reused     []*vhostRoutes
	lastVHosts int
	inVHost    bool
	others     int
	regex      *regexCache
	// backends are the backends compiled by this compile.
	backends map[*table.Backend]*backendRoutes
	// rateLimiters are the rate limits' counters by name.
	rateLimiters map[string]*ratelimit.Limiter
}

// compile builds the router for t. With a nil pool (Explain) upstreams carry
// no transports.
func compile(t *table.Table, pool *upstreamPool) *router {
	if pool == nil {
		pool = newUpstreamPool(nil)
	}
	c := &compiler{pool: pool, gen: pool.gen + 1, rateLimiters: map[string]*ratelimit.Limiter{},
		regex:    &regexCache{old: pool.regex, cur: map[string]*regexp.Regexp{}},
		backends: map[*table.Backend]*backendRoutes{}}
	rt := &router{table: t, ports: map[portKey]*portRoutes{}}
	c.lastVHosts = len(pool.vhosts)
	c.reused = make([]*vhostRoutes, 0, c.lastVHosts)
	defer func() {
		pool.regex = c.regex.cur
		c.finish() // reuse.go
	}()
	if t == nil {
		return rt
	}
	for _, g := range t.Gateways {
		if g == nil {
			continue
		}
		for _, p := range g.Ports {
			if p == nil {
				continue
			}
			pr := c.port(g, p)
			tr := p.Transport
			if tr == "" {
				tr = "TCP"
			}
			k := portKey{g.Address, p.Port, tr}
			if _, dup := rt.ports[k]; !dup {
				rt.ports[k] = pr
			}
			rt.order = append(rt.order, pr)
		}
	}
	return rt
}

func (c *compiler) port(g *table.GatewayTable, p *table.PortTable) *portRoutes {
	pr := &portRoutes{gateway: g, port: p}
	hosts := make([]string, 0, len(p.Listeners))
	for _, l := range p.Listeners {
		if l == nil {
			continue
		}
		if pr.protocol == "" {
			pr.protocol = l.Protocol
		} else if pr.protocol != l.Protocol && !(isTLSProtocol(pr.protocol) && isTLSProtocol(l.Protocol)) {
			pr.notServed = fmt.Sprintf("listeners of port %d mix %s and %s", p.Port, pr.protocol, l.Protocol)
		}
		pr.listeners = append(pr.listeners, c.listener(l))
		hosts = append(hosts, l.Hostname)
	}
	pr.index = newHostIndex(hosts)
	switch {
	case pr.notServed != "":
	case isL4(pr.protocol):
		pr.stream = c.stream(pr) // l4.go
	case p.Transport != "" && p.Transport != "TCP":
		pr.notServed = p.Transport + " listeners are not served yet"
	case pr.protocol == table.HTTPProtocolType:
	case isTLSProtocol(pr.protocol):
		pr.notServed = c.tlsPort(pr)
	case pr.protocol == "":
		pr.notServed = "no listeners"
	default:
		pr.notServed = string(pr.protocol) + " listeners are not served yet"
	}
	return pr
}

func (c *compiler) listener(l *table.ListenerTable) *listenerRoutes {
	lr := &listenerRoutes{l: l, preAuth: c.auths(l.PreRoutingAuth)}
	hosts := make([]string, 0, len(l.VirtualHosts))
	for _, vh := range l.VirtualHosts {
		if vh == nil {
			continue
		}
		lr.vhosts = append(lr.vhosts, c.vhost(vh))
		hosts = append(hosts, vh.Hostname)
	}
	lr.index = newHostIndex(hosts)
	return lr
}

func (c *compiler) vhost(vh *table.VirtualHost) *vhostRoutes {
	if v := c.reuseVHost(vh); v != nil { // reuse.go
		return v
	}
	v := &vhostRoutes{gen: c.gen, vh: vh, exact: map[string][]int32{}, prefix: map[string][]int32{}, regexIdx: map[string][]int32{}}
	c.used.vhosts++
	c.inVHost = true
	defer func() { c.inVHost = false }()
	for _, r := range vh.Rules {
		if r == nil {
			continue
		}
		rr := c.rule(r)
		i := int32(len(v.rules))
		v.rules = append(v.rules, rr)
		v.limited = v.limited || rr.limiter != nil
		switch {
		case rr.broken != "":
		case rr.grpc != nil:
			v.grpc = append(v.grpc, i)
		case rr.http.kind == pathExact:
			v.exact[rr.http.path] = append(v.exact[rr.http.path], i)
		case rr.http.kind == pathPrefix:
			v.prefix[rr.http.path] = append(v.prefix[rr.http.path], i)
		default:
			if key, ok := regexKey(rr.http.pathRE); ok {
				v.regexIdx[key] = append(v.regexIdx[key], i)
			} else {
				v.regex = append(v.regex, i)
			}
		}
	}
	c.pool.vhosts[vh.Name] = v
	return v
}

// regexKey is the longest whole-segment path prefix every match of a path
// expression has ("" for "/"), if any.
func regexKey(re *regexp.Regexp) (string, bool) {
	lit, _ := re.LiteralPrefix()
	i := strings.LastIndexByte(lit, '/')
	if !strings.HasPrefix(lit, "/") || i < 0 {
		return "", false
	}
	return lit[:i], true
}

// rule compiles a RouteRule once, even when several virtual hosts share it.
func (c *compiler) rule(r *table.RouteRule) *ruleRoutes {
	if rr := c.reuseRule(r); rr != nil { // reuse.go
		return rr
	}
	rr := &ruleRoutes{gen: c.gen, r: r, route: r.Route.String(), at: ruleAt(r.Route, r.Index)}
	c.pool.rules[r] = rr
	c.used.rules++
	if r.Source.File != "" {
		rr.source = r.Source.File
		if r.Source.Line > 0 {
			rr.source += ":" + strconv.Itoa(r.Source.Line)
		}
	}
	var err error
	switch {
	case r.HTTP != nil:
		rr.http, err = compileHTTPMatch(r.HTTP, c.regex)
	case r.GRPC != nil:
		rr.grpc, err = compileGRPCMatch(r.GRPC, c.regex)
	default:
		err = fmt.Errorf("rule has neither an http nor a grpc match")
	}
	if err != nil {
		rr.broken = err.Error()
	}
	rr.filters = compileFilters(r.Filters, c.regex)
	rr.picks = c.pool.picks
	for _, b := range r.Backends {
		if b == nil {
			continue
		}
		rr.add(c.backend(b), b.Weight)
	}
	for _, m := range r.Mirrors {
		if m != nil {
			rr.mirrors = append(rr.mirrors, c.backend(m))
		}
	}
	rr.auths = c.auths(r.ExternalAuth)
	rr.errorPages = c.errorPages(r.ErrorPages)
	if p := r.Policy; p != nil && p.RateLimit != nil {
		rr.limiter = c.rateLimiters[p.RateLimit.Name]
		if rr.limiter == nil {
			rr.limiter = ratelimit.New(p.RateLimit)
			c.rateLimiters[p.RateLimit.Name] = rr.limiter
		}
	}
	rr.session = compileSession(r.SessionPersistence)
	if t := r.Timeouts; t != nil {
		rr.requestTimeout, rr.backendTimeout = t.Request, t.BackendRequest
	}
	if rt := r.Retry; rt != nil {
		rr.retry = &retryPolicy{codes: rt.Codes, retries: rt.Attempts, backoff: rt.Backoff}
	}
	return rr
}

func (c *compiler) backend(b *table.Backend) *backendRoutes {
	if br, ok := c.backends[b]; ok {
		return br
	}
	br := &backendRoutes{gen: c.gen, b: b, service: serviceName(b), token: backendToken(b.Name)}
	if !c.inVHost {
		c.others++ // a listener's pre-routing auth, an L4 or TLS route (reuse.go)
	}
	br.h2c = b.HTTP2
	br.budget = c.retryBudget(b.RetryBudget)
	br.session = compileSession(b.SessionPersistence)
	if br.session != nil {
		// The XBackend's own session holds on every route sending to it.
		br.token = backendToken(b.Service.Kind + "/" + br.service)
	}
	if b.Invalid == "" && b.Target != nil {
		br.up = c.upstream(b)
		br.endpoints = endpointKeys(br.up)
	}
	br.filters = compileFilters(b.Filters, c.regex)
	c.backends[b] = br
	br.auths = c.auths(b.ExternalAuth)
	for _, m := range b.Mirrors {
		if m != nil {
			br.mirrors = append(br.mirrors, c.backend(m))
		}
	}
	return br
}

func serviceName(b *table.Backend) string {
	s := b.Service.Name
	if b.Service.Namespace != "" {
		s = b.Service.Namespace + "/" + s
	}
	if b.Port != 0 {
		s += ":" + strconv.Itoa(int(b.Port))
	}
	return s
}

// lookup finds the TCP port a request arrived on.
func (rt *router) lookup(addr string, port int32) *portRoutes {
	return rt.lookupTransport(addr, port, "TCP")
}

// lookupTransport finds a port by address ("" : the first Gateway with the
// port), number and transport ("TCP" or "UDP").
func (rt *router) lookupTransport(addr string, port int32, transport string) *portRoutes {
	if pr, ok := rt.ports[portKey{addr, port, transport}]; ok {
		return pr
	}
	if addr == "" {
		for _, pr := range rt.order {
			if pr.port.Port == port && pr.port.Transport == transport {
				return pr
			}
		}
	}
	return nil
}

// route picks the listener, the virtual host and the first matching rule.
// When nothing matches, reason says which step failed.
func (pr *portRoutes) route(v *reqView, host string) (l *listenerRoutes, vh *vhostRoutes, r *ruleRoutes, reason string) {
	i := pr.index.Lookup(host)
	if i < 0 {
		return nil, nil, nil, fmt.Sprintf("no listener on port %d matches host %q", pr.port.Port, host)
	}
	l = pr.listeners[i]
	j := l.index.Lookup(host)
	if j < 0 {
		if len(l.vhosts) == 0 {
			return l, nil, nil, fmt.Sprintf("listener %s has no routes attached", l.l.Name)
		}
		return l, nil, nil, fmt.Sprintf("no route of listener %s serves host %q", l.l.Name, host)
	}
	vh = l.vhosts[j]
	r = vh.match(v)
	if r == nil {
		return l, vh, nil, fmt.Sprintf("no rule of virtual host %s matches %s %s", vh.vh.Name, v.method, v.path)
	}
	return l, vh, r, ""
}

// match returns the first rule, in table order, that matches the request.
func (vh *vhostRoutes) match(v *reqView) *ruleRoutes {
	best := int32(len(vh.rules))
	if v.grpc {
		for _, i := range vh.grpc {
			if i >= best {
				break
			}
			if vh.rules[i].grpc.matches(v) {
				best = i
				break
			}
		}
	}
	if c, ok := vh.exact[v.path]; ok {
		best = vh.first(c, v, best, false)
	}
	best = vh.scanSegments(vh.prefix, v, best, false)
	best = vh.scanSegments(vh.regexIdx, v, best, true)
	for _, i := range vh.regex {
		if i >= best {
			break
		}
		m := vh.rules[i].http
		if m.matchPath(v.path) && m.matchRest(v) {
			best = i
			break
		}
	}
	if best == int32(len(vh.rules)) {
		return nil
	}
	return vh.rules[best]
}

// scanSegments looks up every segment prefix of the path in idx: "" (for
// "/"), "/a", "/a/b", and the whole path unless it ends in "/".
func (vh *vhostRoutes) scanSegments(idx map[string][]int32, v *reqView, best int32, fullPath bool) int32 {
	if len(idx) == 0 {
		return best
	}
	if c, ok := idx[""]; ok {
		best = vh.first(c, v, best, fullPath)
	}
	p := v.path
	for k := 1; k < len(p); k++ {
		if p[k] == '/' {
			if c, ok := idx[p[:k]]; ok {
				best = vh.first(c, v, best, fullPath)
			}
		}
	}
	if len(p) > 1 && p[len(p)-1] != '/' {
		if c, ok := idx[p]; ok {
			best = vh.first(c, v, best, fullPath)
		}
	}
	return best
}

// first returns the first candidate below best that matches, or best. The
// index already vouches for the path unless fullPath is set.
func (vh *vhostRoutes) first(cands []int32, v *reqView, best int32, fullPath bool) int32 {
	for _, i := range cands {
		if i >= best {
			return best
		}
		m := vh.rules[i].http
		if (!fullPath || m.matchPath(v.path)) && m.matchRest(v) {
			return i
		}
	}
	return best
}
