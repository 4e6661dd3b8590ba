package emulator

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// Explain runs the decisions the data plane makes for one connection or
// request with only the network replaced: the port it arrives on, the TLS
// handshake (the listener the SNI selects, the certificate, client
// certificate validation, or the refusal), then the HTTP routing (listener,
// virtual host, rule/match or why nothing matched, filters, backend with
// its candidates) or the TCP, UDP or TLSRoute stream's backend. The
// functions are the listeners' own (tlsconn.go, handler.go, l4.go,
// passthrough.go, conntrace.go); a differential test in cmd/gwdev keeps
// them honest.

// Probe is one connection or request to explain, as a client sends it.
type Probe struct {
	// Address is the Gateway's address in the table ("" : the first Gateway
	// with a listener on Port).
	Address string
	Port    int32
	// UDP sends datagrams instead of opening a TCP connection.
	UDP bool
	// TLS opens the connection with a TLS ClientHello carrying SNI (none
	// when "") and ALPN, and ClientCert when the server asks for one (nil:
	// none).
	TLS        bool
	SNI        string
	ALPN       []string
	ClientCert *tls.Certificate
	// Request is the HTTP request sent on the connection (nil: none, a raw
	// stream). Its ProtoMajor 2 means h2c with prior knowledge on a plain
	// connection; over TLS the ALPN protocol the handshake agrees decides.
	Request *http.Request
	// CAFiles are the CA bundles a hint's curl line may trust with
	// --cacert (Config.CAFiles; nil: curl -k).
	CAFiles []string
}

// Explain answers for an HTTP request arriving on gatewayAddr:port (the
// Gateway's address and listener port as in the table; "" matches any
// Gateway with that port): over TLS when req.TLS is set (its ServerName is
// the SNI, ALPN h2 and http/1.1), else in clear text (HTTP/2 when
// req.ProtoMajor is 2). Status is the gateway's own answer (404, 421,
// redirect, direct status, CORS preflight, 500/503; 200 with GRPCStatus for
// gRPC) or 0 when the backend would answer. Weighted choices are random, as
// in the data plane.
func Explain(t *table.Table, gatewayAddr string, port int32, req *http.Request) *Trace {
	return ExplainProbe(t, requestProbe(gatewayAddr, port, req))
}

// ExplainProbe answers for a probe; see Explain.
func ExplainProbe(t *table.Table, p Probe) *Trace {
	return explainProbe(explainRouter(t), p)
}

// requestProbe is the probe of an HTTP request (Explain).
func requestProbe(addr string, port int32, req *http.Request) Probe {
	p := Probe{Address: addr, Port: port, Request: req}
	if req.TLS != nil {
		p.TLS, p.SNI, p.ALPN = true, req.TLS.ServerName, httpsALPN
	}
	return p
}

// explainCache keeps the router of the last table Explain saw: tables are
// immutable once produced, so repeated questions about one table compile it
// once.
var explainCache struct {
	sync.Mutex
	table *table.Table
	rt    *router
}

func explainRouter(t *table.Table) *router {
	explainCache.Lock()
	defer explainCache.Unlock()
	if explainCache.table != t || explainCache.rt == nil {
		explainCache.table, explainCache.rt = t, compile(t, nil)
	}
	return explainCache.rt
}

// explainProbe dispatches on what serves the port, as binding does
// (server.go, listeners.go): nothing, an L4 proxy, a TLS port, or an HTTP
// server.
func explainProbe(rt *router, p Probe) *Trace {
	now := time.Now()
	transport := "TCP"
	if p.UDP {
		transport = "UDP"
	}
	pr := rt.lookupTransport(p.Address, p.Port, transport)
	switch {
	case pr != nil && pr.notServed != "":
		t := l4Trace("", pr, transport, "", now)
		t.Listener = ""
		t.Reason, t.End = "nothing listens on the port: "+pr.notServed, EndRefused
		return finishExplain(&t, nil)
	case pr != nil && isL4(pr.protocol):
		return explainStream(pr, transport, now)
	case p.UDP:
		t := Trace{Time: now, Port: p.Port, Proto: transport, Reason: noGatewayReason(rt, p.Address, p.Port, "TCP"), End: EndRefused}
		return finishExplain(&t, nil)
	case pr != nil && pr.tls != nil:
		return explainTLSPort(rt, pr, p, now)
	case p.TLS && pr != nil:
		return explainTLSOnPlain(pr, p, now)
	case p.Request == nil && pr != nil:
		t := Trace{Time: now, Gateway: pr.gateway.Name, Port: pr.port.Port}
		noRequest(&t, nil, nil, 0)
		return finishExplain(&t, nil)
	}
	if p.Request == nil {
		t := Trace{Time: now, Port: p.Port, Reason: noGatewayReason(rt, p.Address, p.Port, "UDP"), End: EndRefused}
		return finishExplain(&t, nil)
	}
	return explainRequest(rt, pr, trustCAFiles(p.CAFiles), p.Port, p.Request, now)
}

