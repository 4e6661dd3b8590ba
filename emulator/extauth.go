package emulator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gwdev/gwdev/emulator/extauth"
	"github.com/gwdev/gwdev/engine/table"
)

// ExternalAuth in the exchange: package extauth speaks to the auth backend
// and decides; this file queues the checks, hands extauth the auth backend's
// upstream, and applies each decision to the exchange (its trace, the
// headers for the backend, the answer to the client).

// extAuthTimeout bounds one authorization request, its answer's body
// included; an auth backend that does not answer in time denies. (A
// variable only so that tests can shorten it.)
var extAuthTimeout = 10 * time.Second

// extAuthRoutes is a compiled ExternalAuth filter.
type extAuthRoutes struct {
	a       *table.ExternalAuth
	backend *backendRoutes
}

// auths compiles a rule's or backendRef's ExternalAuth filters.
func (c *compiler) auths(as []*table.ExternalAuth) []*extAuthRoutes {
	var out []*extAuthRoutes
	for _, a := range as {
		if a == nil || a.Backend == nil {
			out = append(out, nil) // keeps filter indexes; refused when reached
			continue
		}
		out = append(out, &extAuthRoutes{a: a, backend: c.backend(a.Backend)})
	}
	return out
}

// addAuth queues filter f's ExternalAuth check; the check itself runs in
// authorize, after the routing decision (which touches no network).
// done reports that the gateway answers by itself: the table resolves no
// auth backend for the filter, so the request is refused.
func (ex *exchange) addAuth(f *filterStep, auths []*extAuthRoutes) bool {
	if f.extAuth < 0 || f.extAuth >= len(auths) || auths[f.extAuth] == nil {
		ex.trace.Reason = "ExternalAuth: the table resolves no auth backend for the filter; refused"
		ex.status = http.StatusInternalServerError
		return true
	}
	a := auths[f.extAuth]
	ex.auths = append(ex.auths, a)
	ex.trace.Filters = append(ex.trace.Filters, fmt.Sprintf("ExternalAuth: %s asks %s over %s", a.a.Name, a.backend.service, a.a.Protocol))
	ex.trace.AuthAsked = append(ex.trace.AuthAsked, a.a.Name)
	return false
}

// authorize runs the exchange's ExternalAuth checks in order. It returns
// false when the request was answered (denied, or refused because the auth
// backend failed); true when every check allowed it.
func (ex *exchange) authorize(w http.ResponseWriter, r *http.Request) bool {
	for _, a := range ex.auths {
		if !ex.authorizeOne(a, w, r) {
			// The trace keeps the rule the request would have reached, not
			// a backend it never reached.
			t := &ex.trace
			t.Backend, t.Service, t.Target, t.Why, t.BackendClientCert = "", "", "", "", ""
			return false
		}
	}
	return true
}

// authorizeOne runs one ExternalAuth check (reports like authorize). A check
// with forwardBody buffers the request body first (kept for the backend,
// bodylimit.go).
func (ex *exchange) authorizeOne(a *extAuthRoutes, w http.ResponseWriter, r *http.Request) bool {
	if a.a.MaxBodySize > 0 && ex.bodyBuf == nil && r.Body != nil && r.Body != http.NoBody {
		buf, refused := extauth.ReadBody(a.a, r)
		if refused != nil {
			return ex.applyAuth(w, *refused)
		}
		ex.keepBody(r, buf)
	}
	return ex.applyAuth(w, extauth.Check(a.a, ex.authUpstream(a), r, ex.bodyBuf))
}

// applyAuth applies a check's decision to the exchange: an allow's headers
// for the backend, or the answer to the client and the trace's reason. It
// reports like authorize.
func (ex *exchange) applyAuth(w http.ResponseWriter, d extauth.Decision) bool {
	if d.Filter != "" {
		ex.trace.Filters = append(ex.trace.Filters, d.Filter)
	}
	switch d.Kind {
	case extauth.Allow:
		ex.authHeaders = append(ex.authHeaders, d.Add...)
		return true
	case extauth.ClientGone:
		ex.clientGone = true
		ex.trace.Reason = d.Reason
	case extauth.Deny:
		ex.trace.Reason = d.Reason
		ex.authDenial(w, d.Status, d.Header, d.Body)
	default: // extauth.Refuse
		ex.trace.Reason = d.Reason
		ex.authRefusal(w, d.Status, d.Reason)
	}
	return false
}

// authUpstream is how extauth reaches a's auth backend: its address (the
// next endpoint, or the built-in echo backend), or why it cannot be asked;
// each check request is marked against loops (loop.go), carries the
// exchange for the trace's backend-fault notes (backend.go) and traces the
// Gateway's client certificate when the backend has one.
func (ex *exchange) authUpstream(a *extAuthRoutes) extauth.Upstream {
	b := a.backend
	up := extauth.Upstream{Service: b.service, Timeout: extAuthTimeout}
	switch {
	case b.b.Invalid != "" || b.up == nil:
		up.Why = "is invalid: " + b.b.Invalid
		return up
	case b.up.tlsErr != "":
		up.Why = "cannot be reached over TLS: " + b.up.tlsErr
		return up
	case b.up.echo != nil:
		up.Addr = "echo"
	case len(b.up.addrs) == 0:
		up.Why = "has no endpoints"
		return up
	default:
		up.Addr = b.up.addrs[b.up.nextAddr()]
	}
	up.Scheme = b.up.scheme
	rt := b.up.transport(b.h2c)
	up.RoundTrip = func(req *http.Request) (*http.Response, error) {
		ex.markVia(req.Header) // an auth backend that is gwdev itself loops too
		ctx := context.WithValue(req.Context(), authExchangeKey{}, ex)
		if b.up.clientCert != "" {
			ctx = ex.traceClientCert(ctx)
		}
		return rt.RoundTrip(req.WithContext(ctx))
	}
	up.Failure = func(err error) string {
		if errors.As(err, new(*badStatusError)) {
			return "failed: " + err.Error()
		}
		if tlsWhy, ok := tlsFailure(b, up.Addr, err); ok {
			return "failed: " + tlsWhy
		}
		return "unreachable: " + err.Error()
	}
	return up
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
	extauth.CopyDenial(w.Header(), header)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// grpcAuthStatus answers a gRPC client with a trailers-only status.
func (ex *exchange) grpcAuthStatus(w http.ResponseWriter, status int, msg string) {
	code := extauth.GRPCCode(status)
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Grpc-Status", strconv.Itoa(int(code)))
	h.Set("Grpc-Message", grpcEscape(msg))
	w.WriteHeader(http.StatusOK)
	ex.trace.Reason += " (sent as grpc-status " + code.String() + ")"
}
