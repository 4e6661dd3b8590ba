package tui

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/gwdev/gwdev/emulator"
)

// replayTrace sends the traced request, or opens the traced connection,
// again to the listener address it arrived on, in the same protocol: HTTP
// in clear text (client), h2c, HTTPS with the original SNI and ALPN, gRPC
// over h2c or TLS, a TLS handshake, a TCP connection. It returns the status
// line to show.
func replayTrace(ctx context.Context, client *http.Client, t emulator.Trace) (string, error) {
	if t.Address == "" {
		return "", errors.New("the trace has no listener address")
	}
	switch protocolOf(t) {
	case protoHTTP:
		return replayHTTP(ctx, client, t, "http")
	case protoH2C:
		tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		return replayHTTP(ctx, transportClient(tr), t, "http")
	case protoHTTPS:
		conf := replayTLSConfig(t)
		// The transport speaks HTTP/2 when the handshake agrees h2; it is
		// not given conf, which it would extend with h2.
		tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, ForceAttemptHTTP2: true}
		tr.DialTLSContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialTLS(ctx, t.Address, conf.Clone())
		}
		return replayHTTP(ctx, transportClient(tr), t, "https")
	case protoGRPC, protoGRPCS:
		return replayGRPC(ctx, t)
	case protoTLS:
		return replayTLS(ctx, t)
	case protoTCP:
		return replayTCP(ctx, t)
	case protoUDP:
		return "", errors.New("UDP datagrams are not recorded in traces; send them again with: nc -u " + strings.Replace(t.Address, ":", " ", 1))
	}
	return "", errors.New("the connection carried no request")
}

// transportClient is a replay client over tr.
func transportClient(tr *http.Transport) *http.Client {
	return &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// replayTLSConfig is the ClientHello of the traced connection: its SNI
// (none when it had none) and ALPN. The listener's certificate is not
// verified: the replay repeats the request, whoever signed the certificate.
func replayTLSConfig(t emulator.Trace) *tls.Config {
	conf := &tls.Config{ServerName: t.SNI, InsecureSkipVerify: true} //nolint:gosec // replaying to gwdev's own listener
	switch {
	case len(t.ALPN) > 0:
		conf.NextProtos = t.ALPN
	case t.NegotiatedProtocol != "":
		conf.NextProtos = []string{t.NegotiatedProtocol}
	}
	return conf
}

// dialTLS connects to addr and completes the handshake with conf.
func dialTLS(ctx context.Context, addr string, conf *tls.Config) (*tls.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(c, conf)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("TLS handshake (SNI %q): %w", conf.ServerName, err)
	}
	return tc, nil
}

// replayHTTP sends the request with its method, Host and headers (User-Agent
// included) to the listener.
func replayHTTP(ctx context.Context, client *http.Client, t emulator.Trace, scheme string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, orDefault(t.Method, http.MethodGet), scheme+"://"+t.Address+t.Path, nil)
	if err != nil {
		return "", err
	}
	req.Header, _ = replayHeaders(t)
	if req.Header.Get("User-Agent") == "" {
		req.Header["User-Agent"] = nil // the original had none: send none
	}
	req.Host = t.Host
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	note := ""
	if t.BytesIn > 0 {
		note = " (without its body: traces do not record bodies)"
	}
	return fmt.Sprintf("replayed %s %s%s → %d in %s%s", req.Method, t.Host, t.Path,
		resp.StatusCode, roundDuration(time.Since(start)), note), nil
}

// rawCodec sends and receives gRPC messages as bytes: the trace has no
// message, so the replay sends an empty one.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: %T", v)
	}
	return *b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// replayGRPC calls the traced method again with grpc-go, over h2c or TLS,
// with the original authority, metadata and User-Agent and an empty
// message.
func replayGRPC(ctx context.Context, t emulator.Trace) (string, error) {
	creds := insecure.NewCredentials()
	if protocolOf(t) == protoGRPCS {
		conf := replayTLSConfig(t)
		conf.NextProtos = []string{"h2"}
		creds = credentials.NewTLS(conf)
	}
	md, ua := grpcMetadata(t)
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds), grpc.WithAuthority(t.Host),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}))}
	if ua != "" {
		opts = append(opts, grpc.WithUserAgent(ua))
	}
	conn, err := grpc.NewClient("passthrough:///"+t.Address, opts...)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	pairs := metadata.MD{}
	for n, vs := range md {
		pairs[strings.ToLower(n)] = vs
	}
	ctx = metadata.NewOutgoingContext(ctx, pairs)
	start := time.Now()
	in, out := []byte{}, []byte{}
	err = conn.Invoke(ctx, t.Path, &in, &out)
	st := status.Convert(err)
	if st.Code() == codes.Unavailable && strings.HasPrefix(st.Message(), "connection error") {
		return "", err // no answer at all (grpc-go's own status)
	}
	return fmt.Sprintf("replayed gRPC %s%s → %s in %s (with an empty message: traces do not record messages)",
		t.Host, t.Path, st.Code(), roundDuration(time.Since(start))), nil
}

// replayTLS repeats a TLS connection's ClientHello (SNI and ALPN) and
// reports the handshake; a stream's bytes are not in the trace, so nothing
// is sent after it.
func replayTLS(ctx context.Context, t emulator.Trace) (string, error) {
	start := time.Now()
	tc, err := dialTLS(ctx, t.Address, replayTLSConfig(t))
	if err != nil {
		return "", err
	}
	cs := tc.ConnectionState()
	_ = tc.Close()
	alpn := ""
	if cs.NegotiatedProtocol != "" {
		alpn = ", ALPN " + cs.NegotiatedProtocol
	}
	return fmt.Sprintf("replayed TLS handshake (SNI %q) → %s%s in %s (stream bytes are not recorded: none sent)",
		t.SNI, tls.VersionName(cs.Version), alpn, roundDuration(time.Since(start))), nil
}

// replayTCP opens a TCP connection to the listener again and closes it
// (the stream's bytes are not in the trace).
func replayTCP(ctx context.Context, t emulator.Trace) (string, error) {
	start := time.Now()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", t.Address)
	if err != nil {
		return "", err
	}
	_ = c.Close()
	return fmt.Sprintf("replayed TCP connection to %s in %s (stream bytes are not recorded: none sent)",
		t.Address, roundDuration(time.Since(start))), nil
}
