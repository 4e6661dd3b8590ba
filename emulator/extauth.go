package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// Limits of ExternalAuth checks.
const (
	// maxAuthDenialBody is the most of a denial's body passed to the client.
	maxAuthDenialBody = 1 << 20
	// extAuthErrorStatus is the answer when the auth backend cannot be
	// asked or fails (Envoy's default status_on_error): gwdev never fails
	// open.
	extAuthErrorStatus = http.StatusForbidden
)

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

// authorizeOne runs one ExternalAuth check (reports like authorize).
func (ex *exchange) authorizeOne(a *extAuthRoutes, w http.ResponseWriter, r *http.Request) bool {
	if a.a.MaxBodySize > 0 && !ex.bufferAuthBody(a, w, r) {
		return false
	}
	if a.a.Protocol == "GRPC" {
		return ex.checkGRPC(a, w, r) // extauth_grpc.go
	}
	return ex.checkHTTP(a, w, r)
}

// bufferAuthBody reads the request body into memory for the auth backend;
// a body larger than forwardBody.maxSize is refused with 413.
func (ex *exchange) bufferAuthBody(a *extAuthRoutes, w http.ResponseWriter, r *http.Request) bool {
	if ex.bodyBuf != nil || r.Body == nil || r.Body == http.NoBody {
		return true
	}
	max := a.a.MaxBodySize
	if r.ContentLength > int64(max) {
		return ex.refuseBody(a, w, r.ContentLength)
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	if err != nil {
		// The client's body, not the auth backend, failed: 400, like a body
		// the proxy cannot read (errors.go).
		ex.trace.Reason = fmt.Sprintf("ExternalAuth %s: reading the request body: %v", a.a.Name, err)
		ex.authRefusal(w, http.StatusBadRequest, ex.trace.Reason)
		return false
	}
	if len(buf) > max {
		return ex.refuseBody(a, w, -1)
	}
	ex.keepBody(r, buf)
	return true
}

func (ex *exchange) refuseBody(a *extAuthRoutes, w http.ResponseWriter, size int64) bool {
	what := "more than"
	if size >= 0 {
		what = fmt.Sprintf("%d bytes,", size)
	}
	ex.trace.Reason = fmt.Sprintf("ExternalAuth %s: the request body is %s forwardBody.maxSize %d bytes; refused", a.a.Name, what, a.a.MaxBodySize)
	ex.authRefusal(w, http.StatusRequestEntityTooLarge, ex.trace.Reason)
	return false
}

// authFailed refuses the request because the auth backend could not be
// asked or failed; the trace says why.
func (ex *exchange) authFailed(a *extAuthRoutes, w http.ResponseWriter, why string) {
	ex.trace.Reason = fmt.Sprintf("ExternalAuth %s: auth backend %s %s; denied (gwdev never fails open)", a.a.Name, a.backend.service, why)
	ex.trace.Filters = append(ex.trace.Filters, "ExternalAuth: "+a.backend.service+" failed, denied")
	ex.authRefusal(w, extAuthErrorStatus, ex.trace.Reason)
}

// authUpstream returns the auth backend's round tripper and address, or
// why it cannot be asked.
func (a *extAuthRoutes) authUpstream() (http.RoundTripper, string, string) {
	b := a.backend
	switch {
	case b.b.Invalid != "" || b.up == nil:
		return nil, "", "is invalid: " + b.b.Invalid
	case b.up.tlsErr != "":
		return nil, "", "cannot be reached over TLS: " + b.up.tlsErr
	case b.up.echo != nil:
		return b.up.transport(b.h2c), "echo", ""
	case len(b.up.addrs) == 0:
		return nil, "", "has no endpoints"
	}
	return b.up.transport(b.h2c), b.up.addrs[b.up.nextAddr()], ""
}

// checkHTTP asks an HTTP auth backend: the client's method, the path
// prefix plus the client's path and query, the always-sent headers (Host,
// Authorization, Content-Length) plus allowedHeaders, and the body when
// forwardBody asks. 200 allows (allowedResponseHeaders go onto the request
// to the backend); any other answer is returned to the client.
func (ex *exchange) checkHTTP(a *extAuthRoutes, w http.ResponseWriter, r *http.Request) bool {
	rt, addr, why := a.authUpstream()
	if why != "" {
		ex.authFailed(a, w, why)
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), authExchangeKey{}, ex), extAuthTimeout)
	defer cancel()
	u := &url.URL{Scheme: a.backend.up.scheme, Host: addr, RawQuery: r.URL.RawQuery}
	u.Path = unescapedPrefix(a.a.PathPrefix) + r.URL.Path
	u.RawPath = a.a.PathPrefix + r.URL.EscapedPath()
	var body io.Reader
	if a.a.MaxBodySize > 0 && len(ex.bodyBuf) > 0 {
		body = bytes.NewReader(ex.bodyBuf)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		ex.authFailed(a, w, "cannot be asked: "+err.Error())
		return false
	}
	req.Host = r.Host
	req.Header = authRequestHeaders(r.Header, a.a.AllowedHeaders)
	ex.markVia(req.Header) // an auth backend that is gwdev itself loops too (loop.go)
	resp := ex.roundTripAuth(a, w, rt, addr, req)
	if resp == nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		ex.trace.Reason = fmt.Sprintf("denied by ExternalAuth %s: %s answered %d", a.a.Name, a.backend.service, resp.StatusCode)
		ex.trace.Filters = append(ex.trace.Filters, fmt.Sprintf("ExternalAuth: %s denied (%d)", a.backend.service, resp.StatusCode))
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAuthDenialBody))
		ex.authDenial(w, resp.StatusCode, resp.Header, body)
		return false
	}
	if why := incompleteAllow(resp.Body); why != "" {
		ex.authFailed(a, w, "answered 200 but "+why)
		return false
	}
	n := ex.addAuthHeaders(resp.Header, a.a.AllowedResponseHeaders)
	ex.trace.Filters = append(ex.trace.Filters, fmt.Sprintf("ExternalAuth: %s allowed (200), %d header(s) copied to the request", a.backend.service, n))
	return true
}

