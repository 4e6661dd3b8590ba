package emulator

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// grpcAuthServer is a real ext_authz server (grpc-go, h2c on 127.0.0.1):
// it allows "authorization: Bearer good" with an x-user header for the
// backend, and denies anything else with 401 and a body.
type grpcAuthServer struct {
	authv3.UnimplementedAuthorizationServer
	mu   sync.Mutex
	last *authv3.CheckRequest
}

func (s *grpcAuthServer) Check(_ context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	s.mu.Lock()
	s.last = req
	s.mu.Unlock()
	if req.GetAttributes().GetRequest().GetHttp().GetHeaders()["authorization"] == "Bearer good" {
		return &authv3.CheckResponse{Status: &status.Status{Code: int32(codes.OK)},
			HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: &authv3.OkHttpResponse{
				Headers: []*corev3.HeaderValueOption{
					{Header: &corev3.HeaderValue{Key: "x-user", Value: "alice"}}, // no action: replaces
					{Header: &corev3.HeaderValue{Key: "x-tag", Value: "b"}, Append: wrapperspb.Bool(true)},
					{Header: &corev3.HeaderValue{Key: "x-default", Value: "auth"}, AppendAction: corev3.HeaderValueOption_ADD_IF_ABSENT},
				}}}}, nil
	}
	return &authv3.CheckResponse{Status: &status.Status{Code: int32(codes.Unauthenticated)},
		HttpResponse: &authv3.CheckResponse_DeniedResponse{DeniedResponse: &authv3.DeniedHttpResponse{
			Status:  &typev3.HttpStatus{Code: typev3.StatusCode_Unauthorized},
			Headers: []*corev3.HeaderValueOption{{Header: &corev3.HeaderValue{Key: "www-authenticate", Value: "Bearer"}}},
			Body:    "no token"}}}, nil
}

func (s *grpcAuthServer) lastRequest() *authv3.CheckRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func startGRPCAuth(t *testing.T) (*grpcAuthServer, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	as := &grpcAuthServer{}
	srv := grpc.NewServer()
	authv3.RegisterAuthorizationServer(srv, as)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return as, ln.Addr().String()
}

// grpcAuthManifests protects every path with a GRPC ExternalAuth filter
// that sends only the authorization and x-request-id headers; AUTH is the
// auth Service's port, ANNOTATION its annotations.
const grpcAuthManifests = gatewayGW + `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - filters:
    - type: ExternalAuth
      externalAuth:
        protocol: GRPC
        backendRef: {name: auth, port: 9001}
        grpc: {allowedHeaders: [authorization, x-request-id]}
    backendRefs: [{name: app, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: auth, annotations: {ANNOTATION}}
spec: {ports: [{port: 9001, appProtocol: kubernetes.io/h2c}]}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {ports: [{port: 80}]}
`

func grpcAuthHarness(t *testing.T, annotation string, mappings map[string]string) *harness {
	m := strings.ReplaceAll(grpcAuthManifests, "ANNOTATION", annotation)
	return serve(t, func(p int32) *table.Table {
		return gwinTable(t, m, p, engine.Options{BackendMappings: mappings})
	})
}

func TestExternalAuthGRPC(t *testing.T) {
	as, addr := startGRPCAuth(t)
	h := grpcAuthHarness(t, "", map[string]string{"default/auth:9001": addr})
	res, tr := h.traced(h.request("GET", "app.example.com", "/x?y=1", "X-Request-Id: r1", "X-Secret: s"))
	if res.status != http.StatusUnauthorized || string(res.body) != "no token" || res.header.Get("Www-Authenticate") != "Bearer" {
		t.Fatalf("denied: %d %q %v (trace %q)", res.status, res.body, res.header, tr.Reason)
	}
	if !strings.Contains(tr.Reason, "Unauthenticated") || tr.Backend != "" {
		t.Errorf("trace reason %q backend %q", tr.Reason, tr.Backend)
	}
	hr := as.lastRequest().GetAttributes().GetRequest().GetHttp()
	if hr.GetPath() != "/x?y=1" || hr.GetHost() != "app.example.com" || hr.GetMethod() != "GET" ||
		hr.GetHeaders()["x-request-id"] != "r1" || hr.GetHeaders()["x-secret"] != "" {
		t.Errorf("check request %v", hr)
	}
	res, tr = h.traced(h.request("GET", "app.example.com", "/x", "Authorization: Bearer good",
		"X-User: mallory", "X-Tag: a", "X-Default: mine"))
	if res.status != 200 {
		t.Fatalf("allowed: %d %s (trace %+v)", res.status, res.body, tr)
	}
	got := http.Header(res.echo(t).Headers)
	if u, tag, d := got.Values("X-User"), got.Values("X-Tag"), got.Values("X-Default"); len(u) != 1 || u[0] != "alice" ||
		strings.Join(tag, ",") != "a,b" || len(d) != 1 || d[0] != "mine" {
		t.Errorf("backend got X-User %q (want the auth server's alice only), X-Tag %q (want a,b), X-Default %q (want mine)", u, tag, d)
	}
}

