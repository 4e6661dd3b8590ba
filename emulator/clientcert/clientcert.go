// Package clientcert presents the Gateway's client certificate to backends
// and records, per backend connection, whether it did.
//
// When the table gives a backend's TLS settings a client certificate (the
// Gateway's spec.tls.backend.clientCertificateRef), the gateway presents it
// whenever the backend asks for one during the TLS handshake; a TLS client
// cannot present one unasked. Each backend connection remembers whether it
// did, so the trace of every request says so, on a new connection or a
// reused one. The key never leaves the tls.Config.
//
// The package knows nothing of traces: [Trace] hands the note to the
// caller, which writes it where it belongs (package emulator's Trace).
package clientcert

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// Conn is a backend connection that records whether the gateway presented
// its client certificate in the TLS handshake made on it.
type Conn struct {
	net.Conn
	presented atomic.Bool
}

// Presented reports whether the gateway presented its client certificate
// on c.
func (c *Conn) Presented() bool { return c.presented.Load() }

// CloseWrite half-closes the underlying connection, if it can.
func (c *Conn) CloseWrite() error {
	wire.CloseWrite(c.Conn)
	return nil
}

// dial travels in the context of one upstream attempt. Go's transport
// dials and then makes the TLS handshake with the same context (the
// request's values, not its cancellation), so the dial leaves its
// connection here for the handshake's GetClientCertificate to mark.
type dial struct {
	conn *Conn
}

type dialKey struct{}

// WithDial returns ctx carrying a fresh place for the connection a dial
// under it makes, so that a handshake under it marks that connection.
func WithDial(ctx context.Context) context.Context {
	return context.WithValue(ctx, dialKey{}, &dial{})
}

// Wrap wraps an already dialed conn and returns a context under which a TLS
// handshake on the wrapped connection marks it.
func Wrap(ctx context.Context, conn net.Conn) (context.Context, *Conn) {
	cc := &Conn{Conn: conn}
	return context.WithValue(ctx, dialKey{}, &dial{conn: cc}), cc
}

// Dialer wraps a transport's dial so that its connections can record the
// client certificate.
func Dialer(dialer func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cc := &Conn{Conn: c}
		if d, ok := ctx.Value(dialKey{}).(*dial); ok {
			d.conn = cc
		}
		return cc, nil
	}
}

// Present makes conf present the certificate whenever the backend asks,
// marking the connection of the handshake.
func Present(conf *tls.Config, c *table.Certificate) error {
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		return err
	}
	conf.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if d, ok := cri.Context().Value(dialKey{}).(*dial); ok && d.conn != nil {
			d.conn.presented.Store(true)
		}
		return &pair, nil
	}
	return nil
}

// Note is what a trace says about the client certificate of Secret secret
// on a connection: presented, or not asked for.
func Note(secret string, presented bool) string {
	if presented {
		return "Secret " + secret + " presented"
	}
	return "Secret " + secret + " not presented: the backend did not ask for a client certificate"
}

// Configured is what a trace says before a connection is known (Explain,
// or an attempt that never got one).
func Configured(secret string) string {
	return "Secret " + secret + " (presented when the backend asks)"
}

// Trace adds to an upstream attempt's context what hands note the [Note]
// on the client certificate of Secret secret for the connection the
// request goes out on (once it has one of this package's connections).
func Trace(ctx context.Context, secret string, note func(string)) context.Context {
	ctx = WithDial(ctx)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if cc := connOf(info.Conn); cc != nil {
				note(Note(secret, cc.Presented()))
			}
		},
	})
}

// connOf finds the Conn under a TLS connection (nil: not one of ours).
func connOf(c net.Conn) *Conn {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return nil
	}
	cc, _ := tc.NetConn().(*Conn)
	return cc
}