// incompleteAllow reads an allow's body to its end and says why the allow
// is not complete ("" : it is): only a 200 read whole (its Content-Length
// or a well-formed chunked encoding, within the check's timeout and
// maxAuthDenialBody) allows.
func incompleteAllow(body io.Reader) string {
	n, err := io.Copy(io.Discard, io.LimitReader(body, maxAuthDenialBody+1))
	switch {
	case err != nil:
		return fmt.Sprintf("its body could not be read to its end (%v), so the allow is incomplete", err)
	case n > maxAuthDenialBody:
		return fmt.Sprintf("its body is longer than %d bytes, so the allow is not read whole", maxAuthDenialBody)
	}
	return ""
}

// roundTripAuth sends an authorization request to the auth backend at
// addr (tracing the Gateway's client certificate when it has one). When the
// call fails it denies, with why, and returns nil.
func (ex *exchange) roundTripAuth(a *extAuthRoutes, w http.ResponseWriter, rt http.RoundTripper, addr string, req *http.Request) *http.Response {
	ctx := req.Context()
	if a.backend.up.clientCert != "" {
		req = req.WithContext(ex.traceClientCert(ctx))
	}
	resp, err := rt.RoundTrip(req)
	if err == nil {
		return resp
	}
	var why string
	switch {
	case errors.Is(ctx.Err(), context.Canceled): // the client's context
		ex.clientGone = true
		ex.trace.Reason = "the client went away during the ExternalAuth check of " + a.a.Name
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("did not answer within %s", extAuthTimeout)
	case errors.As(err, new(*badStatusError)):
		why = "failed: " + err.Error()
	default:
		why = "unreachable: " + err.Error()
		if tlsWhy, ok := tlsFailure(a.backend, addr, err); ok {
			why = "failed: " + tlsWhy
		}
	}
	ex.authFailed(a, w, why)
	return nil
}

// unescapedPrefix is the decoded form of a sanitised path prefix.
func unescapedPrefix(p string) string {
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

// authRequestHeaders are the client headers an HTTP auth backend gets:
// Authorization always, plus the allowed ones.
func authRequestHeaders(in http.Header, allowed []string) http.Header {
	h := http.Header{"User-Agent": {"gwdev-extauth"}}
	if v := in.Values("Authorization"); len(v) > 0 {
		h["Authorization"] = slices.Clone(v)
	}
	for _, n := range allowed {
		if v := in.Values(n); len(v) > 0 {
			h[n] = slices.Clone(v)
		}
	}
	return h
}

// authResponseSkip are the auth response headers never copied onto the
// request to the backend when allowedResponseHeaders is empty: Host and
// Authority (the spec), hop-by-hop headers, and those that describe the
// auth response itself rather than the request.
var authResponseSkip = map[string]bool{
	"Host": true, ":authority": true, "Authority": true,
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Proxy-Authenticate": true,
	"Content-Length": true, "Content-Type": true, "Content-Encoding": true, "Date": true, "Server": true,
}

// authHeaderOp is one header an auth backend puts on the request to the
// backend.
type authHeaderOp struct {
	name   string // canonical
	values []string
	action authHeaderAction
}

// authHeaderAction is how an authHeaderOp changes the request (Envoy's
// HeaderValueOption append actions).
type authHeaderAction int

const (
	authSet         authHeaderAction = iota // replace any value
	authAppend                              // add a value, keeping those there
	authAddIfAbsent                         // only when the request has none
	authSetIfExists                         // only when the request has one
)

// addAuthHeaders keeps the auth response headers to set on the request to
// the backend and returns how many there are.
func (ex *exchange) addAuthHeaders(from http.Header, allowed []string) int {
	n := 0
	if len(allowed) > 0 {
		for _, k := range allowed {
			if v := from.Values(k); len(v) > 0 && !authResponseSkip[k] {
				ex.authHeaders = append(ex.authHeaders, authHeaderOp{k, slices.Clone(v), authSet})
				n++
			}
		}
		return n
	}
	keys := slices.Sorted(maps.Keys(from))
	for _, k := range keys {
		if !authResponseSkip[k] {
			ex.authHeaders = append(ex.authHeaders, authHeaderOp{k, slices.Clone(from[k]), authSet})
			n++
		}
	}
	return n
}

// applyAuthHeaders puts what the auth backends allowed on the request to
// the backend (before the rule's header modifiers).
func (ex *exchange) applyAuthHeaders(h http.Header) {
	for _, op := range ex.authHeaders {
		_, exists := h[op.name]
		switch op.action {
		case authSet:
			h[op.name] = op.values
		case authAppend:
			h[op.name] = append(slices.Clone(h[op.name]), op.values...)
		case authAddIfAbsent:
			if !exists {
				h[op.name] = op.values
			}
		case authSetIfExists:
			if exists {
				h[op.name] = op.values
			}
		}
	}
}

// copyDenial copies a denial's headers for the client, without hop-by-hop
// ones and Content-Length (the body is copied again).
func copyDenial(w http.ResponseWriter, from http.Header) {
	for k, v := range from {
		switch k {
		case "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length":
			continue
		}
		w.Header()[k] = slices.Clone(v)
	}
}
