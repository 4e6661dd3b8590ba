package emulator

import (
	"fmt"
	"net/http"
	"strconv"

	"google.golang.org/grpc/codes"
)

// traceGRPC completes a gRPC request's trace: its service and method, and
// the grpc-status the client got, from the trailers (as the proxy passed
// them on) or from a trailers-only answer.
func (ex *exchange) traceGRPC(h http.Header) {
	if !ex.view.grpc {
		return
	}
	t := &ex.trace
	t.GRPCService, t.GRPCMethod = ex.view.grpcService, ex.view.grpcMethod
	st := h.Get("Grpc-Status")
	if st == "" {
		st = h.Get(http.TrailerPrefix + "Grpc-Status")
	}
	if st == "" {
		return
	}
	n, err := strconv.ParseUint(st, 10, 32)
	if err != nil {
		t.GRPCStatus = st
		return
	}
	t.GRPCStatus = codes.Code(n).String()
}

// grpcCode is the grpc-status the gateway answers a gRPC request with
// instead of an HTTP error status.
func (ex *exchange) grpcCode(status int) int {
	switch status {
	case http.StatusNotFound:
		return grpcUnimplemented
	case http.StatusBadRequest:
		if ex.pathRefused {
			return grpcInternal // Envoy's answer to a path it will not normalise
		}
	case http.StatusGatewayTimeout:
		return grpcDeadlineExceeded
	case http.StatusInternalServerError:
		if ex.backend != nil {
			return grpcUnavailable // the spec's UNAVAILABLE for invalid backends
		}
		return grpcInternal
	}
	return grpcUnavailable
}

// grpcReason is the trace reason of a gateway answer sent as grpc-status
// code.
func grpcReason(reason string, code int) string {
	return fmt.Sprintf("%s (sent as grpc-status %d)", reason, code)
}
