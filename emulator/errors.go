package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// errorHandler answers a failed forward with the status classifyError gives.
func errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	ex := exchangeFrom(r.Context())
	if ex == nil {
		http.Error(w, "gwdev: "+err.Error(), http.StatusBadGateway)
		return
	}
	status, reason := classifyError(r.Context(), ex, err)
	ex.trace.Reason = reason
	if status != 499 && ex.intercepts(status) && ex.writeErrorPage(r.Context(), w, status) {
		return // errorpages.go
	}
	ex.writeError(w, status, reason)
}

// classifyError maps a forwarding error to a status: 503 for a retry the
// retry budget refused, 504 for the request or backendRequest timeout, 499 when the client went away, 400 when the
// client's body could not be read (malformed chunked encoding), 502
// otherwise.
func classifyError(ctx context.Context, ex *exchange, err error) (int, string) {
	var bt *backendTimeoutError
	var rb *retryBudgetError
	switch {
	case errors.As(err, &rb):
		return http.StatusServiceUnavailable, rb.Error()
	case context.Cause(ctx) == errRequestTimeout:
		return http.StatusGatewayTimeout, fmt.Sprintf("request timeout of %s exceeded", ex.rule.requestTimeout)
	case errors.As(err, &bt):
		return http.StatusGatewayTimeout, bt.Error()
	case ex.req.Context().Err() != nil:
		return 499, "client closed the request"
	case ex.body.readErr() != nil:
		return http.StatusBadRequest, fmt.Sprintf("reading the request body: %v", ex.body.readErr())
	}
	if reason, ok := backendTLSFailure(ex, err); ok {
		return http.StatusBadGateway, reason
	}
	return http.StatusBadGateway, fmt.Sprintf("upstream %s: %v", ex.upstreamAddr, err)
}

// writeError sends the gateway's own error answer. gRPC clients get a
// trailers-only gRPC status instead of an HTTP error.
func (ex *exchange) writeError(w http.ResponseWriter, status int, reason string) {
	if status == 499 {
		ex.clientGone = true
		return
	}
	h := w.Header()
	if ex.view.grpc {
		code := ex.grpcCode(status) // grpctrace.go
		h.Set("Content-Type", "application/grpc")
		h.Set("Grpc-Status", strconv.Itoa(code))
		h.Set("Grpc-Message", grpcEscape(reason))
		w.WriteHeader(http.StatusOK)
		ex.trace.Reason = grpcReason(reason, code) // grpctrace.go
		return
	}
	body := "gwdev: " + errorLine(status, reason) + "\n"
	if ex.trace.Hint != "" {
		body += "gwdev: " + ex.trace.Hint + "\n"
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if ex.req.Method != http.MethodHead {
		_, _ = io.WriteString(w, body)
	}
}

// errorLine is the first line of gwdev's error body: the status text, then
// the reason, without saying the status twice when the reason starts with
// it ("Misdirected Request: the connection's SNI …", not "Misdirected
// Request: misdirected request: …").
func errorLine(status int, reason string) string {
	text := http.StatusText(status)
	if len(reason) > len(text) && strings.EqualFold(reason[:len(text)], text) && strings.HasPrefix(reason[len(text):], ": ") {
		reason = reason[len(text)+2:]
	}
	return text + ": " + reason
}

// gRPC status codes used by the gateway.
const (
	grpcDeadlineExceeded = 4
	grpcUnimplemented    = 12
	grpcInternal         = 13
	grpcUnavailable      = 14
)

// grpcEscape percent-encodes a grpc-message value.
func grpcEscape(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), "%2F", "/")
}