// explainStream answers for a connection or session on a TCP or UDP port.
func explainStream(pr *portRoutes, transport string, now time.Time) *Trace {
	t := l4Trace("", pr, transport, "", now)
	kind := "TCPRoute"
	if transport == "UDP" {
		kind = "UDPRoute"
	}
	b := decideL4(pr, &t, kind)
	if pr.stream != nil {
		t.Candidates = candidates(&pr.stream.weightedBackends)
	}
	if b == nil {
		t.End = EndRefused
	}
	return finishExplain(&t, b)
}

// explainTLSPort runs the port's handshake against a crypto/tls client (or
// the clear-text bytes a client without TLS sends) over an in-memory pipe,
// then explains the HTTPS request or the TLSRoute stream.
func explainTLSPort(rt *router, pr *portRoutes, p Probe, now time.Time) *Trace {
	srv, cli := wire.Pipe()
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cli.Close()
		clientSide(cli, p)
	}()
	hc := newHandshakeConn(srv, pr, trustCAFiles(p.CAFiles))
	tc, outcome, err := hc.run(now)
	_ = srv.Close()
	<-done
	switch outcome {
	case hsFailed:
		// The Gateway's address from the table names where to connect in
		// the refusal's hint (the data plane names the address it bound).
		t := hc.failure(net.JoinHostPort(pr.gateway.Address, strconv.Itoa(int(pr.port.Port))), err, now)
		t.Client, t.Address, t.Duration = "", "", 0
		return finishExplain(&t, nil)
	case hsHTTPS:
		if p.Request == nil {
			t := hc.trace("", now)
			t.Client = ""
			t.Reason = "the handshake completes; listener " + hc.tl.l.Name + " then expects HTTP requests"
			return finishExplain(&t, nil)
		}
		cs := tc.ConnectionState()
		req := p.Request.WithContext(withServedCert(p.Request.Context(), tc))
		req.TLS = &cs
		setProto(req, cs.NegotiatedProtocol == "h2")
		return explainRequest(rt, pr, hc.trust, pr.port.Port, req, now)
	}
	t := hc.trace("", now)
	t.Client = ""
	if outcome == hsPassthrough {
		tc = nil
	}
	b := hc.decideStream(&t, tc)
	t.Candidates = candidates(&hc.route.weightedBackends)
	return finishExplain(&t, b)
}

// clientSide is the client of explainTLSPort and explainTLSOnPlain: a
// crypto/tls handshake for a TLS probe, else the first bytes of its
// request in clear text (nothing for a raw stream).
func clientSide(c *wire.Conn, p Probe) {
	if !p.TLS {
		switch {
		case p.Request == nil:
		case p.Request.ProtoMajor == 2:
			_, _ = c.Write([]byte(http2Preface))
		default:
			_ = p.Request.Clone(p.Request.Context()).Write(c)
		}
		_ = c.CloseWrite()
		_, _ = io.Copy(io.Discard, c)
		return
	}
	conf := &tls.Config{ServerName: p.SNI, NextProtos: p.ALPN, InsecureSkipVerify: true} //nolint:gosec // explain reports the certificate; it does not trust it
	if p.ClientCert != nil {
		conf.Certificates = []tls.Certificate{*p.ClientCert}
	}
	tc := tls.Client(c, conf)
	if tc.Handshake() == nil {
		// A TLS 1.3 server reads the client's Finished (and certificate)
		// after the client is done: wait for its verdict.
		var b [1]byte
		_, _ = tc.Read(b[:])
	}
}

// explainTLSOnPlain answers for a TLS ClientHello sent to a plain HTTP
// port: net/http reads it as a malformed request, and the connection
// trace says why (conntrace.go).
func explainTLSOnPlain(pr *portRoutes, p Probe, now time.Time) *Trace {
	srv, cli := wire.Pipe()
	go func() {
		defer cli.Close()
		conf := &tls.Config{ServerName: p.SNI, NextProtos: p.ALPN, InsecureSkipVerify: true} //nolint:gosec // never completes
		_ = tls.Client(cli, conf).Handshake()
	}()
	head := make([]byte, headSize)
	n, _ := srv.Read(head)
	_ = srv.Close()
	t := Trace{Time: now, Gateway: pr.gateway.Name, Port: pr.port.Port, BytesIn: int64(n)}
	noRequest(&t, head[:n], nil, 0)
	return finishExplain(&t, nil)
}

