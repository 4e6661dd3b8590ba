package emulator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// This file replaces error answers with an error backend's answer: the
// table's ErrorPages, ingress-nginx's custom-http-errors (nginx's
// proxy_intercept_errors and error_page). The lane (lane.go) leaves such
// rules to the ReverseProxy path, whose ModifyResponse and ErrorHandler
// call here.

// builtinErrorBody is the answer of ingress-nginx's own default backend,
// which gwdev gives when no error backend is set.
const builtinErrorBody = "default backend - 404"

// errorPages is a compiled table.ErrorPages.
type errorPages struct {
	codes []int
	// backend is the error backend (nil: the built-in 404).
	backend *backendRoutes
	from    string
}

func (c *compiler) errorPages(ep *table.ErrorPages) *errorPages {
	if ep == nil || len(ep.Codes) == 0 {
		return nil
	}
	p := &errorPages{codes: ep.Codes, from: ep.From}
	if ep.Backend != nil {
		p.backend = c.backend(ep.Backend)
	}
	return p
}

// intercepts reports whether the exchange's rule replaces answers of code.
func (ex *exchange) intercepts(code int) bool {
	return ex.rule != nil && ex.rule.errorPages != nil && slices.Contains(ex.rule.errorPages.codes, code)
}

// errorPage asks the rule's error backend for the answer to a request
// whose answer was code, and notes the replacement in the trace.
func (ex *exchange) errorPage(ctx context.Context, code int) (*http.Response, error) {
	p := ex.rule.errorPages
	by := "gwdev's built-in default backend (404 \"" + builtinErrorBody + "\")"
	if p.backend != nil {
		by = "error backend " + p.backend.service
	}
	ex.trace.Filters = append(ex.trace.Filters, "ErrorPages ("+p.from+"): the answer "+strconv.Itoa(code)+" is replaced by the answer of "+by)
	if p.backend == nil {
		return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", ProtoMajor: 1, ProtoMinor: 1,
			Header:        http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
			Body:          io.NopCloser(strings.NewReader(builtinErrorBody)),
			ContentLength: int64(len(builtinErrorBody))}, nil
	}
	up := p.backend.up
	if up == nil || up.echo == nil && len(up.addrs) == 0 {
		return nil, errors.New("custom-http-errors: error backend " + p.backend.service + " has no endpoints")
	}
	u := url.URL{Scheme: up.scheme, Host: "echo", Path: ex.req.URL.Path, RawPath: ex.req.URL.RawPath, RawQuery: ex.req.URL.RawQuery}
	if up.echo == nil {
		u.Host = up.addrs[up.nextAddr()]
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Host = ex.req.Host
	h := req.Header
	h.Set("X-Code", strconv.Itoa(code))
	h.Set("X-Format", ex.req.Header.Get("Accept"))
	h.Set("X-Original-URI", requestURI(ex.req.URL))
	route := ex.rule.r.Route
	h.Set("X-Namespace", route.Namespace)
	h.Set("X-Ingress-Name", route.Name)
	if ex.backend != nil {
		h.Set("X-Service-Name", ex.backend.b.Service.Name)
		h.Set("X-Service-Port", strconv.Itoa(int(ex.backend.b.Port)))
	}
	h.Set("X-Request-ID", requestID(ex.req))
	ex.markVia(h) // an error backend that is gwdev itself loops too (loop.go)
	resp, err := up.transport(p.backend.h2c).RoundTrip(req)
	if err != nil {
		return nil, errors.New("custom-http-errors: error backend " + p.backend.service + ": " + err.Error())
	}
	for _, k := range []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"} {
		resp.Header.Del(k)
	}
	return resp, nil
}

// requestID is nginx's $req_id as ingress-nginx sets it: the request's
// X-Request-ID, else 16 random bytes in hex.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-ID"); id != "" {
		return id
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// replaceAnswer swaps a backend's answer for the error backend's
// (ModifyResponse).
func (ex *exchange) replaceAnswer(resp *http.Response) error {
	ep, err := ex.errorPage(resp.Request.Context(), resp.StatusCode)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	resp.StatusCode, resp.Status, resp.Header, resp.Body, resp.ContentLength = ep.StatusCode, ep.Status, ep.Header, ep.Body, ep.ContentLength
	resp.Trailer = nil
	return nil
}

// writeErrorPage answers a gateway error (502, 503, 504) with the error
// backend's answer; false when that failed and the error stands.
func (ex *exchange) writeErrorPage(ctx context.Context, w http.ResponseWriter, code int) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mirrorTimeout)
	defer cancel()
	resp, err := ex.errorPage(ctx, code)
	if err != nil {
		ex.trace.Filters = append(ex.trace.Filters, err.Error())
		return false
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
	return true
}
