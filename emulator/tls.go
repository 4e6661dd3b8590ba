package emulator

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// TLS ports: a port whose listeners are HTTPS or TLS shares one socket. The
// ClientHello's SNI selects the listener the way a Host selects one on an
// HTTP port (exact, then the longest wildcard, then the listener without a
// hostname); an HTTPS listener terminates TLS with its certificates and
// serves HTTP/1.1 and HTTP/2 (ALPN), a TLS listener in Terminate mode
// forwards the decrypted stream, and one in Passthrough mode forwards the
// raw stream, ClientHello included (passthrough.go).

// tlsHandshakeTimeout bounds the time from accepting a connection on a TLS
// port to the end of its handshake.
const tlsHandshakeTimeout = 10 * time.Second

// httpsALPN are the application protocols an HTTPS listener offers.
var httpsALPN = []string{"h2", "http/1.1"}

// tlsMode is how a listener of a TLS port treats a connection.
type tlsMode int

const (
	tlsHTTPS       tlsMode = iota // terminate, then serve HTTP
	tlsTerminate                  // terminate, then forward the stream (TLSRoute)
	tlsPassthrough                // forward the raw stream (TLSRoute)
)

func (m tlsMode) String() string {
	switch m {
	case tlsTerminate:
		return "TLS Terminate"
	case tlsPassthrough:
		return "TLS Passthrough"
	}
	return "HTTPS"
}

// tlsRoutes is the compiled TLS side of a TLS port.
type tlsRoutes struct {
	// listeners parallels portRoutes.listeners.
	listeners []*tlsListener
	// streams is set when a listener of the port is a TLS listener
	// (TLSRoute streams), not HTTPS.
	streams bool
}

// tlsListener is a compiled HTTPS or TLS listener.
type tlsListener struct {
	l    *table.ListenerTable
	mode tlsMode
	// conf terminates TLS (HTTPS and Terminate); nil for Passthrough and
	// when the listener is broken.
	conf *tls.Config
	// broken, when set, is why connections for this listener are refused.
	broken string
	// certs are the certificates conf serves, parallel to conf.Certificates.
	certs []*table.Certificate
	// clientCAs verifies client certificates (nil: no client validation);
	// insecureFallback lets connections without a valid one in.
	clientCAs        *x509.CertPool
	insecureFallback bool
	// routes are the listener's TLSRoute entries, most specific hostname
	// first; index finds the entry for an SNI.
	routes []*sniRoute
	index  hostIndex
}

// sniRoute is one compiled TLSRoute entry: a hostname and its backends.
type sniRoute struct {
	r      *table.SNIRoute
	at     *RuleAt // Trace.Matched
	source string
	weightedBackends
}

// isTLSProtocol reports whether a listener protocol is served on a TLS port.
func isTLSProtocol(p table.ProtocolType) bool {
	return p == table.HTTPSProtocolType || p == table.TLSProtocolType
}

// tlsPort compiles the TLS side of a port whose listeners are HTTPS or TLS.
// It returns why the port cannot be served at all ("" : it can), which is
// when no listener of the port is usable.
func (c *compiler) tlsPort(pr *portRoutes) string {
	tr := &tlsRoutes{}
	var broken []string
	for _, lr := range pr.listeners {
		tl := c.tlsListener(lr.l)
		tr.listeners = append(tr.listeners, tl)
		tr.streams = tr.streams || tl.mode != tlsHTTPS
		if tl.broken != "" {
			broken = append(broken, fmt.Sprintf("%s listener %s: %s", tl.mode, lr.l.SectionName, tl.broken))
		}
	}
	pr.tls = tr
	if len(broken) == len(tr.listeners) {
		return strings.Join(broken, "; ")
	}
	return ""
}

