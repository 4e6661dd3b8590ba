package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/freeport"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"
)

// upSample runs `gwdev up` on a copy of samples/<name> whose ports are
// replaced (ports maps the sample's port to the test's) and waits until
// gwdev has applied it.
func upSample(t *testing.T, name string, ports map[int]int) *syncBuffer {
	t.Helper()
	return upSampleWith(t, name, ports, &upOptions{debounce: 10 * time.Millisecond})
}

// upSampleWith is upSample with the given options.
func upSampleWith(t *testing.T, name string, ports map[int]int, o *upOptions) *syncBuffer {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "samples", name)
	files, err := filepath.Glob(filepath.Join(src, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("sample %s: %v", name, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for from, to := range ports {
			s = strings.ReplaceAll(s, "port: "+strconv.Itoa(from)+"\n", "port: "+strconv.Itoa(to)+"\n")
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- o.run(ctx, out, out, dir) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("up: %v", err)
		}
	})
	deadline := time.Now().Add(settle)
	for !strings.Contains(out.String(), "watching") {
		if time.Now().After(deadline) {
			t.Fatalf("gwdev up did not start:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return out
}

func freeUDPPort(t *testing.T) int {
	t.Helper()
	return freeport.UDP(t, "127.0.0.1")
}

// TestSampleGRPC serves samples/grpc and checks GRPCRoute precedence, the
// filters, the weighted split and the gateway's UNIMPLEMENTED end to end,
// with grpc-go over h2c.
func TestSampleGRPC(t *testing.T) {
	port := freePort(t)
	out := upSample(t, "grpc", map[int]int{9090: port})
	conn, err := grpc.NewClient("127.0.0.1:"+strconv.Itoa(port),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority("grpc.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewGrpcEchoClient(conn)
	call := func(method string, kv ...string) (string, metadata.MD, *pb.EchoResponse, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, kv...)
		var hdr metadata.MD
		resp := &pb.EchoResponse{}
		err := conn.Invoke(ctx, "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/"+method, &pb.EchoRequest{}, resp, grpc.Header(&hdr))
		return resp.GetAssertions().GetContext().GetServiceName(), hdr, resp, err
	}
	svc, hdr, resp, err := call("Echo")
	if err != nil {
		t.Fatalf("Echo: %v\n%s", err, out.String())
	}
	added := false
	for _, h := range resp.GetAssertions().GetHeaders() {
		added = added || (h.GetKey() == "x-gateway" && h.GetValue() == "gwdev")
	}
	if svc != "echo-v1" || !added || strings.Join(hdr.Get("x-route"), ",") != "echo" {
		t.Errorf("Echo → %s, x-gateway added %t, x-route %q", svc, added, hdr.Get("x-route"))
	}
	// One header match beats a service-only match.
	if svc, hdr, _, err := call("Echo", "x-canary", "true"); err != nil || svc != "echo-canary" || hdr.Get("x-route")[0] != "canary" {
		t.Errorf("Echo with x-canary → %s %v %v", svc, hdr.Get("x-route"), err)
	}
	// A method match beats a header match; EchoTwo is split 3:1.
	counts := map[string]int{}
	for range 80 {
		svc, _, _, err := call("EchoTwo", "x-canary", "true")
		if err != nil {
			t.Fatal(err)
		}
		counts[svc]++
	}
	if counts["echo-v2"] < 40 || counts["echo-v3"] < 4 || counts["echo-v2"]+counts["echo-v3"] != 80 {
		t.Errorf("EchoTwo split %v, want about 60:20", counts)
	}
	// EchoThree reaches the echo, which does not implement it; another
	// service matches no rule: the gateway says UNIMPLEMENTED.
	if _, err := c.EchoThree(context.Background(), &pb.EchoRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("EchoThree: %v", err)
	}
	err = conn.Invoke(context.Background(), "/foo.Bar/Echo", &pb.EchoRequest{}, &pb.EchoResponse{})
	if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "no rule") {
		t.Errorf("unrouted service: %v", err)
	}
}

// TestSampleTCPUDP serves samples/tcp-udp and echoes through both
// listeners, with a half-close over TCP.
func TestSampleTCPUDP(t *testing.T) {
	tp, up := freePort(t), freeUDPPort(t)
	out := upSample(t, "tcp-udp", map[int]int{9100: tp, 9053: up})
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(tp), 2*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(c, "hello tcp")
	_ = c.(*net.TCPConn).CloseWrite()
	if got, err := io.ReadAll(c); err != nil || string(got) != "Gateway API Test TCP Server\nhello tcp" {
		t.Errorf("TCP echo: %q %v\n%s", got, err, out.String())
	}
	u, err := net.Dial("udp", "127.0.0.1:"+strconv.Itoa(up))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	_, _ = io.WriteString(u, "hello udp")
	_ = u.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	if n, err := u.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), `{"request":"hello udp","namespace":"default",`) {
		t.Errorf("UDP echo: %q %v\n%s", buf[:n], err, out.String())
	}
}
