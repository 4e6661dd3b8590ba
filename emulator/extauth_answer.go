package emulator

import (
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
)

// grpcCodeForHTTP maps an HTTP status to a gRPC status code as gRPC's "HTTP
// to gRPC Status Code Mapping" does, for answers the gateway gives gRPC
// clients on behalf of an auth server.
func grpcCodeForHTTP(status int) codes.Code {
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

// authRefusal refuses a request the gateway cannot let through (a body
// over forwardBody.maxSize, an auth backend that failed): the usual error
// answer, or to a gRPC client a gRPC status mapping the HTTP status
// (PERMISSION_DENIED, RESOURCE_EXHAUSTED).
func (ex *exchange) authRefusal(w http.ResponseWriter, status int, reason string) {
	if ex.view.grpc {
		ex.grpcAuthStatus(w, status, reason)
		return
	}
	ex.writeError(w, status, reason)
}

// authDenial passes an auth server's denial to the client: as is to an HTTP
// client (its status, headers without hop-by-hop ones, body); to a gRPC
// client as a gRPC status mapping the HTTP status, with the body as message,
// so that it sees PERMISSION_DENIED rather than a transport error.
func (ex *exchange) authDenial(w http.ResponseWriter, status int, header http.Header, body []byte) {
	if ex.view.grpc {
		msg := strings.TrimSpace(string(body))
		if msg == "" {
			msg = ex.trace.Reason
		}
		ex.grpcAuthStatus(w, status, msg)
		return
	}
	copyDenial(w, header)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// grpcAuthStatus answers a gRPC client with a trailers-only status.
func (ex *exchange) grpcAuthStatus(w http.ResponseWriter, status int, msg string) {
	code := grpcCodeForHTTP(status)
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Grpc-Status", strconv.Itoa(int(code)))
	h.Set("Grpc-Message", grpcEscape(msg))
	w.WriteHeader(http.StatusOK)
	ex.trace.Reason += " (sent as grpc-status " + code.String() + ")"
}
