package app

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/internal/routetest"
)

// send makes a case's request once, with a real client, to where the
// Gateway gateway serves the probe's port, and describes what happened:
// the data plane's trace of that connection, the answer, and what the
// echo backend reported.
func (s *testServer) send(ctx context.Context, c *routetest.Case, p emulatorProbe, gateway string) *routetest.Actual {
	a := &routetest.Actual{}
	bound := s.bound[gateway][p.Port]
	if bound == "" {
		a.Refused, a.Reason = true, "no Gateway listens on port "+strconv.Itoa(int(p.Port))
		return a
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	sent := time.Now()
	var local string
	dial := func(ctx context.Context, network string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, bound)
		if err == nil {
			local = c.LocalAddr().String()
		}
		return c, err
	}
	tlsConf := &tls.Config{ServerName: p.SNI, NextProtos: p.ALPN, InsecureSkipVerify: true} //nolint:gosec // routing, not certificates, is tested
	if p.ClientCert != nil {
		cert := *p.ClientCert
		tlsConf.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	var err error
	switch {
	case p.Request == nil:
		err = s.sendStream(ctx, c, p, bound, tlsConf, a, &local)
	case p.Request.Header.Get("Content-Type") == "application/grpc" && p.Request.ProtoMajor == 2:
		err = sendGRPC(ctx, c, p, bound, tlsConf, dial, a)
	default:
		err = s.sendHTTP(ctx, c, p, tlsConf, dial, a)
	}
	if local == "" {
		a.Refused = true
		if err != nil {
			a.Reason = err.Error()
		}
		return a
	}
	tr, ok := s.traceOf(local, sent)
	if !ok {
		a.Reason = "the data plane recorded no trace of the connection"
		if err != nil {
			a.Reason = err.Error()
		}
		a.Refused = err != nil
		return a
	}
	a.Listener, a.Service, a.Target, a.AuthAsked = tr.Listener, tr.Service, tr.Target, tr.AuthAsked
	if m := tr.Matched; m != nil {
		a.Route = &routetest.RouteAt{Kind: m.Route.Kind, Namespace: m.Route.Namespace, Name: m.Route.Name, Rule: m.Rule, Match: m.Match}
	}
	a.Reason = tr.Reason
	a.BasicAuth, a.BasicAuthUser = tr.BasicAuth, tr.BasicAuthUser
	a.RateLimited = tr.RateLimited // runCase keeps the first refused request's
	if err != nil && a.Reason == "" {
		a.Reason = err.Error()
	}
	a.Refused = tr.Rule == "" || tr.End == emulator.EndRefused || (err != nil && a.Status == 0 && a.Reply == "" && tr.Upstream == "")
	if a.GRPCStatus == "" {
		a.GRPCStatus = tr.GRPCStatus
	}
	for _, e := range explainPolicies(s.res, &tr) {
		if p := e.Policy.Kind + " " + e.Policy.Namespace + "/" + e.Policy.Name; e.Applied && !slices.Contains(a.Policies, p) {
			a.Policies = append(a.Policies, p)
		}
	}
	s.mirrors(c, a, sent)
	return a
}

// emulatorProbe is the request or connection explain and the runner make
// of a case.
type emulatorProbe = emulator.Probe

// sendHTTP sends an HTTP/1.1 or HTTP/2 request (TLS when the probe says).
func (s *testServer) sendHTTP(ctx context.Context, c *routetest.Case, p emulatorProbe, tlsConf *tls.Config, dial func(context.Context, string) (net.Conn, error), a *routetest.Actual) error {
	h2 := p.Request.ProtoMajor == 2
	tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) { return dial(ctx, network) }}
	tr.Protocols = new(http.Protocols)
	switch {
	case p.TLS:
		tr.DialTLSContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			conn, err := dial(ctx, network)
			if err != nil {
				return nil, err
			}
			tc := tls.Client(conn, tlsConf)
			if err := tc.HandshakeContext(ctx); err != nil {
				_ = conn.Close()
				return nil, err
			}
			return tc, nil
		}
		tr.Protocols.SetHTTP1(true)
		tr.Protocols.SetHTTP2(slices.Contains(p.ALPN, "h2"))
		tr.ForceAttemptHTTP2 = slices.Contains(p.ALPN, "h2")
	case h2:
		tr.Protocols.SetUnencryptedHTTP2(true)
	default:
		tr.Protocols.SetHTTP1(true)
	}
	defer tr.CloseIdleConnections()
	var body io.Reader
	if c.Request.Body != "" {
		body = strings.NewReader(c.Request.Body)
	}
	u := *p.Request.URL
	req, err := http.NewRequestWithContext(ctx, p.Request.Method, u.String(), body)
	if err != nil {
		return err
	}
	req.Header = p.Request.Header.Clone()
	req.Host = hostOfURL(c.Request.URL, p.Request.Host)
	cl := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	a.Status = resp.StatusCode
	a.ResponseHeaders = resp.Header
	a.Location = s.unmovePorts(resp.Header.Get("Location"))
	var er echo.Response
	if json.Unmarshal(b, &er) == nil && er.Service != "" {
		a.Pod = er.Pod
		a.Received = &routetest.ReceivedActual{Service: er.Namespace + "/" + er.Service, Path: er.Path, Host: er.Host, Method: er.Method, Headers: http.Header(er.Headers)}
	}
	return nil
}

