package emulator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gwdev/gwdev/emulator/clientcert"
	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/engine/table"
)

// upstreamPool keeps upstreams (and their pooled transports) and compiled
// expressions across Applies, so a reload does not drop idle connections to
// backends that are still in the table.
type upstreamPool struct {
	// picks decides weighted picks (Config.PickSeed; nil: at random).
	picks     *pickSource
	upstreams map[string]*upstream
	// budgets are the retry budgets by settings (retrybudget.go).
	budgets map[string]*retryBudget
	regex   map[string]*regexp.Regexp
	// rules and vhosts are the last router's compiled rules and virtual
	// hosts, which the next reuses for the same table rules (router.go).
	rules  map[*table.RouteRule]*ruleRoutes
	vhosts map[string]*vhostRoutes
	// gen is the last compile's generation; dropped are the upstreams it
	// stopped using; others counts its backends outside virtual hosts
	// (reuse.go).
	gen     uint64
	dropped []*upstream
	others  int
	// echoLog returns the log buffer of an echo service (nil: no logging).
	echoLog func(service string) *echosrv.Log
}

func newUpstreamPool(echoLog func(string) *echosrv.Log) *upstreamPool {
	return &upstreamPool{upstreams: map[string]*upstream{}, budgets: map[string]*retryBudget{}, regex: map[string]*regexp.Regexp{},
		rules: map[*table.RouteRule]*ruleRoutes{}, vhosts: map[string]*vhostRoutes{}, echoLog: echoLog}
}

// upstream is where a backend's requests go: endpoint addresses with pooled
// transports (one for HTTP/1.1, one for HTTP/2), or the echo backend.
type upstream struct {
	// gen is the last compile that used it (reuse.go).
	gen    uint64
	key    string
	kind   string
	addrs  []string
	scheme string
	tls    *tls.Config
	echo   *echosrv.Target
	// pods answers for the Pods of a pods target, one endpoint each
	// (pods.go; nil: not a pods target); podsRT is it behind statusGuard.
	pods   *podEchoes
	podsRT *statusGuard
	// tlsErr is why the BackendTLSPolicy could not be used.
	tlsErr string
	// clientCert is the Secret ("<ns>/<name>") of the client certificate
	// the gateway presents to this backend ("" : none).
	clientCert string
	// echoTLS serves echo over TLS in process when a BackendTLSPolicy
	// applies to an echo backend (echotls.go).
	echoTLS *echosrv.HTTPS

	rr             atomic.Uint32
	h1Once, h2Once sync.Once
	h1, h2         *http.Transport
	// h1p sends plain HTTP/1.1 requests, h1 the rest (package h1; nil: h1
	// sends them all).
	h1p *h1.Pool
	// echoRT, h1RT and h2RT are what transport returns: the echo target,
	// h1p (or h1) and h2 behind the status check every upstream answer
	// goes through (statusGuard).
	echoRT, h1RT, h2RT *statusGuard
}

// upstream returns the (possibly reused) upstream of a valid backend.
func (c *compiler) upstream(b *table.Backend) *upstream {
	key := upstreamKey(b)
	u, ok := c.pool.upstreams[key]
	if !ok {
		u = newUpstream(key, b, c.pool.echoLog)
		c.pool.upstreams[key] = u
	}
	c.markUpstream(u) // reuse.go
	return u
}

func upstreamKey(b *table.Backend) string {
	k := b.Target.Kind + "|" + strings.Join(b.Target.Addresses, ",")
	if b.Target.Kind == table.TargetEcho {
		k = "echo|" + serviceName(b) + "|" + b.Target.EchoAuthHeader + "|" + strings.Join(b.Target.Pods, ",")
	}
	if b.Target.Kind == table.TargetPods {
		k = "pods|" + serviceName(b) + "|" + strings.Join(b.Target.Pods, ",")
	}
	if t := b.TLS; t != nil {
		h := fnv.New64a()
		h.Write(t.CACertificates)
		if c := b.Target.EchoTLS; c != nil {
			h.Write(c.CertPEM)
			h.Write(c.KeyPEM)
		}
		hashTLSLimits(h, t.Limits)
		for _, s := range t.SubjectAltNames {
			fmt.Fprintf(h, "|%s|%s", s.Hostname, s.URI)
		}
		client := ""
		if c := t.ClientCertificate; c != nil {
			client = c.Secret
			h.Write(c.CertPEM)
			h.Write(c.KeyPEM)
		}
		k += fmt.Sprintf("|tls|%s|%s|%t|%t|%s|%x", t.Policy, t.SNI, t.System, t.NoVerify, client, h.Sum64())
	}
	return k
}

