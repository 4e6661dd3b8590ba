package extauth

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/gwdev/gwdev/engine/table"
)

// grpcCheckPath is the method an ExternalAuth GRPC backend serves: Envoy's
// ext_authz protocol.
const grpcCheckPath = "/envoy.service.auth.v3.Authorization/Check"

// maxGRPCResponse bounds a CheckResponse message.
const maxGRPCResponse = 4 << 20

// checkGRPC asks a GRPC auth backend with Envoy's
// envoy.service.auth.v3.Authorization/Check: the request's method, path,
// host, scheme, protocol and headers (allowedHeaders, or all of them), and
// the buffered body when forwardBody asks. The call is a plain HTTP/2
// request over the backend's upstream (TLS, client certificate and the echo
// backend included). Status OK allows (its headers go onto the request to
// the backend); any other status denies with the DeniedHttpResponse
// (default 403); a failed call refuses with ErrorStatus.
func checkGRPC(a *table.ExternalAuth, up Upstream, r *http.Request, body []byte) Decision {
	msg, err := proto.Marshal(checkRequest(a, r, body))
	if err != nil {
		return failed(a, up, "cannot be asked: "+err.Error())
	}
	frame := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(frame[1:5], uint32(len(msg)))
	copy(frame[5:], msg)
	ctx, cancel := context.WithTimeout(r.Context(), up.Timeout)
	defer cancel()
	u := &url.URL{Scheme: up.Scheme, Host: up.Addr, Path: grpcCheckPath}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(frame))
	if err != nil {
		return failed(a, up, "cannot be asked: "+err.Error())
	}
	req.Header = http.Header{"Content-Type": {"application/grpc"}, "Te": {"trailers"}, "User-Agent": {"gwdev-extauth"}}
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0 // gRPC is HTTP/2 (the echo backend checks)
	resp, d := roundTrip(a, up, req)
	if resp == nil {
		return d
	}
	cr, err := readCheckResponse(resp)
	if err != nil {
		return failed(a, up, err.Error())
	}
	if code := cr.GetStatus().GetCode(); code != int32(codes.OK) {
		return denyGRPC(a, up, cr)
	}
	var ops []HeaderOp
	if ok := cr.GetOkResponse(); ok != nil {
		ops = grpcHeaders(ok.GetHeaders())
	}
	return Decision{Kind: Allow, Add: ops,
		Filter: fmt.Sprintf("ExternalAuth: %s allowed (gRPC OK), %d header(s) copied to the request", up.Service, len(ops))}
}

// checkRequest builds the CheckRequest for r.
func checkRequest(a *table.ExternalAuth, r *http.Request, body []byte) *authv3.CheckRequest {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	h := map[string]string{}
	add := func(k string, v []string) {
		h[strings.ToLower(k)] = strings.Join(v, ",")
	}
	if len(a.AllowedHeaders) == 0 {
		for k, v := range r.Header {
			add(k, v)
		}
	} else {
		for _, k := range a.AllowedHeaders {
			if v := r.Header.Values(k); len(v) > 0 {
				add(k, v)
			}
		}
	}
	h[":authority"], h[":method"], h[":path"] = r.Host, r.Method, r.URL.RequestURI()
	hr := &authv3.AttributeContext_HttpRequest{Method: r.Method, Headers: h, Path: r.URL.RequestURI(),
		Host: r.Host, Scheme: scheme, Query: r.URL.RawQuery, Protocol: r.Proto, Size: r.ContentLength}
	if a.MaxBodySize > 0 && len(body) > 0 {
		hr.RawBody = body
		hr.Body = string(body)
	}
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Source:  &authv3.AttributeContext_Peer{Address: socketAddress(r.RemoteAddr)},
		Request: &authv3.AttributeContext_Request{Http: hr},
	}}
}

// socketAddress renders "ip:port" as an Envoy Address (nil if unparsable).
func socketAddress(hostport string) *corev3.Address {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil
	}
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil {
		return nil
	}
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(port)}}}}
}

