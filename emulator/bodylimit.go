package emulator

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// The request body limit (the table's RulePolicy.MaxRequestBody, from
// ingress-nginx's proxy-body-size, nginx's client_max_body_size): a
// Content-Length above it is refused with 413 as soon as the rule is known
// (checkRulePolicy); a body without one is read, up to the limit, before it
// is forwarded (nginx buffers request bodies), and refused with 413 when it
// goes beyond.

// checkBodyLength refuses a request whose Content-Length exceeds the limit.
func (ex *exchange) checkBodyLength(limit int64) (action, bool) {
	if limit <= 0 || ex.req.ContentLength <= limit {
		return 0, false
	}
	ex.trace.Reason = "the request body is " + strconv.FormatInt(ex.req.ContentLength, 10) + " bytes, more than the limit of " +
		strconv.FormatInt(limit, 10) + " bytes"
	ex.status = http.StatusRequestEntityTooLarge
	return actRefused, true
}

// limitBody reads a body of unknown length up to the rule's limit before
// it is forwarded. It reports false when the request was answered (413, or
// 400 when the body could not be read).
func (ex *exchange) limitBody(w http.ResponseWriter, r *http.Request) bool {
	if ex.rule == nil || ex.rule.r.Policy == nil || r.Body == nil || r.Body == http.NoBody || r.ContentLength >= 0 {
		return true
	}
	limit := ex.rule.r.Policy.MaxRequestBody
	if limit <= 0 {
		return true
	}
	if ex.bodyBuf != nil {
		if int64(len(ex.bodyBuf)) > limit {
			return ex.refuseLongBody(w, limit)
		}
		return true
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		ex.trace.Reason = "reading the request body: " + err.Error()
		ex.status = http.StatusBadRequest
		ex.writeError(w, ex.status, ex.trace.Reason)
		return false
	}
	if int64(len(buf)) > limit {
		return ex.refuseLongBody(w, limit)
	}
	ex.keepBody(r, buf)
	return true
}

func (ex *exchange) refuseLongBody(w http.ResponseWriter, limit int64) bool {
	ex.trace.Reason = "the request body is more than the limit of " + strconv.FormatInt(limit, 10) + " bytes"
	ex.trace.Backend, ex.trace.Service, ex.trace.Target, ex.trace.Why = "", "", "", ""
	ex.status = http.StatusRequestEntityTooLarge
	ex.writeError(w, ex.status, ex.trace.Reason)
	return false
}

// keepBody makes buf, the whole request body read into memory, the
// exchange's buffered body and the request's replayable one.
func (ex *exchange) keepBody(r *http.Request, buf []byte) {
	ex.bodyBuf = buf
	r.Body = io.NopCloser(bytes.NewReader(buf))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	r.ContentLength = int64(len(buf))
}
