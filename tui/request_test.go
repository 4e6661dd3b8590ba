package tui

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/freeport"
)

// serveSample serves samples/<name> with a real emulator on its loopback
// addresses, every port moved to a free one, and returns the server and
// the address:port each (sample port, transport) is bound on.
func serveSample(t *testing.T, name string) (*emulator.Server, map[string]string) {
	t.Helper()
	lr := loadSample(t, name)
	res := engine.Translate(lr.Snapshot, engine.Options{Now: metav1.NewTime(fixedNow)})
	orig := map[*engine.PortTable]int32{}
	for _, g := range res.Table.Gateways {
		for _, p := range g.Ports {
			orig[p] = p.Port
			network := "tcp"
			if p.Transport == "UDP" {
				network = "udp"
			}
			p.Port = freeLoopbackPort(t, network)
		}
	}
	s := emulator.New(emulator.Config{UDPSessionTimeout: 100 * time.Millisecond})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	rep := s.Apply(res.Table)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	bound := map[string]string{}
	i := 0
	for _, g := range res.Table.Gateways {
		for _, p := range g.Ports {
			bound[strconv.Itoa(int(orig[p]))+"/"+p.Transport] = rep.Ports[i].Bound
			i++
		}
	}
	return s, bound
}

func freeLoopbackPort(t *testing.T, network string) int32 {
	t.Helper()
	if network == "udp" {
		return int32(freeport.UDP(t, "127.0.0.1"))
	}
	return int32(freeport.TCP(t, "127.0.0.1"))
}

// nextTrace waits for a trace the server records after the first n.
func nextTrace(t *testing.T, s *emulator.Server, n int) emulator.Trace {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ts := s.Traces(); len(ts) > n {
			return ts[n]
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no trace")
	return emulator.Trace{}
}

// replayAgrees replays tr and checks that the listener saw the same
// protocol, SNI, host, path, rule and User-Agent.
func replayAgrees(t *testing.T, s *emulator.Server, tr emulator.Trace) emulator.Trace {
	t.Helper()
	n := len(s.Traces())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	msg, err := replayTrace(ctx, newReplayClient(), tr)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	again := nextTrace(t, s, n)
	for _, f := range [][3]string{{"proto", tr.Proto, again.Proto}, {"sni", tr.SNI, again.SNI}, {"host", tr.Host, again.Host},
		{"path", tr.Path, again.Path}, {"method", tr.Method, again.Method}, {"listener", tr.Listener, again.Listener},
		{"rule", tr.Rule, again.Rule}, {"grpc status", tr.GRPCStatus, again.GRPCStatus},
		{"user agent", tr.RequestHeaders.Get("User-Agent"), again.RequestHeaders.Get("User-Agent")},
		{"negotiated", tr.NegotiatedProtocol, again.NegotiatedProtocol}} {
		if f[1] != f[2] {
			t.Errorf("replay (%s) changed the %s: %q, then %q", msg, f[0], f[1], f[2])
		}
	}
	if tr.Status != again.Status {
		t.Errorf("replay (%s): status %d, then %d", msg, tr.Status, again.Status)
	}
	return again
}

func wantCommand(t *testing.T, tr emulator.Trace, want string) {
	t.Helper()
	got, _, err := commandLine(tr)
	if err != nil {
		t.Fatalf("command: %v", err)
	}
	if got != want {
		t.Errorf("command\n got  %s\n want %s", got, want)
	}
}

func TestCopyAndReplayHTTP(t *testing.T) {
	s, bound := serveSample(t, "basic")
	addr := bound["8080/TCP"]
	for _, h2c := range []bool{false, true} {
		n := len(s.Traces())
		tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true}
		if h2c {
			tr.Protocols = new(http.Protocols)
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/users", nil)
		req.Host = "app.example.com"
		req.Header.Set("User-Agent", "probe/1.0")
		req.Header.Set("X-Canary", "true")
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		orig := nextTrace(t, s, n)
		flag := ""
		if h2c {
			flag = " --http2-prior-knowledge"
		}
		wantCommand(t, orig, "curl -i"+flag+" http://"+addr+"/api/users -H 'Host: app.example.com' -H 'User-Agent: probe/1.0' -H 'X-Canary: true'")
		replayAgrees(t, s, orig)
	}
}

func TestCopyAndReplayHTTPS(t *testing.T) {
	s, bound := serveSample(t, "https")
	addr := bound["443/TCP"]
	ip, port, _ := net.SplitHostPort(addr)
	for _, c := range []struct {
		host, alpn string
		want       string
	}{
		{"app.example.com", "h2", "curl -i -k --resolve app.example.com:" + port + ":" + ip + " https://app.example.com:" + port + "/x -H 'User-Agent: probe/1.0'"},
		{"app.example.com", "http/1.1", "curl -i -k --http1.1 --resolve app.example.com:" + port + ":" + ip + " https://app.example.com:" + port + "/x -H 'User-Agent: probe/1.0'"},
		// Host of the other listener than the SNI: 421, replayed as such.
		{"admin.app.example.com", "h2", "curl -i -k --resolve app.example.com:" + port + ":" + ip + " https://app.example.com:" + port + "/x -H 'Host: admin.app.example.com' -H 'User-Agent: probe/1.0'"},
	} {
		n := len(s.Traces())
		conf := &tls.Config{ServerName: "app.example.com", InsecureSkipVerify: true, NextProtos: []string{c.alpn}} //nolint:gosec // test certificate
		tr := &http.Transport{DisableKeepAlives: true, DisableCompression: true, ForceAttemptHTTP2: c.alpn == "h2",
			DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dialTLS(ctx, addr, conf) }}
		req, _ := http.NewRequest(http.MethodGet, "https://app.example.com/x", nil)
		req.Host = c.host
		req.Header.Set("User-Agent", "probe/1.0")
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		orig := nextTrace(t, s, n)
		if orig.SNI != "app.example.com" || orig.TLSVersion == "" {
			t.Fatalf("original trace: SNI %q TLS %q", orig.SNI, orig.TLSVersion)
		}
		wantCommand(t, orig, c.want)
		again := replayAgrees(t, s, orig)
		if again.TLSVersion == "" {
			t.Errorf("replay of an HTTPS request was not over TLS: %+v", again)
		}
	}
}