// readCheckResponse reads one CheckResponse message and the call's
// grpc-status (a status other than OK is a failed call, not a denial; no
// status at all is an incomplete call, also failed).
func readCheckResponse(resp *http.Response) (*authv3.CheckResponse, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered HTTP %d to the gRPC call", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxGRPCResponse+5))
	if err != nil {
		return nil, fmt.Errorf("failed reading the gRPC answer: %v", err)
	}
	st := resp.Trailer.Get("Grpc-Status")
	if st == "" {
		st = resp.Header.Get("Grpc-Status") // trailers-only answer
	}
	if st == "" {
		// A call is complete only with its status (grpc-go fails such a
		// call with Internal): a message alone is no allow.
		return nil, errors.New("sent no grpc-status, so the call is incomplete")
	}
	if st != "0" {
		m := resp.Trailer.Get("Grpc-Message")
		if m == "" {
			m = resp.Header.Get("Grpc-Message")
		}
		m, _ = url.PathUnescape(m)
		return nil, fmt.Errorf("answered gRPC status %s (%s)", grpcStatusName(st), m)
	}
	if len(body) < 5 || body[0] != 0 {
		return nil, errors.New("sent no uncompressed CheckResponse message")
	}
	n := binary.BigEndian.Uint32(body[1:5])
	if int(n) != len(body)-5 {
		return nil, fmt.Errorf("sent a CheckResponse of %d bytes (declared %d, at most %d)", len(body)-5, n, maxGRPCResponse)
	}
	cr := &authv3.CheckResponse{}
	if err := proto.Unmarshal(body[5:], cr); err != nil {
		return nil, fmt.Errorf("sent an unreadable CheckResponse: %v", err)
	}
	return cr, nil
}

// grpcStatusName names a numeric grpc-status ("7" → "PermissionDenied").
func grpcStatusName(s string) string {
	n, err := strconv.Atoi(s)
	if err != nil {
		return s
	}
	return codes.Code(n).String()
}

// denyGRPC reads a CheckResponse's denial: its HTTP status (403 when
// unset), headers and body.
func denyGRPC(a *table.ExternalAuth, up Upstream, cr *authv3.CheckResponse) Decision {
	status, body, h := http.StatusForbidden, "", http.Header{}
	if d := cr.GetDeniedResponse(); d != nil {
		if c := int(d.GetStatus().GetCode()); c >= 200 && c <= 599 {
			status = c
		}
		for _, o := range d.GetHeaders() {
			if hv := o.GetHeader(); hv != nil {
				h.Add(textproto.CanonicalMIMEHeaderKey(hv.GetKey()), envoyHeaderValue(hv))
			}
		}
		body = d.GetBody()
	}
	return Decision{Kind: Deny, Status: status, Header: h, Body: []byte(body),
		Reason: fmt.Sprintf("denied by ExternalAuth %s: %s answered %s (%s)", a.Name, up.Service,
			codes.Code(cr.GetStatus().GetCode()), cr.GetStatus().GetMessage()),
		Filter: fmt.Sprintf("ExternalAuth: %s denied (%d)", up.Service, status)}
}

func envoyHeaderValue(hv *corev3.HeaderValue) string {
	if len(hv.GetRawValue()) > 0 {
		return string(hv.GetRawValue())
	}
	return hv.GetValue()
}

// grpcHeaders are an OkHttpResponse's headers for the request to the
// backend, with their append actions (a set "append" field, which ext_authz
// servers still send, decides first, as in Envoy; "append" defaults to
// false in this message).
func grpcHeaders(opts []*corev3.HeaderValueOption) []HeaderOp {
	var ops []HeaderOp
	for _, o := range opts {
		hv := o.GetHeader()
		if hv == nil {
			continue
		}
		k := textproto.CanonicalMIMEHeaderKey(hv.GetKey())
		if responseSkip[k] {
			continue
		}
		ops = append(ops, HeaderOp{k, []string{envoyHeaderValue(hv)}, grpcAppendAction(o)})
	}
	return ops
}

// grpcAppendAction reads a HeaderValueOption's append action.
func grpcAppendAction(o *corev3.HeaderValueOption) Action {
	//lint:ignore SA1019 ext_authz servers still set the deprecated append field, and Envoy honours it before append_action
	if ap := o.Append; ap != nil {
		if ap.GetValue() {
			return Append
		}
		return Set
	}
	switch o.GetAppendAction() {
	case corev3.HeaderValueOption_ADD_IF_ABSENT:
		return AddIfAbsent
	case corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD:
		return Set
	case corev3.HeaderValueOption_OVERWRITE_IF_EXISTS:
		return SetIfExists
	}
	// APPEND_IF_EXISTS_OR_ADD is also the value of an unset field, and
	// "append defaults to false" in OkHttpResponse: the auth server's value
	// replaces what the client sent (a client cannot add its own).
	return Set
}

// GRPCCode maps an HTTP status to a gRPC status code as gRPC's "HTTP to
// gRPC Status Code Mapping" does, for answers the gateway gives gRPC
// clients on behalf of an auth server.
func GRPCCode(status int) codes.Code {
	switch status {
	case http.StatusBadRequest:
		return codes.Internal
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.Unimplemented
	case http.StatusRequestEntityTooLarge:
		return codes.ResourceExhausted
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return codes.Unavailable
	}
	return codes.Unknown
}
