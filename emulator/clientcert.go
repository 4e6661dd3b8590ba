package emulator

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// The Gateway's client certificate to backends. When the table gives a
// backend's TLS settings a client certificate (the Gateway's
// spec.tls.backend.clientCertificateRef), the gateway presents it whenever
// the backend asks for one during the TLS handshake; a TLS client cannot
// present one unasked. Each backend connection remembers whether it did, so
// the trace of every request says so, on a new connection or a reused one.
// The key never leaves the tls.Config.

// clientCertConn is a backend connection that records whether the gateway
// presented its client certificate in the TLS handshake made on it.
type clientCertConn struct {
	net.Conn
	presented atomic.Bool
}

// clientCertDial travels in the context of one upstream attempt. Go's
// transport dials and then makes the TLS handshake with the same context
// (the request's values, not its cancellation), so the dial leaves its
// connection here for the handshake's GetClientCertificate to mark.
type clientCertDial struct {
	conn *clientCertConn
}

type clientCertDialKey struct{}

// withClientCertDial returns ctx carrying a fresh clientCertDial.
func withClientCertDial(ctx context.Context) (context.Context, *clientCertDial) {
	d := &clientCertDial{}
	return context.WithValue(ctx, clientCertDialKey{}, d), d
}

// clientCertDialer wraps a transport's dial so that its connections can
// record the client certificate.
func clientCertDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cc := &clientCertConn{Conn: c}
		if d, ok := ctx.Value(clientCertDialKey{}).(*clientCertDial); ok {
			d.conn = cc
		}
		return cc, nil
	}
}

// CloseWrite half-closes the underlying connection, if it can.
func (c *clientCertConn) CloseWrite() error {
	wire.CloseWrite(c.Conn)
	return nil
}

// presentClientCertificate makes conf present the certificate whenever the
// backend asks, marking the connection of the handshake.
func presentClientCertificate(conf *tls.Config, c *table.Certificate) error {
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		return err
	}
	conf.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if d, ok := cri.Context().Value(clientCertDialKey{}).(*clientCertDial); ok && d.conn != nil {
			d.conn.presented.Store(true)
		}
		return &pair, nil
	}
	return nil
}

// clientCertNote is what a trace says about the client certificate of
// Secret secret on a connection: presented, or not asked for.
func clientCertNote(secret string, presented bool) string {
	if presented {
		return "Secret " + secret + " presented"
	}
	return "Secret " + secret + " not presented: the backend did not ask for a client certificate"
}

// clientCertConfigured is what a trace says before a connection is known
// (Explain, or an attempt that never got one).
func clientCertConfigured(secret string) string {
	return "Secret " + secret + " (presented when the backend asks)"
}

// traceClientCert adds to an upstream attempt's context what notes, in the
// exchange's trace, whether the connection the request goes out on had the
// client certificate presented.
func (ex *exchange) traceClientCert(ctx context.Context) context.Context {
	secret := ex.backend.up.clientCert
	if secret == "" {
		return ctx
	}
	ctx, _ = withClientCertDial(ctx)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if cc := connClientCert(info.Conn); cc != nil {
				ex.trace.BackendClientCert = clientCertNote(secret, cc.presented.Load())
			}
		},
	})
}

// connClientCert finds the clientCertConn under a TLS connection (nil: not
// one of ours).
func connClientCert(c net.Conn) *clientCertConn {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return nil
	}
	cc, _ := tc.NetConn().(*clientCertConn)
	return cc
}
