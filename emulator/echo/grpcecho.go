package echo

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"
)

// grpcEchoService is the full name of the conformance echo service the
// echo backend implements.
const grpcEchoService = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho"

// Metadata that tells the shared gRPC echo server which echo Service a call
// is for. Target sets it on every call; it is never echoed back.
const (
	MetaPrefix        = "gwdev-echo-"
	echoMetaNamespace = MetaPrefix + "namespace"
	MetaService       = MetaPrefix + "service"
	echoMetaPod       = MetaPrefix + "pod"
	echoMetaIngress   = MetaPrefix + "ingress"
	// echoMetaAuthHeader is the echo Service's demo auth header
	// (echoauth.go).
	echoMetaAuthHeader = MetaPrefix + "auth-header"
)

// grpcEcho is the gRPC side of the echo backend: one grpc-go server for
// every echo Service, on an in-memory listener (no port), reached over h2c
// through its own transport. It serves the conformance echo service
// (Echo and EchoTwo answer, EchoThree is UNIMPLEMENTED like the
// conformance server's), server reflection, and UNIMPLEMENTED naming the
// echo Service for any other method.
type grpcEcho struct {
	srv *grpc.Server
	ln  *bufconn.Listener
	tr  *http.Transport
}

// sharedGRPCEcho starts the process's gRPC echo server on first use. It
// holds no socket, so it lives as long as the process.
var sharedGRPCEcho = sync.OnceValue(newGRPCEcho)

func newGRPCEcho() *grpcEcho {
	ln := bufconn.Listen(256 << 10)
	srv := grpc.NewServer(grpc.UnknownServiceHandler(echoUnknownMethod))
	pb.RegisterGrpcEchoServer(srv, grpcEchoServer{})
	authv3.RegisterAuthorizationServer(srv, echoAuthServer{}) // echoauth.go
	reflection.Register(srv)
	go func() { _ = srv.Serve(ln) }()
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return ln.DialContext(ctx)
		},
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		Protocols:           new(http.Protocols),
	}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &grpcEcho{srv: srv, ln: ln, tr: tr}
}

// roundTripGRPC answers a gRPC request with the gRPC echo server.
func (e *Target) roundTripGRPC(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.RequestURI = ""
	u := *req.URL
	u.Scheme, u.Host = "http", "gwdev-echo"
	out.URL = &u
	for k := range out.Header {
		if strings.HasPrefix(strings.ToLower(k), MetaPrefix) {
			delete(out.Header, k) // only the gateway says which echo this is
		}
	}
	ingress := e.ingressOf(req.Context())
	out.Header.Set(echoMetaNamespace, e.namespace)
	out.Header.Set(MetaService, e.service)
	out.Header.Set(echoMetaPod, e.pod)
	out.Header.Set(echoMetaIngress, ingress)
	if e.authHeader != "" {
		out.Header.Set(echoMetaAuthHeader, e.authHeader)
	}
	return sharedGRPCEcho().tr.RoundTrip(out)
}

// grpcEchoServer implements GrpcEcho like the conformance echo server.
type grpcEchoServer struct {
	pb.UnimplementedGrpcEchoServer
}

var _ pb.GrpcEchoServer = grpcEchoServer{}

// Echo describes the call it received.
func (grpcEchoServer) Echo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return echoGRPC(ctx, "Echo"), nil
}

// EchoTwo is Echo at another method name.
func (grpcEchoServer) EchoTwo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return echoGRPC(ctx, "EchoTwo"), nil
}

// echoGRPC builds the conformance answer: the method, the request metadata
// (sorted by key, so answers compare), the authority and the pod context.
func echoGRPC(ctx context.Context, method string) *pb.EchoResponse {
	md, _ := metadata.FromIncomingContext(ctx)
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	a := &pb.Assertions{
		FullyQualifiedMethod: "/" + grpcEchoService + "/" + method,
		Context:              echoContext(md),
	}
	for _, k := range keys {
		if strings.HasPrefix(k, MetaPrefix) {
			continue
		}
		for _, v := range md[k] {
			if k == ":authority" {
				a.Authority = v
			}
			a.Headers = append(a.Headers, &pb.Header{Key: k, Value: v})
		}
	}
	return &pb.EchoResponse{Assertions: a, Request: &pb.EchoRequest{}}
}

func echoContext(md metadata.MD) *pb.Context {
	get := func(k string) string {
		if vs := md.Get(k); len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	return &pb.Context{Namespace: get(echoMetaNamespace), Ingress: get(echoMetaIngress),
		ServiceName: get(MetaService), Pod: get(echoMetaPod)}
}

// echoUnknownMethod answers any method the echo does not serve with
// UNIMPLEMENTED, naming the echo Service.
func echoUnknownMethod(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	md, _ := metadata.FromIncomingContext(stream.Context())
	c := echoContext(md)
	return status.Errorf(codes.Unimplemented, "gwdev echo backend %s/%s does not implement %s", c.Namespace, c.ServiceName, method)
}