// requestIngress is the name of the Gateway the request of ctx arrived at,
// which the echo backend reports as its ingress.
func requestIngress(ctx context.Context) string {
	if ex := exchangeFrom(ctx); ex != nil && ex.port != nil {
		return ex.port.gateway.Gateway.Name
	}
	return ""
}

func newUpstream(key string, b *table.Backend, echoLog func(string) *echosrv.Log) *upstream {
	u := &upstream{key: key, kind: b.Target.Kind, addrs: b.Target.Addresses, scheme: "http"}
	if b.Target.Kind == table.TargetEcho {
		u.echo = echosrv.NewTarget(b, echoLog, requestIngress)
		u.echoRT = &statusGuard{next: u.echo}
	}
	if b.Target.Kind == table.TargetPods {
		u.addrs, u.pods = newPodEchoes(b, echoLog) // pods.go
		u.podsRT = &statusGuard{next: u.pods}
	}
	if b.TLS != nil {
		u.scheme = "https"
		conf, err := backendTLSConfig(b.TLS)
		if err != nil {
			u.tlsErr = err.Error()
		}
		u.tls = conf
		if c := b.TLS.ClientCertificate; c != nil {
			u.clientCert = c.Secret
		}
		if u.echo != nil {
			u.echoTLS = echosrv.NewHTTPS(u.echo, b.Target.EchoTLS)
		}
	}
	return u
}

// backendTLSConfig builds the client TLS configuration of a BackendTLSPolicy:
// trust the given CAs (or the system's), send SNI, verify the SNI name or,
// when set, the subjectAltNames instead; present the Gateway's client
// certificate, if it has one, when the backend asks (emulator/clientcert).
func backendTLSConfig(t *table.BackendTLS) (*tls.Config, error) {
	conf := &tls.Config{ServerName: t.SNI, MinVersion: tls.VersionTLS12}
	if err := applyTLSLimits(conf, t.Limits); err != nil { // tlsoptions.go
		return conf, fmt.Errorf("BackendTLSPolicy %s options: %w", t.Policy, err)
	}
	if c := t.ClientCertificate; c != nil {
		if err := clientcert.Present(conf, c); err != nil {
			return conf, fmt.Errorf("client certificate of Secret %s: %w", c.Secret, err)
		}
	}
	if t.NoVerify {
		conf.InsecureSkipVerify = true //nolint:gosec // ingress-nginx's proxy_ssl_verify off, as the table asks
		return conf, nil
	}
	var roots *x509.CertPool
	if !t.System {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(t.CACertificates) {
			return conf, fmt.Errorf("BackendTLSPolicy %s: no usable CA certificate", t.Policy)
		}
		conf.RootCAs = roots
	}
	if len(t.SubjectAltNames) > 0 {
		sans := t.SubjectAltNames
		conf.InsecureSkipVerify = true // verified below against the SANs
		conf.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifySANs(cs, roots, sans)
		}
	}
	return conf, nil
}

func verifySANs(cs tls.ConnectionState, roots *x509.CertPool, sans []table.SubjectAltName) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("backend sent no certificate")
	}
	leaf := cs.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
		return err
	}
	for _, s := range sans {
		switch {
		case s.Hostname != "":
			if leaf.VerifyHostname(s.Hostname) == nil {
				return nil
			}
		case s.URI != "":
			for _, u := range leaf.URIs {
				if u.String() == s.URI {
					return nil
				}
			}
		}
	}
	return errors.New("backend certificate matches none of the subjectAltNames")
}

