package tui

import (
	"errors"
	"net"
	"net/http"
	"sort"
	"strings"

	"github.com/gwdev/gwdev/emulator"
)

// traceProtocol is how a traced request or connection reached the
// listener, which decides the command line that repeats it and how a
// replay sends it.
type traceProtocol int

const (
	protoHTTP      traceProtocol = iota // HTTP/1.1 in clear text
	protoH2C                            // HTTP/2 with prior knowledge
	protoHTTPS                          // HTTP over TLS
	protoGRPC                           // gRPC over h2c
	protoGRPCS                          // gRPC over TLS
	protoTLS                            // a TLS connection: TLSRoute stream or a refused handshake
	protoTCP                            // a TCPRoute connection
	protoUDP                            // a UDPRoute session
	protoNoRequest                      // a connection that carried no request
)

// overTLS reports whether the trace's client spoke TLS to the listener
// (HTTPS, gRPC over TLS, a TLS stream or handshake).
func overTLS(t emulator.Trace) bool {
	switch protocolOf(t) {
	case protoHTTPS, protoGRPCS, protoTLS:
		return true
	}
	return false
}

// protocolOf classifies a trace by the fields the data plane sets: Proto
// ("TCP", "UDP", "TLS…", "HTTP/…"), the TLS version or SNI of an HTTP
// request on a TLS port, and GRPC.
func protocolOf(t emulator.Trace) traceProtocol {
	overTLS := t.TLSVersion != "" || t.SNI != ""
	switch {
	case t.Proto == "TCP":
		return protoTCP
	case t.Proto == "UDP":
		return protoUDP
	case strings.HasPrefix(t.Proto, "TLS"):
		return protoTLS
	case t.Method == "":
		return protoNoRequest
	case t.GRPC && overTLS:
		return protoGRPCS
	case t.GRPC:
		return protoGRPC
	case overTLS:
		return protoHTTPS
	case t.Proto == "HTTP/2.0":
		return protoH2C
	}
	return protoHTTP
}

// commandLine is commandLineTrusting with no CA known: HTTPS and gRPC over
// TLS commands skip verification (-k, -insecure).
func commandLine(t emulator.Trace) (string, int, error) {
	return commandLineTrusting(t, serverTrust{})
}

// commandLineTrusting renders the trace as the command that repeats it, in
// its protocol: curl for HTTP (--http2-prior-knowledge for h2c, --resolve
// for HTTPS so that SNI and Host are the original ones), grpcurl for gRPC,
// openssl s_client for TLS streams and handshakes, nc for TCP and UDP.
// Over TLS, st says how the client verifies the server: with a CA file
// (--cacert, -cacert, -CAfile), the system's roots (no flag), or not at
// all (-k, -insecure). Credentials the emulator redacted, and values it
// cut, are left out (counted in the second result); the path is the
// trace's, with sensitive query values redacted.
func commandLineTrusting(t emulator.Trace, st serverTrust) (string, int, error) {
	if t.Address == "" {
		return "", 0, errors.New("the trace has no listener address")
	}
	ip, port, err := net.SplitHostPort(t.Address)
	if err != nil {
		return "", 0, err
	}
	switch protocolOf(t) {
	case protoTCP:
		return "nc " + ip + " " + port, 0, nil
	case protoUDP:
		return "nc -u " + ip + " " + port, 0, nil
	case protoTLS:
		return opensslLine(t, st), 0, nil
	case protoNoRequest:
		return "", 0, errors.New("the connection carried no request")
	case protoGRPC, protoGRPCS:
		return grpcurlLine(t, st), 0, nil
	}
	c, redacted := curlCommand(t, ip, port, st)
	return c, redacted, nil
}

// curlCommand renders an HTTP request as a curl command line that sends it
// to the same listener (ip and port) with the same Host (and SNI) and
// headers; over TLS it verifies the server as st says.
func curlCommand(t emulator.Trace, ip, port string, st serverTrust) (string, int) {
	h, redacted := replayHeaders(t)
	var b strings.Builder
	b.WriteString("curl -i")
	if t.Method != "" && t.Method != http.MethodGet {
		b.WriteString(" -X " + shellQuote(t.Method))
	}
	host := t.Host
	switch protocolOf(t) {
	case protoHTTPS:
		switch {
		case st.caFile != "":
			b.WriteString(" --cacert " + shellQuote(st.caFile))
		case !st.system:
			b.WriteString(" -k")
		}
		if t.NegotiatedProtocol == "http/1.1" {
			b.WriteString(" --http1.1")
		}
		if t.SNI == "" {
			// No SNI: the client connected by address.
			b.WriteString(" " + shellQuote("https://"+t.Address+t.Path))
			break
		}
		// curl sends the URL's host as SNI: resolve it to the listener.
		b.WriteString(" --resolve " + shellQuote(net.JoinHostPort(t.SNI, port)+":"+ip))
		b.WriteString(" " + shellQuote("https://"+net.JoinHostPort(t.SNI, port)+t.Path))
		if host == t.SNI {
			host = "" // the URL says it
		}
	case protoH2C:
		b.WriteString(" --http2-prior-knowledge " + shellQuote("http://"+t.Address+t.Path))
	default:
		b.WriteString(" " + shellQuote("http://"+t.Address+t.Path))
	}
	if host != "" {
		b.WriteString(" -H " + shellQuote("Host: "+host))
	}
	if strings.Contains(h.Get("Accept-Encoding"), "gzip") {
		b.WriteString(" --compressed") // curl then decodes the body it asked for
		h.Del("Accept-Encoding")
	}
	writeHeaders(&b, h, "-H")
	return b.String(), redacted
}