func (c *compiler) tlsListener(l *table.ListenerTable) *tlsListener {
	tl := &tlsListener{l: l}
	switch {
	case l.Protocol == table.HTTPSProtocolType:
		tl.mode = tlsHTTPS
	case l.TLS != nil && l.TLS.Mode == table.TLSModePassthrough:
		tl.mode = tlsPassthrough
	default:
		tl.mode = tlsTerminate
	}
	if tl.mode != tlsHTTPS {
		c.sniRoutes(tl)
	}
	if l.TLS == nil {
		tl.broken = "the table gives it no TLS configuration"
		return tl
	}
	if tl.mode == tlsPassthrough {
		return tl
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	var problems []string
	for _, cert := range l.TLS.Certificates {
		if cert == nil {
			continue
		}
		pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
		if err != nil {
			problems = append(problems, fmt.Sprintf("Secret %s: %v", cert.Secret, err))
			continue
		}
		conf.Certificates = append(conf.Certificates, pair)
		tl.certs = append(tl.certs, cert)
	}
	if len(conf.Certificates) == 0 {
		tl.broken = "no usable certificate"
		if len(problems) > 0 {
			tl.broken += " (" + strings.Join(problems, "; ") + ")"
		}
		return tl
	}
	if tl.mode == tlsHTTPS {
		conf.NextProtos = httpsALPN
	}
	if err := applyTLSLimits(conf, l.TLS.Limits); err != nil { // tlsoptions.go
		tl.broken = "tls.options: " + err.Error()
		return tl
	}
	if err := tl.clientValidation(conf); err != nil {
		tl.broken = err.Error()
		return tl
	}
	tl.conf = conf
	return tl
}

// clientValidation configures frontend client certificate validation:
// AllowValidOnly requires a certificate that chains to the CAs;
// AllowInsecureFallback asks for one but lets the connection in without a
// valid one (the request trace says which it was).
func (tl *tlsListener) clientValidation(conf *tls.Config) error {
	t := tl.l.TLS
	if len(t.ClientCAs) == 0 {
		return nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(t.ClientCAs) {
		return fmt.Errorf("client validation CA bundle (%s) holds no certificate", strings.Join(t.ClientCARefs, ", "))
	}
	tl.clientCAs = pool
	if t.ClientValidationMode == table.AllowInsecureFallback {
		tl.insecureFallback = true
		conf.ClientAuth = tls.RequestClientCert
		return nil
	}
	conf.ClientAuth = tls.RequireAndVerifyClientCert
	conf.ClientCAs = pool
	return nil
}

// sniRoutes compiles a TLS listener's TLSRoute entries.
func (c *compiler) sniRoutes(tl *tlsListener) {
	hosts := make([]string, 0, len(tl.l.TLSRoutes))
	for _, r := range tl.l.TLSRoutes {
		if r == nil {
			continue
		}
		sr := &sniRoute{r: r, at: ruleAt(r.Route, r.Index), source: r.Source.String()}
		sr.picks = c.pool.picks
		for _, b := range r.Backends {
			if b == nil {
				continue
			}
			sr.add(c.backend(b), b.Weight)
		}
		tl.routes = append(tl.routes, sr)
		h := ""
		if len(r.Hostnames) > 0 {
			h = r.Hostnames[0]
		}
		hosts = append(hosts, h)
	}
	tl.index = newHostIndex(hosts)
}

// listenerFor returns the index of the listener an SNI selects (-1: none).
// A ClientHello without SNI selects the listener without a hostname.
func (tr *tlsRoutes) listenerFor(pr *portRoutes, sni string) int {
	return pr.index.Lookup(wire.NormalizeSNI(sni))
}

// checkTLS records a request's TLS connection in its trace and enforces the
// HTTPS listener hostname at the HTTP layer: a request whose Host selects
// another listener of the port than the connection's SNI did gets 421
// Misdirected Request, so that the client retries on a connection of its
// own (the Gateway API's HTTPS listener hostname rules, conformance test
// HTTPRouteHTTPSListenerDetectMisdirectedRequests).
func (ex *exchange) checkTLS(pr *portRoutes) (action, bool) {
	cs := ex.req.TLS
	if cs == nil || pr.tls == nil {
		return 0, false
	}
	t := &ex.trace
	t.SNI, t.NegotiatedProtocol = cs.ServerName, cs.NegotiatedProtocol
	if cs.Version != 0 {
		t.TLSVersion = tls.VersionName(cs.Version)
	}
	if st, ok := ex.req.Context().Value(servedTLSKey{}).(*servedTLS); ok { // tlsconn.go
		t.Certificate, t.ALPN = st.cert, st.alpn
	}
	byName := pr.tls.listenerFor(pr, cs.ServerName)
	if byName < 0 {
		return 0, false // the handshake refuses these; Explain may ask anyway
	}
	tl := pr.tls.listeners[byName]
	t.ClientCert = tl.describeClientCert(cs)
	byHost := pr.index.Lookup(ex.host)
	if byHost == byName {
		return 0, false
	}
	t.Listener = tl.l.Name
	sni := cs.ServerName
	if sni == "" {
		sni = "(none)"
	}
	if byHost < 0 {
		t.Reason = fmt.Sprintf("misdirected request: the connection's SNI %s selected listener %s, and no listener of port %d serves Host %q",
			sni, tl.l.Name, pr.port.Port, ex.host)
	} else {
		t.Reason = fmt.Sprintf("misdirected request: the connection's SNI %s selected listener %s, but Host %q belongs to listener %s; open a connection for that host",
			sni, tl.l.Name, ex.host, pr.listeners[byHost].l.Name)
	}
	ex.status = http.StatusMisdirectedRequest
	return actMisdirected, true
}

// describeClientCert says, for a trace, which client certificate the
// connection presented and what validation made of it ("" : the listener
// does not validate client certificates).
func (tl *tlsListener) describeClientCert(cs *tls.ConnectionState) string {
	if tl.clientCAs == nil {
		return ""
	}
	if len(cs.PeerCertificates) == 0 {
		if tl.insecureFallback {
			return "none (let in: AllowInsecureFallback)"
		}
		return "none"
	}
	leaf := cs.PeerCertificates[0]
	who := leaf.Subject.String()
	if who == "" {
		who = "serial " + leaf.SerialNumber.String()
	}
	if len(cs.VerifiedChains) > 0 {
		return who + " (verified)"
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: tl.clientCAs, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return who + " (not valid: " + err.Error() + "; let in: AllowInsecureFallback)"
	}
	return who + " (verified)"
}

// certificateFor returns the certificate the listener serves for an SNI,
// as crypto/tls chooses it: the first that the ClientHello supports, else
// the first.
func (tl *tlsListener) certificateFor(hello *tls.ClientHelloInfo) *table.Certificate {
	if tl.conf == nil || len(tl.certs) == 0 {
		return nil
	}
	for i := range tl.conf.Certificates {
		if hello.SupportsCertificate(&tl.conf.Certificates[i]) == nil {
			return tl.certs[i]
		}
	}
	return tl.certs[0]
}