// hostOfURL is the Host a client sends for rawURL (its host and port as
// written), unless a Host header set another (set).
func hostOfURL(rawURL, set string) string {
	rest := rawURL
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if h, _, err := net.SplitHostPort(rest); err == nil && strings.EqualFold(h, set) {
		return rest
	}
	if strings.EqualFold(rest, set) {
		return rest
	}
	return set
}

// sendGRPC calls the case's /service/method with grpc-go.
func sendGRPC(ctx context.Context, c *routetest.Case, p emulatorProbe, bound string, tlsConf *tls.Config, dial func(context.Context, string) (net.Conn, error), a *routetest.Actual) error {
	creds := insecure.NewCredentials()
	if p.TLS {
		conf := tlsConf.Clone()
		conf.NextProtos = []string{"h2"}
		creds = credentials.NewTLS(conf)
	}
	conn, err := grpc.NewClient("passthrough:///"+bound, grpc.WithTransportCredentials(creds), grpc.WithAuthority(p.Request.Host),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx, "tcp") }))
	if err != nil {
		return err
	}
	defer conn.Close()
	md := metadata.MD{}
	for k, vs := range p.Request.Header {
		switch strings.ToLower(k) {
		case "content-type", "te":
			continue
		}
		md[strings.ToLower(k)] = vs
	}
	var hdr metadata.MD
	resp := &pb.EchoResponse{}
	err = conn.Invoke(metadata.NewOutgoingContext(ctx, md), p.Request.URL.Path, &pb.EchoRequest{}, resp, grpc.Header(&hdr))
	a.Status = http.StatusOK
	a.GRPCStatus = status.Code(err).String()
	a.ResponseHeaders = http.Header{}
	for k, vs := range hdr {
		a.ResponseHeaders[http.CanonicalHeaderKey(k)] = vs
	}
	if as := resp.GetAssertions(); as != nil {
		h := http.Header{}
		for _, kv := range as.GetHeaders() {
			h.Add(kv.GetKey(), kv.GetValue())
		}
		ctxp := as.GetContext()
		a.Received = &routetest.ReceivedActual{Service: ctxp.GetNamespace() + "/" + ctxp.GetServiceName(), Path: "/" + strings.TrimPrefix(as.GetFullyQualifiedMethod(), "/"), Host: as.GetAuthority(), Method: http.MethodPost, Headers: h}
		a.Pod = as.GetContext().GetPod()
	}
	return nil // an error is a grpc-status, which is checked
}

// sendStream opens a TCP (TLS) connection or sends UDP datagrams, writes
// the case's data and reads the reply.
func (s *testServer) sendStream(ctx context.Context, c *routetest.Case, p emulatorProbe, bound string, tlsConf *tls.Config, a *routetest.Actual, local *string) error {
	network := "tcp"
	if p.UDP {
		network = "udp"
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, network, bound)
	if err != nil {
		return err
	}
	*local = conn.LocalAddr().String()
	defer conn.Close()
	deadline := time.Now().Add(min(s.timeout, 2*time.Second))
	_ = conn.SetDeadline(deadline)
	rw := io.ReadWriter(conn)
	if p.TLS {
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return err
		}
		rw = tc
	}
	data := c.Request.Data
	if data == "" {
		data = "ping\n"
	}
	if _, err := rw.Write([]byte(data)); err != nil {
		return err
	}
	want := data
	if r := c.Expect.Reply; r != nil {
		want = *r
	}
	var buf []byte
	tmp := make([]byte, 64<<10)
	for !strings.Contains(string(buf), want) {
		n, err := rw.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil || p.UDP {
			break
		}
	}
	a.Reply = string(buf)
	return nil
}

// traceOf waits for the trace of the connection from local that started
// at sent or later (a connection traces when it ends).
func (s *testServer) traceOf(local string, sent time.Time) (emulator.Trace, bool) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		ts := s.srv.Traces()
		for i := len(ts) - 1; i >= 0; i-- {
			if ts[i].Client == local && !ts[i].Time.Before(sent.Add(-time.Millisecond)) {
				return ts[i], true
			}
		}
		if time.Now().After(deadline) {
			return emulator.Trace{}, false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// mirrors fills a.Mirrored with the Services the case expects copies at
// whose echo backend logged a request since sent (besides the answer):
// mirrored requests are sent beside the answer, so it waits a little.
func (s *testServer) mirrors(c *routetest.Case, a *routetest.Actual, sent time.Time) {
	answered, _, _ := strings.Cut(a.Service, ":")
	deadline := time.Now().Add(time.Second)
	for _, m := range c.Expect.Mirrors {
		for {
			n := len(s.srv.EchoLogSince(m, sent))
			if m == answered {
				n--
			}
			if n > 0 {
				a.Mirrored = append(a.Mirrored, m)
				break
			}
			if time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
