package emulator

import (
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
