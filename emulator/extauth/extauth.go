// Package extauth speaks the ExternalAuth protocols: it builds the check
// request an auth backend gets (HTTP, or gRPC with Envoy's ext_authz
// envoy.service.auth.v3.Authorization/Check), sends it, and reads the
// answer into a [Decision].
//
// The package knows nothing of the exchange or its trace: the caller (package
// emulator's extauth.go) hands it the auth backend's [Upstream] and the
// client's request, and applies the Decision: it writes the trace, answers
// the client when the request is denied or refused, and puts [HeaderOp]s on
// the request to the backend when it is allowed. gwdev never fails open: an
// auth backend that cannot be asked, fails or answers incompletely refuses.
package extauth

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
	// MaxDenialBody is the most of a denial's body passed to the client.
	MaxDenialBody = 1 << 20
	// ErrorStatus is the answer when the auth backend cannot be asked or
	// fails (Envoy's default status_on_error): gwdev never fails open.
	ErrorStatus = http.StatusForbidden
)

// Kind is what a check decided.
type Kind int

const (
	// Allow lets the request through with Decision.Add on it.
	Allow Kind = iota
	// Deny passes the auth backend's denial to the client (Status,
	// Header, Body).
	Deny
	// Refuse answers the client with the gateway's own error answer
	// (Status): the body is too large or the auth backend failed.
	Refuse
	// ClientGone: the client went away during the check; nothing is
	// answered.
	ClientGone
)

// Decision is what one check decided, for the caller to apply.
type Decision struct {
	Kind   Kind
	Status int         // Deny, Refuse: the answer's status
	Header http.Header // Deny: the denial's headers (Content-Length and hop-by-hop ones removed when copied, see CopyDenial)
	Body   []byte      // Deny: the denial's body
	// Reason is the trace's reason (Deny, Refuse, ClientGone).
	Reason string
	// Filter is the line for the trace's filters ("" : none).
	Filter string
	// Add are the headers an allow puts on the request to the backend.
	Add []HeaderOp
}

// Upstream is how to reach the auth backend of one check.
type Upstream struct {
	// Service names the auth backend in the trace.
	Service string
	// Scheme ("http" or "https") and Addr (host:port) address it; Why,
	// when not empty, says why it cannot be asked ("has no endpoints").
	Scheme, Addr, Why string
	// RoundTrip sends a check request (the caller marks it, traces it,
	// and picks the transport).
	RoundTrip func(*http.Request) (*http.Response, error)
	// Failure describes a failed round trip other than the check's
	// context ending ("unreachable: …").
	Failure func(error) string
	// Timeout bounds the check, its answer's body included.
	Timeout time.Duration
}

// Check asks a's auth backend about r (body is r's buffered body, nil when
// not buffered) and says what it decided.
func Check(a *table.ExternalAuth, up Upstream, r *http.Request, body []byte) Decision {
	if up.Why != "" {
		return failed(a, up, up.Why)
	}
	if a.Protocol == "GRPC" {
		return checkGRPC(a, up, r, body) // grpc.go
	}
	return checkHTTP(a, up, r, body)
}

// ReadBody reads r's body into memory for the auth backend, refusing with
// 413 a body larger than forwardBody.maxSize and with 400 one that cannot be
// read. (A nil *Decision: buf is the body.)
func ReadBody(a *table.ExternalAuth, r *http.Request) (buf []byte, refused *Decision) {
	max := a.MaxBodySize
	if r.ContentLength > int64(max) {
		return nil, tooLarge(a, r.ContentLength)
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	if err != nil {
		// The client's body, not the auth backend, failed: 400, like a body
		// the proxy cannot read.
		return nil, &Decision{Kind: Refuse, Status: http.StatusBadRequest,
			Reason: fmt.Sprintf("ExternalAuth %s: reading the request body: %v", a.Name, err)}
	}
	if len(buf) > max {
		return nil, tooLarge(a, -1)
	}
	return buf, nil
}

func tooLarge(a *table.ExternalAuth, size int64) *Decision {
	what := "more than"
	if size >= 0 {
		what = fmt.Sprintf("%d bytes,", size)
	}
	return &Decision{Kind: Refuse, Status: http.StatusRequestEntityTooLarge,
		Reason: fmt.Sprintf("ExternalAuth %s: the request body is %s forwardBody.maxSize %d bytes; refused", a.Name, what, a.MaxBodySize)}
}

// failed refuses the request because the auth backend could not be asked
// or failed.
func failed(a *table.ExternalAuth, up Upstream, why string) Decision {
	return Decision{Kind: Refuse, Status: ErrorStatus,
		Reason: fmt.Sprintf("ExternalAuth %s: auth backend %s %s; denied (gwdev never fails open)", a.Name, up.Service, why),
		Filter: "ExternalAuth: " + up.Service + " failed, denied"}
}

// checkHTTP asks an HTTP auth backend: the client's method, the path
// prefix plus the client's path and query, the always-sent headers (Host,
// Authorization, Content-Length) plus allowedHeaders, and the body when
// forwardBody asks. 200 allows (allowedResponseHeaders go onto the request
// to the backend); any other answer is returned to the client.
func checkHTTP(a *table.ExternalAuth, up Upstream, r *http.Request, buf []byte) Decision {
	ctx, cancel := context.WithTimeout(r.Context(), up.Timeout)
	defer cancel()
	u := &url.URL{Scheme: up.Scheme, Host: up.Addr, RawQuery: r.URL.RawQuery}
	u.Path = unescapedPrefix(a.PathPrefix) + r.URL.Path
	u.RawPath = a.PathPrefix + r.URL.EscapedPath()
	var body io.Reader
	if a.MaxBodySize > 0 && len(buf) > 0 {
		body = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		return failed(a, up, "cannot be asked: "+err.Error())
	}
	req.Host = r.Host
	req.Header = requestHeaders(r.Header, a.AllowedHeaders)
	resp, d := roundTrip(a, up, req)
	if resp == nil {
		return d
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxDenialBody))
		return Decision{Kind: Deny, Status: resp.StatusCode, Header: resp.Header, Body: body,
			Reason: fmt.Sprintf("denied by ExternalAuth %s: %s answered %d", a.Name, up.Service, resp.StatusCode),
			Filter: fmt.Sprintf("ExternalAuth: %s denied (%d)", up.Service, resp.StatusCode)}
	}
	if why := incompleteAllow(resp.Body); why != "" {
		return failed(a, up, "answered 200 but "+why)
	}
	ops := responseHeaders(resp.Header, a.AllowedResponseHeaders)
	return Decision{Kind: Allow, Add: ops,
		Filter: fmt.Sprintf("ExternalAuth: %s allowed (200), %d header(s) copied to the request", up.Service, len(ops))}
}

