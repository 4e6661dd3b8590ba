package watch

import (
	"io"
	"net/http"
	"sync/atomic"
)

// readBudget bounds the bytes of every answer a cluster sends one
// ReadCluster (after decompression): a server that ignores the page size,
// or streams a list without end, is cut off at the budget instead of
// filling memory.
type readBudget struct {
	// left is what the answers may still total.
	left atomic.Int64
	// over is set when an answer went past the budget.
	over atomic.Bool
}

// wrap is a rest.Config WrapTransport: every response body counts against
// the budget.
func (b *readBudget) wrap(rt http.RoundTripper) http.RoundTripper {
	return budgetTransport{rt: rt, b: b}
}

type budgetTransport struct {
	rt http.RoundTripper
	b  *readBudget
}

// WrappedRoundTripper lets client-go reach the transport beneath (to
// cancel a request).
func (t budgetTransport) WrappedRoundTripper() http.RoundTripper { return t.rt }

func (t budgetTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &budgetBody{ReadCloser: resp.Body, b: t.b}
	}
	return resp, err
}

// budgetBody reads a body until the budget is spent. Past it, it ends the
// body early (io.EOF, so that client-go does not log the read error with
// its own advice to retry) and sets over: the truncated answer then fails
// to decode, and ReadCluster reports the limit instead of that failure.
type budgetBody struct {
	io.ReadCloser
	b *readBudget
}

func (r *budgetBody) Read(p []byte) (int, error) {
	left := r.b.left.Load()
	if left < 0 || r.b.over.Load() {
		r.b.over.Store(true)
		return 0, io.EOF
	}
	if int64(len(p)) > left+1 {
		p = p[:left+1] // one byte more than allowed tells "over" from "exactly at"
	}
	n, err := r.ReadCloser.Read(p)
	if r.b.left.Add(-int64(n)) < 0 {
		r.b.over.Store(true)
		return n - 1, io.EOF
	}
	return n, err
}