// transport returns the round tripper for this upstream; h2 selects HTTP/2
// (h2c without TLS).
func (u *upstream) transport(h2 bool) http.RoundTripper {
	if u.echo != nil && u.echoTLS == nil {
		return u.echoRT
	}
	if u.pods != nil {
		return u.podsRT // the engine gives a pods target no TLS
	}
	if h2 {
		// Each transport gets its own copy of the TLS settings: net/http
		// rewrites NextProtos of the one it is given.
		u.h2Once.Do(func() {
			u.h2 = u.withClientCert(u.echoTLS.Transport(newTransport(u.tls.Clone(), true)))
			u.h2RT = &statusGuard{next: u.h2}
		})
		return u.h2RT
	}
	u.h1Once.Do(func() {
		u.h1 = u.withClientCert(u.echoTLS.Transport(newTransport(u.tls.Clone(), false)))
		u.h1RT = &statusGuard{next: u.h1}
		if u.tls == nil && h1.CanProbeIdle {
			u.h1p = h1.NewPool(u.h1, noteBackendFault)
			u.h1RT.next = u.h1p
		}
	})
	return u.h1RT
}

// statusGuard refuses an upstream answer whose status is outside
// 100..999: no HTTP status has more or fewer than three digits, and
// passing one on would make the server's WriteHeader panic. The request
// then fails as if the backend had broken the connection (502 from a
// backend, 403 from an auth server).
type statusGuard struct{ next http.RoundTripper }

var _ http.RoundTripper = (*statusGuard)(nil)

func (g *statusGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.next.RoundTrip(req)
	if err != nil || (resp.StatusCode >= 100 && resp.StatusCode <= 999) {
		return resp, err
	}
	_ = resp.Body.Close()
	return nil, &badStatusError{code: resp.StatusCode}
}

// badStatusError is an upstream answer with a status outside 100..999.
type badStatusError struct{ code int }

func (e *badStatusError) Error() string {
	return fmt.Sprintf("backend answered status %d, outside 100..999 (the backend's fault)", e.code)
}

// withClientCert makes t's connections record whether the gateway
// presented its client certificate on them (emulator/clientcert).
func (u *upstream) withClientCert(t *http.Transport) *http.Transport {
	if u.clientCert != "" {
		t.DialContext = clientcert.Dialer(t.DialContext)
	}
	return t
}

func newTransport(conf *tls.Config, h2 bool) *http.Transport {
	t := &http.Transport{
		Proxy:                 nil, // never the environment's proxy: backends are local
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true, // a proxy passes encodings through
		TLSClientConfig:       conf,
	}
	if h2 {
		t.Protocols = new(http.Protocols)
		if conf != nil {
			t.Protocols.SetHTTP2(true)
		} else {
			t.Protocols.SetUnencryptedHTTP2(true)
		}
	}
	return t
}

// closeIdle drops idle connections (the upstream left the table).
func (u *upstream) closeIdle() {
	u.echoTLS.Close()
	if u.h1p != nil {
		u.h1p.CloseIdle()
	}
	for _, t := range []*http.Transport{u.h1, u.h2} {
		if t != nil {
			t.CloseIdleConnections()
		}
	}
}

// nextAddr picks an endpoint round-robin.
func (u *upstream) nextAddr() int {
	if len(u.addrs) < 2 {
		return 0
	}
	return int(u.rr.Add(1)-1) % len(u.addrs)
}

// backendToken is the stable session token of a backend: a hash of its name.
func backendToken(name string) string {
	h := fnv.New64a()
	h.Write([]byte(name))
	return strconv.FormatUint(h.Sum64(), 36)
}

// sessionPolicy is the table's Session.
type sessionPolicy struct {
	header    bool
	name      string
	timeout   time.Duration
	permanent bool
	// path is the cookie's Path attribute ("" for a header session).
	path string
}

func compileSession(sp *table.Session) *sessionPolicy {
	if sp == nil {
		return nil
	}
	p := &sessionPolicy{header: sp.Type == table.SessionHeader, name: sp.Name, timeout: sp.AbsoluteTimeout,
		permanent: sp.Lifetime == table.LifetimePermanent, path: sp.Path}
	if !p.header && p.path == "" {
		p.path = "/" // a table written without the translator's default
	}
	return p
}