func TestExternalAuthGRPCFailsClosed(t *testing.T) {
	dead := "127.0.0.1:" + strconv.Itoa(int(refusedPort(t)))
	h := grpcAuthHarness(t, "", map[string]string{"default/auth:9001": dead})
	res, tr := h.traced(h.request("GET", "app.example.com", "/", "Authorization: Bearer good"))
	if res.status != http.StatusForbidden || !strings.Contains(tr.Reason, "unreachable") {
		t.Fatalf("status %d reason %q", res.status, tr.Reason)
	}
	// A server that does not implement Check fails the call: denied too.
	srv := grpc.NewServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	h = grpcAuthHarness(t, "", map[string]string{"default/auth:9001": ln.Addr().String()})
	res, tr = h.traced(h.request("GET", "app.example.com", "/", "Authorization: Bearer good"))
	if res.status != http.StatusForbidden || !strings.Contains(tr.Reason, "Unimplemented") {
		t.Fatalf("unimplemented: status %d reason %q", res.status, tr.Reason)
	}
}

// TestExternalAuthEchoDemo: the echo backend of an annotated Service is a
// demo auth server, over gRPC and over HTTP.
func TestExternalAuthEchoDemo(t *testing.T) {
	for _, proto := range []string{"GRPC", "HTTP"} {
		t.Run(proto, func(t *testing.T) {
			m := strings.ReplaceAll(grpcAuthManifests, "ANNOTATION", "gwdev.dev/echo-auth-header: X-Demo-Token")
			m = strings.ReplaceAll(m, "grpc: {allowedHeaders: [authorization, x-request-id]}", "grpc: {}") // every header
			if proto == "HTTP" {
				m = strings.ReplaceAll(m, "protocol: GRPC", "protocol: HTTP")
				m = strings.ReplaceAll(m, "grpc: {}", "http: {allowedHeaders: [X-Demo-Token]}")
				m = strings.ReplaceAll(m, ", appProtocol: kubernetes.io/h2c", "")
			}
			h := serve(t, func(p int32) *table.Table { return gwinTable(t, m, p, engine.Options{}) })
			res, tr := h.traced(h.request("GET", "app.example.com", "/"))
			if res.status != http.StatusForbidden || !strings.Contains(string(res.body), "header") || !strings.Contains(tr.Reason, "denied by ExternalAuth") {
				t.Fatalf("without the header: %d %q, reason %q", res.status, res.body, tr.Reason)
			}
			res, tr = h.traced(h.request("GET", "app.example.com", "/", "X-Demo-Token: yes"))
			if res.status != 200 || !strings.HasPrefix(http.Header(res.echo(t).Headers).Get("X-Gwdev-Auth"), "allowed by default/auth") {
				t.Fatalf("with the header: %d %s (trace %+v)", res.status, res.body, tr)
			}
		})
	}
}

// TestExternalAuthGRPCClient: a gRPC client behind an HTTPRoute with an
// ExternalAuth filter gets PERMISSION_DENIED from a denial (not a transport
// error), and its call goes through with the credential.
func TestExternalAuthGRPCClient(t *testing.T) {
	m := strings.ReplaceAll(grpcAuthManifests, "ANNOTATION", "gwdev.dev/echo-auth-header: X-Demo-Token")
	m = strings.ReplaceAll(m, "grpc: {allowedHeaders: [authorization, x-request-id]}", "grpc: {allowedHeaders: [x-demo-token]}")
	h := serve(t, func(p int32) *table.Table { return gwinTable(t, m, p, engine.Options{}) })
	conn, err := grpc.NewClient(h.addr(), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority("app.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	call := func(kv ...string) (*pb.EchoResponse, error) {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), kv...), 5*time.Second)
		defer cancel()
		return pb.NewGrpcEchoClient(conn).Echo(ctx, &pb.EchoRequest{})
	}
	_, err = call()
	if st, _ := grpcstatus.FromError(err); st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "x-demo-token is missing") {
		t.Errorf("without the token: %v", err)
	}
	resp, err := call("x-demo-token", "t")
	if err != nil || resp.GetAssertions().GetContext().GetServiceName() != "app" {
		t.Fatalf("with the token: %v %v", resp, err)
	}
}