// incompleteAllow reads an allow's body to its end and says why the allow
// is not complete ("" : it is): only a 200 read whole (its Content-Length
// or a well-formed chunked encoding, within the check's timeout and
// MaxDenialBody) allows.
func incompleteAllow(body io.Reader) string {
	n, err := io.Copy(io.Discard, io.LimitReader(body, MaxDenialBody+1))
	switch {
	case err != nil:
		return fmt.Sprintf("its body could not be read to its end (%v), so the allow is incomplete", err)
	case n > MaxDenialBody:
		return fmt.Sprintf("its body is longer than %d bytes, so the allow is not read whole", MaxDenialBody)
	}
	return ""
}

// roundTrip sends a check request; when the call fails it returns nil and
// the decision (refused, or the client gone).
func roundTrip(a *table.ExternalAuth, up Upstream, req *http.Request) (*http.Response, Decision) {
	ctx := req.Context()
	resp, err := up.RoundTrip(req)
	if err == nil {
		return resp, Decision{}
	}
	var why string
	switch {
	case errors.Is(ctx.Err(), context.Canceled): // the client's context
		return nil, Decision{Kind: ClientGone, Reason: "the client went away during the ExternalAuth check of " + a.Name}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("did not answer within %s", up.Timeout)
	default:
		why = up.Failure(err)
	}
	return nil, failed(a, up, why)
}

// unescapedPrefix is the decoded form of a sanitised path prefix.
func unescapedPrefix(p string) string {
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

// requestHeaders are the client headers an HTTP auth backend gets:
// Authorization always, plus the allowed ones.
func requestHeaders(in http.Header, allowed []string) http.Header {
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

// responseSkip are the auth response headers never copied onto the
// request to the backend when allowedResponseHeaders is empty: Host and
// Authority (the spec), hop-by-hop headers, and those that describe the
// auth response itself rather than the request.
var responseSkip = map[string]bool{
	"Host": true, ":authority": true, "Authority": true,
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Proxy-Authenticate": true,
	"Content-Length": true, "Content-Type": true, "Content-Encoding": true, "Date": true, "Server": true,
}

// HeaderOp is one header an auth backend puts on the request to the
// backend.
type HeaderOp struct {
	Name   string // canonical
	Values []string
	Action Action
}

// Action is how a HeaderOp changes the request (Envoy's HeaderValueOption
// append actions).
type Action int

const (
	Set         Action = iota // replace any value
	Append                    // add a value, keeping those there
	AddIfAbsent               // only when the request has none
	SetIfExists               // only when the request has one
)

// responseHeaders are the HTTP auth response's headers to set on the
// request to the backend.
func responseHeaders(from http.Header, allowed []string) []HeaderOp {
	var ops []HeaderOp
	if len(allowed) > 0 {
		for _, k := range allowed {
			if v := from.Values(k); len(v) > 0 && !responseSkip[k] {
				ops = append(ops, HeaderOp{k, slices.Clone(v), Set})
			}
		}
		return ops
	}
	for _, k := range slices.Sorted(maps.Keys(from)) {
		if !responseSkip[k] {
			ops = append(ops, HeaderOp{k, slices.Clone(from[k]), Set})
		}
	}
	return ops
}

// Apply puts what the auth backends allowed on h, the request to the
// backend.
func Apply(h http.Header, ops []HeaderOp) {
	for _, op := range ops {
		_, exists := h[op.Name]
		switch op.Action {
		case Set:
			h[op.Name] = op.Values
		case Append:
			h[op.Name] = append(slices.Clone(h[op.Name]), op.Values...)
		case AddIfAbsent:
			if !exists {
				h[op.Name] = op.Values
			}
		case SetIfExists:
			if exists {
				h[op.Name] = op.Values
			}
		}
	}
}

// CopyDenial copies a denial's headers for the client, without hop-by-hop
// ones and Content-Length (the body is copied again).
func CopyDenial(to, from http.Header) {
	for k, v := range from {
		switch k {
		case "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length":
			continue
		}
		to[k] = slices.Clone(v)
	}
}