// read returns the session value the client sent.
func (p *sessionPolicy) read(r *http.Request) string {
	if p.header {
		return r.Header.Get(p.name)
	}
	c, err := r.Cookie(p.name)
	if err != nil {
		return ""
	}
	return c.Value
}

// resume finds the backend and endpoint a session value pins, if the
// session is still valid.
func (rr *ruleRoutes) resume(value string, now time.Time) (*backendRoutes, int, bool) {
	tok, ep, ok := parseSession(value, now)
	if !ok {
		return nil, 0, false
	}
	for _, b := range rr.backends {
		if b.token == tok {
			idx, ok := b.endpoint(ep)
			return b, idx, ok
		}
	}
	return nil, 0, false
}

// parseSession splits a valid, unexpired session value
// ("<backend token>.<endpoint key>.<expiry>") into the backend's token and
// the endpoint's key.
func parseSession(value string, now time.Time) (string, string, bool) {
	tok, rest, ok := strings.Cut(value, ".")
	if !ok {
		return "", "", false
	}
	ep, expS, _ := strings.Cut(rest, ".")
	if ep == "" {
		return "", "", false
	}
	if expS != "" && expS != "0" {
		exp, err := strconv.ParseInt(expS, 36, 64)
		if err != nil || now.Unix() >= exp {
			return "", "", false
		}
	}
	return tok, ep, true
}

// endpointKey names an endpoint in session values by its address, so a
// session stays with its endpoint (a Pod) when others come or go, and ends
// when it goes; "0" is the echo backend's one endpoint.
func endpointKey(addr string) string {
	if addr == "" {
		return "0"
	}
	h := fnv.New64a()
	h.Write([]byte(addr))
	return strconv.FormatUint(h.Sum64(), 36)
}

// endpointKeys indexes an upstream's endpoints by endpointKey (nil: none
// or echo).
func endpointKeys(u *upstream) map[string]int {
	if u == nil || len(u.addrs) == 0 {
		return nil
	}
	m := make(map[string]int, len(u.addrs))
	for i, a := range u.addrs {
		m[endpointKey(a)] = i
	}
	return m
}

// endpoint returns the index of the endpoint a session's key names, if the
// backend still has it.
func (b *backendRoutes) endpoint(key string) (int, bool) {
	if b.up == nil {
		return 0, false
	}
	if len(b.up.addrs) == 0 {
		return 0, key == endpointKey("")
	}
	i, ok := b.endpoints[key]
	return i, ok
}

// issue makes the session value for endpoint idx of a backend.
func (p *sessionPolicy) issue(b *backendRoutes, idx int, now time.Time) string {
	exp := "0"
	if p.timeout > 0 {
		exp = strconv.FormatInt(now.Add(p.timeout).Unix(), 36)
	}
	addr := ""
	if b.up != nil && idx >= 0 && idx < len(b.up.addrs) {
		addr = b.up.addrs[idx]
	}
	return b.token + "." + endpointKey(addr) + "." + exp
}

// write sends a new session value to the client.
func (p *sessionPolicy) write(h http.Header, value string) {
	if p.header {
		h.Set(p.name, value)
		return
	}
	c := &http.Cookie{Name: p.name, Value: value, Path: p.path, HttpOnly: true}
	if p.permanent && p.timeout > 0 {
		c.MaxAge = int(p.timeout / time.Second)
	}
	h.Add("Set-Cookie", c.String())
}

// noteBackendFault records, in the trace of the request whose context is
// ctx, something a backend did wrong on a pooled connection (the pool's
// fault function, package h1).
func noteBackendFault(ctx context.Context, what string) {
	ex := exchangeFrom(ctx)
	if ex == nil {
		ex, _ = ctx.Value(authExchangeKey{}).(*exchange)
	}
	if ex == nil {
		return
	}
	if ex.trace.BackendFault != "" {
		what = ex.trace.BackendFault + "; " + what
	}
	ex.trace.BackendFault = what
}

// authExchangeKey carries, in an ExternalAuth request's context, the
// exchange whose trace notes the auth backend's faults.
type authExchangeKey struct{}
