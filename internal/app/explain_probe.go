package app

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/emulator"
)

// ProbeFlags are explain's flags that shape the request or connection
// (ProbeFlags.Probe builds it from a URL).
type ProbeFlags struct {
	// Method is -X; MethodSet says whether it was given (gRPC URLs default
	// to POST).
	Method    string
	MethodSet bool
	// Headers are -H 'Name: value' (a Host header sets the request's host).
	Headers []string
	// SNI is the TLS server name of an https, grpcs or tls URL, used when
	// SNISet (--sni was given; "" then sends none); else the URL's host.
	SNI    string
	SNISet bool
	// ALPN overrides the protocols the ClientHello offers (nil: by scheme).
	ALPN []string
	// HTTP2 sends HTTP/2 (h2c on http://, ALPN h2 on https://); HTTP1
	// sends HTTP/1.1 even for a gRPC content type.
	HTTP2, HTTP1 bool
	// CertFile and KeyFile are the client certificate a TLS probe presents
	// ("": none).
	CertFile, KeyFile string
}

// explainSchemes says what each URL scheme of `gwdev explain` sends, with
// its default port (0: the URL must name one).
var explainSchemes = map[string]struct {
	port int
	what string
}{
	"http":  {80, "an HTTP request in clear text (HTTP/1.1; h2c with --http2 or a gRPC content type)"},
	"https": {443, "an HTTP request over TLS (SNI the URL's host or --sni; ALPN h2,http/1.1)"},
	"grpc":  {80, "a gRPC call over h2c: POST /<service>/<method>, content-type application/grpc"},
	"grpcs": {443, "a gRPC call over TLS (ALPN h2)"},
	"tls":   {443, "a TLS connection without HTTP (TLSRoute; SNI the URL's host or --sni)"},
	"tcp":   {0, "a TCP connection (TCPRoute)"},
	"udp":   {0, "UDP datagrams (UDPRoute)"},
}

// ExplainSchemesHelp lists explain's URL schemes for --help.
func ExplainSchemesHelp() string {
	var b strings.Builder
	for _, s := range []string{"http", "https", "grpc", "grpcs", "tls", "tcp", "udp"} {
		fmt.Fprintf(&b, "  %-6s %s\n", s+"://", explainSchemes[s].what)
	}
	return b.String()
}

// Probe builds the connection or request to explain from the URL and the
// flags.
func (o *ProbeFlags) Probe(rawURL string) (emulator.Probe, error) {
	if !strings.Contains(rawURL, "://") {
		rawURL = "http://" + rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return emulator.Probe{}, fmt.Errorf("URL %q: %w", rawURL, err)
	}
	scheme := strings.ToLower(u.Scheme)
	sc, ok := explainSchemes[scheme]
	if !ok {
		return emulator.Probe{}, fmt.Errorf("URL %q: unknown scheme %q (want http, https, grpc, grpcs, tls, tcp or udp)", rawURL, u.Scheme)
	}
	port := sc.port
	if p := u.Port(); p != "" {
		port, err = strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return emulator.Probe{}, fmt.Errorf("URL %q: bad port", rawURL)
		}
	}
	if port == 0 {
		return emulator.Probe{}, fmt.Errorf("URL %q: a %s:// URL needs a port", rawURL, scheme)
	}
	p := emulator.Probe{Port: int32(port), UDP: scheme == "udp"}
	if scheme == "https" || scheme == "grpcs" || scheme == "tls" {
		p.TLS, p.SNI = true, u.Hostname()
		if o.SNISet {
			p.SNI = o.SNI
		}
		if net.ParseIP(p.SNI) != nil {
			p.SNI = "" // clients send no SNI for an address
		}
		if err := o.clientCert(&p); err != nil {
			return p, err
		}
	}
	if scheme == "tls" || scheme == "tcp" || scheme == "udp" {
		if len(o.ALPN) > 0 {
			p.ALPN = o.ALPN
		}
		return p, nil
	}
	req, err := o.httpRequest(u, scheme)
	if err != nil {
		return p, err
	}
	p.Request = req
	if p.TLS {
		p.ALPN = []string{"h2", "http/1.1"}
		switch {
		case len(o.ALPN) > 0:
			p.ALPN = o.ALPN
		case req.ProtoMajor == 2:
			p.ALPN = []string{"h2"}
		case o.HTTP1:
			p.ALPN = []string{"http/1.1"}
		}
	}
	return p, nil
}

// httpRequest builds the HTTP request of an http, https, grpc or grpcs URL.
func (o *ProbeFlags) httpRequest(u *url.URL, scheme string) (*http.Request, error) {
	grpc := scheme == "grpc" || scheme == "grpcs"
	method := strings.ToUpper(o.Method)
	if grpc && !o.MethodSet {
		method = http.MethodPost
	}
	hu := *u
	hu.Scheme = "http"
	if scheme == "https" || scheme == "grpcs" {
		hu.Scheme = "https"
	}
	req, err := http.NewRequest(method, hu.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Host = u.Hostname()
	req.RemoteAddr = net.JoinHostPort("127.0.0.1", "50000")
	if grpc {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
	}
	for _, h := range o.Headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("header %q: want 'Name: value'", h)
		}
		if strings.EqualFold(strings.TrimSpace(name), "host") {
			req.Host = strings.TrimSpace(value)
			continue
		}
		req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	// gRPC is HTTP/2 only: a gRPC content type means a gRPC client, which
	// speaks h2c (prior knowledge) or h2 over TLS.
	h2 := o.HTTP2 || grpc || strings.HasPrefix(req.Header.Get("Content-Type"), "application/grpc")
	if o.HTTP1 {
		h2 = false
	}
	if h2 {
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0
	}
	return req, nil
}

// clientCert loads --cert and --key, the client certificate a TLS probe
// presents when the listener asks for one.
func (o *ProbeFlags) clientCert(p *emulator.Probe) error {
	if o.CertFile == "" && o.KeyFile == "" {
		return nil
	}
	if o.CertFile == "" || o.KeyFile == "" {
		return fmt.Errorf("--cert and --key go together")
	}
	c, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return fmt.Errorf("client certificate %s: %w", o.CertFile, err)
	}
	p.ClientCert = &c
	return nil
}