// setProto sets the request's protocol version.
func setProto(req *http.Request, h2 bool) {
	if h2 {
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0
		return
	}
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/1.1", 1, 1
}

// explainRequest runs the HTTP routing decision (handler.go) for req.
func explainRequest(rt *router, pr *portRoutes, trust caTrust, port int32, req *http.Request, now time.Time) *Trace {
	if req.Host == "" && req.URL != nil {
		req.Host = req.URL.Host
	}
	ex := newExchange(req, now)
	ex.trace.Port = port
	via := rt.via
	if via == nil {
		via = &explainVia // the offline Explain (loop.go)
	}
	ex.via, ex.passes = via, via.passes(req.Header)
	act := ex.decide(pr)
	preRouting := act == actPreRouting
	if preRouting { // explain asks no auth server: route as if it allowed, adding nothing
		ex.preRouted = true
		act = ex.decide(pr)
	}
	noteServedElsewhere(rt, rt.tableAddresses, trust, ex, act) // hints.go
	t := &ex.trace
	if ex.rule != nil {
		t.Candidates = candidates(&ex.rule.weightedBackends)
		if ex.vhost != nil {
			t.Outranked = ex.vhost.outranked(&ex.view, ex.rule)
		}
	}
	if act != actProxy {
		t.Status = ex.status
		if ex.view.grpc && act != actRedirect && act != actPreflight {
			code := ex.grpcCode(ex.status)
			t.Status, t.GRPCStatus = http.StatusOK, codes.Code(code).String()
			t.Reason = grpcReason(t.Reason, code)
		}
	} else if ex.backend.up.echo != nil {
		t.Upstream = "echo"
	} else if ex.pinAddr >= 0 && ex.pinAddr < len(ex.backend.up.addrs) {
		t.Upstream = ex.backend.up.addrs[ex.pinAddr]
	}
	if ex.view.grpc {
		t.GRPCService, t.GRPCMethod = ex.view.grpcService, ex.view.grpcMethod
	}
	switch {
	case preRouting:
		then := "forwarded"
		if t.Reason != "" && act != actProxy {
			then = t.Reason
		}
		t.Reason = "only if the listener's pre-routing ExternalAuth check allows it (explain does not ask the auth server; a failing one denies with 403, before any route is matched, and the headers it allows are not on this request); then: " + then
	case (act == actProxy || act == actRedirect) && len(ex.auths) > 0:
		t.Reason = "only if the ExternalAuth check allows it (explain does not ask the auth server; a failing one denies with 403)"
	}
	t.RequestHeaders = req.Header
	redactTrace(t)
	return t
}

// finishExplain completes the trace of a stream or a refused connection:
// the upstream of the chosen backend, credentials redacted.
func finishExplain(t *Trace, b *backendRoutes) *Trace {
	if b != nil && b.up != nil && b.up.echo != nil {
		t.Upstream = "echo"
	}
	redactTrace(t)
	return t
}

// tableAddresses maps every served port to the Gateway's address and port
// in the table: where Explain says a host is served (the data plane names
// the address it bound, which differs only by a port offset or an address
// override).
func (rt *router) tableAddresses() map[*portRoutes]string {
	out := make(map[*portRoutes]string, len(rt.order))
	for _, pr := range rt.order {
		if pr.notServed == "" {
			out[pr] = net.JoinHostPort(pr.gateway.Address, strconv.Itoa(int(pr.port.Port)))
		}
	}
	return out
}

// noGatewayReason says that nothing listens on the port, and whether it is
// served over the other transport.
func noGatewayReason(rt *router, addr string, port int32, other string) string {
	r := "no Gateway serves this address and port"
	if pr := rt.lookupTransport(addr, port, other); pr != nil && pr.notServed == "" {
		use := "tcp://"
		switch {
		case other == "UDP":
			use = "udp://"
		case pr.tls != nil:
			use = "https://, grpcs:// or tls://"
		case pr.protocol == "HTTP":
			use = "http:// or grpc://"
		}
		r += fmt.Sprintf(" (port %d is served by %s listeners: use %s)", port, pr.protocol, use)
	}
	return r
}
