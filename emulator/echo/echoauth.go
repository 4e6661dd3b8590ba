package echo

import (
	"context"
	"net/http"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
)

// The echo backend as a demo authorization server: the echo of a Service
// annotated gwdev.dev/echo-auth-header: <header> allows a request that
// carries that header with a non-empty value and denies any other. Over
// HTTP it answers 200 or 403 (the ExternalAuth HTTP protocol); over gRPC it
// implements envoy.service.auth.v3.Authorization/Check. An allowed request
// gets X-Gwdev-Auth: allowed onto its way to the backend, so the backend's
// echo shows that it passed.

// echoAuthAllowedHeader is what the demo auth server adds to allowed
// requests.
const echoAuthAllowedHeader = "X-Gwdev-Auth"

// authorize answers an HTTP authorization request.
func (e *Target) authorize(req *http.Request) *http.Response {
	if req.Header.Get(e.authHeader) != "" {
		h := http.Header{echoAuthAllowedHeader: {"allowed by " + e.namespace + "/" + e.service + " (" + e.authHeader + " present)"}}
		return echoReply(req, http.StatusOK, h, nil)
	}
	body := []byte("denied by gwdev's demo auth server " + e.namespace + "/" + e.service + ": header " + e.authHeader + " is missing\n")
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	return echoReply(req, http.StatusForbidden, h, body)
}

// echoAuthServer implements Check for the gRPC echo.
type echoAuthServer struct {
	authv3.UnimplementedAuthorizationServer
}

var _ authv3.AuthorizationServer = echoAuthServer{}

// Check allows a request carrying the echo Service's auth header. The echo
// of a Service without the annotation allows every request, like its HTTP
// side answers 200 to everything.
func (echoAuthServer) Check(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	c := echoContext(md)
	header := ""
	if v := md.Get(echoMetaAuthHeader); len(v) > 0 {
		header = strings.ToLower(v[0])
	}
	name := c.Namespace + "/" + c.ServiceName
	if header == "" || req.GetAttributes().GetRequest().GetHttp().GetHeaders()[header] != "" {
		return &authv3.CheckResponse{Status: &status.Status{Code: int32(codes.OK)},
			HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: &authv3.OkHttpResponse{
				Headers: []*corev3.HeaderValueOption{{Header: &corev3.HeaderValue{Key: strings.ToLower(echoAuthAllowedHeader), Value: "allowed by " + name}}},
			}}}, nil
	}
	msg := "denied by gwdev's demo auth server " + name + ": header " + header + " is missing\n"
	return &authv3.CheckResponse{Status: &status.Status{Code: int32(codes.PermissionDenied), Message: msg},
		HttpResponse: &authv3.CheckResponse_DeniedResponse{DeniedResponse: &authv3.DeniedHttpResponse{
			Status: &typev3.HttpStatus{Code: typev3.StatusCode_Forbidden}, Body: msg,
			Headers: []*corev3.HeaderValueOption{{Header: &corev3.HeaderValue{Key: "content-type", Value: "text/plain; charset=utf-8"}}},
		}}}, nil
}