// writeHeaders appends the headers in name order as flag 'Name: value'.
func writeHeaders(b *strings.Builder, h http.Header, flag string) {
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range h[n] {
			b.WriteString(" " + flag + " " + shellQuote(n+": "+v))
		}
	}
}

// grpcHeaders are the request headers gRPC itself sets; grpcurl and
// grpc-go write their own.
var grpcHeaders = map[string]bool{"Content-Type": true, "Te": true, "Grpc-Timeout": true,
	"Grpc-Accept-Encoding": true, "Grpc-Encoding": true, "User-Agent": true}

// grpcMetadata is a gRPC request's metadata as it can be sent again, with
// the original User-Agent's own part separately: gRPC clients append
// their name to it ("probe/1.0 grpc-go/1.81.1"), and grpc-go or grpcurl
// append theirs again.
func grpcMetadata(t emulator.Trace) (http.Header, string) {
	h, _ := replayHeaders(t)
	ua := h.Get("User-Agent")
	if i := strings.LastIndex(ua, " grpc-go/"); i >= 0 {
		ua = ua[:i]
	} else if strings.HasPrefix(ua, "grpc-go/") {
		ua = ""
	}
	for n := range h {
		if grpcHeaders[http.CanonicalHeaderKey(n)] {
			h.Del(n)
		}
	}
	return h, ua
}

// grpcurlLine renders a gRPC call as a grpcurl command (the call's message
// is not in the trace: grpcurl sends an empty one); over TLS it verifies
// the server as st says.
func grpcurlLine(t emulator.Trace, st serverTrust) string {
	var b strings.Builder
	b.WriteString("grpcurl")
	if protocolOf(t) == protoGRPCS {
		switch {
		case st.caFile != "":
			b.WriteString(" -cacert " + shellQuote(st.caFile))
		case !st.system:
			b.WriteString(" -insecure")
		}
		if t.SNI != "" {
			b.WriteString(" -servername " + shellQuote(t.SNI))
		}
	} else {
		b.WriteString(" -plaintext")
	}
	if t.Host != "" {
		b.WriteString(" -authority " + shellQuote(t.Host))
	}
	md, ua := grpcMetadata(t)
	if ua != "" {
		b.WriteString(" -user-agent " + shellQuote(ua))
	}
	writeHeaders(&b, md, "-H")
	method := strings.TrimPrefix(t.Path, "/")
	if t.GRPCService != "" {
		method = t.GRPCService + "/" + t.GRPCMethod
	}
	b.WriteString(" " + t.Address + " " + shellQuote(method))
	return b.String()
}

// opensslLine renders a TLS connection as the openssl s_client command that
// sends the same ClientHello essentials: SNI (or none) and ALPN. When st
// says the server verifies (with a CA file, or the system's roots), the
// command checks the certificate and the name (the SNI, or the address) and
// stops if that fails; openssl otherwise reports a verification failure and
// goes on.
func opensslLine(t emulator.Trace, st serverTrust) string {
	s := "openssl s_client -connect " + t.Address
	if t.SNI != "" {
		s += " -servername " + shellQuote(t.SNI)
	} else {
		s += " -noservername"
	}
	if st.verifies() {
		if st.caFile != "" {
			s += " -CAfile " + shellQuote(st.caFile)
		}
		if t.SNI != "" {
			s += " -verify_hostname " + shellQuote(t.SNI)
		} else if ip, _, err := net.SplitHostPort(t.Address); err == nil {
			s += " -verify_ip " + ip
		}
		s += " -verify_return_error"
	}
	if len(t.ALPN) > 0 {
		s += " -alpn " + shellQuote(strings.Join(t.ALPN, ","))
	}
	return s
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