func TestCopyAndReplayGRPC(t *testing.T) {
	s, bound := serveSample(t, "grpc")
	addr := bound["9090/TCP"]
	n := len(s.Traces())
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("grpc.example.com"), grpc.WithUserAgent("probe/1.0"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const method = "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo"
	if err := conn.Invoke(context.Background(), method, &pb.EchoRequest{}, &pb.EchoResponse{}); err != nil {
		t.Fatal(err)
	}
	orig := nextTrace(t, s, n)
	if !orig.GRPC || orig.GRPCStatus != "OK" {
		t.Fatalf("original trace: %+v", orig)
	}
	got, _, err := commandLine(orig)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "grpcurl -plaintext -authority grpc.example.com -user-agent probe/1.0 ") ||
		!strings.HasSuffix(got, " "+addr+" gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo") {
		t.Errorf("command %s", got)
	}
	replayAgrees(t, s, orig)
	// Nothing listens any more: the replay says so instead of a status.
	gone := orig
	gone.Address = net.JoinHostPort("127.0.0.1", strconv.Itoa(freeport.Refused(t, "127.0.0.1")))
	if msg, err := replayTrace(context.Background(), newReplayClient(), gone); err == nil {
		t.Errorf("replay to a closed port: %s", msg)
	}
}

func TestCopyAndReplayStreams(t *testing.T) {
	s, bound := serveSample(t, "tls-passthrough")
	addr := bound["9443/TCP"]
	n := len(s.Traces())
	tc, err := dialTLS(context.Background(), addr, &tls.Config{ServerName: "db.example.com", InsecureSkipVerify: true}) //nolint:gosec // test certificate
	if err != nil {
		t.Fatal(err)
	}
	_ = tc.Close()
	orig := nextTrace(t, s, n)
	if orig.Proto != "TLS Passthrough" {
		t.Fatalf("original trace: %+v", orig)
	}
	wantCommand(t, orig, "openssl s_client -connect "+addr+" -servername db.example.com")
	replayAgrees(t, s, orig)

	s, bound = serveSample(t, "tcp-udp")
	addr = bound["9100/TCP"]
	n = len(s.Traces())
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	orig = nextTrace(t, s, n)
	ip, port, _ := net.SplitHostPort(addr)
	wantCommand(t, orig, "nc "+ip+" "+port)
	replayAgrees(t, s, orig)

	addr = bound["9053/UDP"]
	n = len(s.Traces())
	u, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = u.Write([]byte("ping"))
	_ = u.Close()
	orig = nextTrace(t, s, n)
	ip, port, _ = net.SplitHostPort(addr)
	wantCommand(t, orig, "nc -u "+ip+" "+port)
	if _, err := replayTrace(context.Background(), newReplayClient(), orig); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Errorf("UDP replay: %v", err)
	}
}
