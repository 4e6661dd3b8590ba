package h1

import (
	"bufio"
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// ResponseWriter is the fast path's http.ResponseWriter. It puts on the wire
// what net/http's response writer puts there for the same calls (status
// line, header order, Date, Content-Length of a short body, sniffed
// Content-Type, chunking, trailers, Connection: close), so that a client
// cannot tell the two paths apart; the fast path's differential test
// holds it to that.
type ResponseWriter struct {
	fc  *fastConn
	req *http.Request

	handlerHeader http.Header
	// sentHeader is the header as WriteHeader saw it, when the handler had
	// the header map then (nil: the handler's map is written).
	sentHeader   http.Header
	calledHeader bool
	wroteHeader  bool // WriteHeader ran (the header may still be buffered)
	headerOut    bool // the header went to the connection's buffer
	status       int
	// contentLength is the declared length (-1: none).
	contentLength int64
	written       int64
	handlerDone   bool
	closeAfter    bool
	// wantsClose is set when the request asked to close the connection.
	wantsClose bool
	chunking   bool
	trailers   []string
	// w buffers the body before it is chunked, as net/http's does.
	w *bufio.Writer
	// forwarded is set when the header is fields (WriteForwarded), not
	// the handler's map; handlerHeader is then made from them when asked.
	forwarded bool
	fields    []Field
	// released is set when the handler said nothing refers to the writer
	// once it returns (Release).
	released bool
}

// bufferBeforeChunking is the body net/http buffers before it chooses
// between a Content-Length and chunking.
const bufferBeforeChunking = 2048

var (
	_ http.ResponseWriter                            = (*ResponseWriter)(nil)
	_ interface{ FlushError() error }                = (*ResponseWriter)(nil)
	_ interface{ SetWriteDeadline(time.Time) error } = (*ResponseWriter)(nil)
)

func newFastResponse(fc *fastConn, req *http.Request) *ResponseWriter {
	w := fc.spare
	if w == nil {
		w = new(ResponseWriter)
	}
	fc.spare = nil
	*w = ResponseWriter{fc: fc, req: req, contentLength: -1,
		wantsClose: req.Close || hasToken(headerGet(req.Header, "Connection"), "close")}
	if fc.bodyBuf == nil {
		fc.bodyBuf = bufio.NewWriterSize(fastChunkWriter{w}, bufferBeforeChunking)
	} else {
		fc.bodyBuf.Reset(fastChunkWriter{w})
	}
	w.w = fc.bodyBuf
	return w
}

// Release tells the fast path that nothing refers to w, nor to the request
// it answers (its header map and values, URL and context), once the
// handler returns (no goroutine, timer or value kept), so that the
// connection's next request may take them instead of new ones: a write to
// w after that would land in another request's answer, and the request's
// header, URL and context would be the next request's. A handler that
// cannot be sure does not call it.
func (w *ResponseWriter) Release() { w.released = true }

// Header returns the response header map. After WriteForwarded it holds
// the forwarded fields (made at the first call); changing it then changes
// nothing on the wire.
func (w *ResponseWriter) Header() http.Header {
	if w.handlerHeader == nil {
		w.handlerHeader = fieldsHeader(w.fields)
	}
	if w.forwarded {
		return w.handlerHeader
	}
	if w.sentHeader == nil && w.wroteHeader && !w.headerOut {
		w.sentHeader = w.handlerHeader.Clone()
	}
	w.calledHeader = true
	return w.handlerHeader
}

// WriteHeader sends an informational answer at once, or notes the final
// status.
func (w *ResponseWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		bw := w.fc.bw
		writeStatusLine(bw, code)
		_ = w.handlerHeader.WriteSubset(bw, excludedNoBody)
		_, _ = bw.WriteString("\r\n")
		_ = bw.Flush()
		return
	}
	w.wroteHeader = true
	w.status = code
	if w.calledHeader && w.sentHeader == nil {
		w.sentHeader = w.handlerHeader.Clone()
	}
	if cl := headerGet(w.handlerHeader, "Content-Length"); cl != "" {
		if v, err := strconv.ParseInt(cl, 10, 64); err == nil && v >= 0 {
			w.contentLength = v
		} else {
			w.handlerHeader.Del("Content-Length")
		}
	}
}

// WriteForwarded is WriteHeader(code) for a handler whose header is fields
// (canonical names, each name's values in order) instead of the Header
// map: the bytes on the wire are those of filling the map with them and
// calling WriteHeader, without making the map. The fields are copied;
// code is a final status (200-999). Nothing happens after Header or
// WriteHeader was called.
func (w *ResponseWriter) WriteForwarded(code int, fields []Field) {
	if w.wroteHeader || w.calledHeader {
		return
	}
	if code < 200 || code > 999 {
		panic(fmt.Sprintf("invalid WriteForwarded code %v", code))
	}
	w.fields = append(w.fc.fields[:0], fields...)
	w.fc.fields = w.fields[:0]
	// Sorted by name, each name's values in order, as Header.Write
	// writes a map.
	slices.SortStableFunc(w.fields, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	w.forwarded, w.wroteHeader, w.status = true, true, code
	if cl := FieldValue(w.fields, "Content-Length"); cl != "" {
		if v, err := strconv.ParseInt(cl, 10, 64); err == nil && v >= 0 {
			w.contentLength = v
		} else {
			w.fields = DropFields(w.fields, "Content-Length")
		}
	}
}

// Forwarded returns, after WriteForwarded, the fields Header would return
// as a map, sorted by name (nil: the header is the handler's map, or
// Header was asked for and its map may hold more, such as trailers). They
// are valid until the request's handler returns.
func (w *ResponseWriter) Forwarded() []Field {
	if !w.forwarded || w.handlerHeader != nil {
		return nil
	}
	if w.fields == nil {
		return []Field{}
	}
	return w.fields
}

// fieldsHeader is fields as a header map (an empty map: none): one map
// and one array for all values.
func fieldsHeader(fields []Field) http.Header {
	h := make(http.Header, len(fields))
	vals := make([]string, len(fields))
	for i, f := range fields {
		vals[i] = f.Value
		if vv, ok := h[f.Name]; ok {
			h[f.Name] = append(vv, f.Value)
			continue
		}
		h[f.Name] = vals[i : i+1 : i+1]
	}
	return h
}

func (w *ResponseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !bodyAllowedForStatus(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(len(p))
	if w.contentLength != -1 && w.written > w.contentLength {
		return 0, http.ErrContentLength
	}
	return w.w.Write(p)
}

// FlushError sends what is buffered to the client.
func (w *ResponseWriter) FlushError() error {
	err := w.Frame()
	if e2 := w.fc.bw.Flush(); err == nil {
		err = e2
	}
	return err
}

// Frame is FlushError without the send: the header and the buffered body
// (chunked when no length is known) go into the connection's buffer as a
// flush frames them, so the bytes on the wire are a flush's, and the next
// flush or the end of the response sends them with what follows in one
// write. Use it only when nothing waits before that end.
func (w *ResponseWriter) Frame() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	err := w.w.Flush()
	if !w.headerOut {
		w.writeHeader(nil)
	}
	return err
}

// SetWriteDeadline sets the connection's write deadline (the write-stall
// timeout, limits.go). It stays after the response: the next request's
// handler may adopt it (AdoptWriteDeadline); if it does not, it is cleared
// before that response is written.
func (w *ResponseWriter) SetWriteDeadline(t time.Time) error {
	fc := w.fc
	fc.inherited = false
	if t.Equal(fc.writeDeadline) {
		return nil
	}
	fc.writeDeadline = t
	return fc.c.SetWriteDeadline(t)
}

// AdoptWriteDeadline returns the write deadline the connection still has
// from its previous response (zero: none) and makes it this response's,
// as if the handler had set it: a handler that keeps a deadline far enough
// away (limits.go) then sets none for a response on a busy connection.
func (w *ResponseWriter) AdoptWriteDeadline() time.Time {
	w.fc.inherited = false
	return w.fc.writeDeadline
}

// finish ends the response after the handler returned.
func (w *ResponseWriter) finish() {
	w.handlerDone = true
	_ = w.Frame()
	bw := w.fc.bw
	if w.chunking {
		_, _ = bw.WriteString("0\r\n")
		if t := w.finalTrailers(); t != nil {
			_ = t.Write(bw)
		}
		_, _ = bw.WriteString("\r\n")
	}
	if bw.Buffered() > 0 {
		yieldRound() // the round's answers go out together
		_ = bw.Flush()
	}
}

// reuse reports whether the connection may carry another request.
func (w *ResponseWriter) reuse() bool {
	if w.closeAfter || w.fc.werr != nil {
		return false
	}
	return w.req.Method == http.MethodHead || w.contentLength == -1 || !bodyAllowedForStatus(w.status) ||
		w.contentLength == w.written
}

// fastChunkWriter receives the buffered body: it writes the header first,
// then the body, chunked when no length is known.
type fastChunkWriter struct{ w *ResponseWriter }

func (cw fastChunkWriter) Write(p []byte) (int, error) {
	w := cw.w
	if !w.headerOut {
		w.writeHeader(p)
	}
	if w.req.Method == http.MethodHead {
		return len(p), nil
	}
	bw := w.fc.bw
	if w.chunking {
		if _, err := fmt.Fprintf(bw, "%x\r\n", len(p)); err != nil {
			w.fc.closeOwn()
			return 0, err
		}
	}
	n, err := bw.Write(p)
	if w.chunking && err == nil {
		_, err = bw.WriteString("\r\n")
	}
	if err != nil {
		w.fc.closeOwn()
	}
	return n, err
}

// writeHeader puts the status line and header into the connection's
// buffer, with what net/http adds: p is the start of the body.
func (w *ResponseWriter) writeHeader(p []byte) {
	w.headerOut = true
	isHEAD := w.req.Method == http.MethodHead
	keepAlive := !w.fc.f.shutting.Load()
	header, owned := w.sentHeader, w.sentHeader != nil
	if !owned {
		header = w.handlerHeader
	}
	var exclude map[string]bool
	get := func(key string) string {
		if w.forwarded {
			return FieldValue(w.fields, key)
		}
		return headerGet(header, key)
	}
	has := func(key string) bool {
		if w.forwarded {
			return fieldHas(w.fields, key)
		}
		return headerHas(header, key)
	}
	// del leaves a field out: from the map sent when the writer owns it,
	// else (the handler's map, forwarded fields, which Header returns
	// afterwards) by name.
	del := func(key string) {
		if owned && !w.forwarded {
			header.Del(key)
			return
		}
		if !has(key) {
			return
		}
		if exclude == nil {
			exclude = map[string]bool{}
		}
		exclude[key] = true
	}
	var extra fastExtraHeader
	hasTrailers := false
	for k := range w.sentHeader {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			if exclude == nil {
				exclude = map[string]bool{}
			}
			exclude[k] = true
			hasTrailers = true
		}
	}
	for _, v := range w.sentHeader["Trailer"] {
		hasTrailers = true
		w.declareTrailers(v)
	}
	if w.forwarded {
		for _, f := range w.fields {
			if strings.HasPrefix(f.Name, http.TrailerPrefix) {
				del(f.Name)
				hasTrailers = true
			} else if f.Name == "Trailer" {
				hasTrailers = true
				w.declareTrailers(f.Value)
			}
		}
	}
	te := get("Transfer-Encoding")
	hasTE := te != ""
	if w.handlerDone && !hasTrailers && !hasTE && bodyAllowedForStatus(w.status) &&
		!has("Content-Length") && (!isHEAD || len(p) > 0) {
		w.contentLength = int64(len(p))
		extra.contentLength = strconv.Itoa(len(p))
	}
	hasCL := w.contentLength != -1
	if w.wantsClose {
		w.closeAfter = true
	}
	if get("Connection") == "close" || !keepAlive {
		w.closeAfter = true
	}
	code := w.status
	if bodyAllowedForStatus(code) {
		if get("Content-Encoding") == "" && !has("Content-Type") && !hasTE && len(p) > 0 {
			extra.contentType = http.DetectContentType(p)
		}
	} else {
		for _, k := range suppressedHeaders(code) {
			del(k)
		}
	}
	if !has("Date") {
		extra.date = time.Now().UTC().Format(http.TimeFormat)
	}
	if hasCL && hasTE && te != "identity" {
		del("Content-Length")
		hasCL = false
	}
	switch {
	case isHEAD || !bodyAllowedForStatus(code) || code == http.StatusNoContent:
		del("Transfer-Encoding")
	case hasCL:
		del("Transfer-Encoding")
	case hasTE && te == "identity":
		w.closeAfter = true
		del("Transfer-Encoding")
	default:
		w.chunking = true
		extra.transferEncoding = "chunked"
		if hasTE && te == "chunked" {
			del("Transfer-Encoding")
		}
	}
	if w.chunking {
		del("Content-Length")
	}
	sentConnection := headerGet(w.sentHeader, "Connection")
	if w.forwarded {
		sentConnection = get("Connection")
	}
	if w.closeAfter && (!keepAlive || !hasToken(sentConnection, "close")) && code != http.StatusSwitchingProtocols {
		del("Connection")
		extra.connection = "close"
	}
	bw := w.fc.bw
	writeStatusLine(bw, code)
	if w.forwarded {
		writeFields(bw, w.fields, exclude)
	} else {
		_ = w.sentHeader.WriteSubset(bw, exclude)
	}
	extra.write(bw)
	_, _ = bw.WriteString("\r\n")
}

// declareTrailers notes the trailers a Trailer field's value announces.
func (w *ResponseWriter) declareTrailers(v string) {
	for k := range strings.SplitSeq(v, ",") {
		if k = trimOWS(k); k != "" {
			w.declareTrailer(k)
		}
	}
}

// writeFields writes header fields (sorted by name) but those exclude
// names as Header.WriteSubset writes a map: invalid names left out, line
// breaks in values made spaces, values trimmed.
func writeFields(bw *bufio.Writer, fields []Field, exclude map[string]bool) {
	for _, f := range fields {
		if exclude[f.Name] || !httpguts.ValidHeaderFieldName(f.Name) {
			continue
		}
		for _, s := range [...]string{f.Name, ": ", WireValue(f.Value), "\r\n"} {
			_, _ = bw.WriteString(s)
		}
	}
}

// lineBreaksToSpaces is what net/http does to line breaks in a header value.
var lineBreaksToSpaces = strings.NewReplacer("\n", " ", "\r", " ")

// WireValue is a header value as net/http writes it: line breaks made
// spaces, surrounding whitespace trimmed.
func WireValue(v string) string {
	// Two vectorised byte searches: ContainsAny walks a short value byte
	// by byte against a set.
	if strings.IndexByte(v, '\n') >= 0 || strings.IndexByte(v, '\r') >= 0 {
		v = lineBreaksToSpaces.Replace(v)
	}
	return textproto.TrimString(v)
}

// declareTrailer notes a trailer the Trailer header announced.
func (w *ResponseWriter) declareTrailer(k string) {
	k = http.CanonicalHeaderKey(k)
	if !httpguts.ValidTrailerHeader(k) {
		return
	}
	w.trailers = append(w.trailers, k)
}

// finalTrailers are the trailers to send after the last chunk (nil: none).
func (w *ResponseWriter) finalTrailers() http.Header {
	var t http.Header
	for k, vv := range w.handlerHeader {
		if kk, found := strings.CutPrefix(k, http.TrailerPrefix); found {
			if t == nil {
				t = http.Header{}
			}
			t[kk] = vv
		}
	}
	for _, k := range w.trailers {
		if t == nil {
			t = http.Header{}
		}
		for _, v := range w.handlerHeader[k] {
			t.Add(k, v)
		}
	}
	return t
}

// fastExtraHeader is what the writer adds to the handler's header, in
// net/http's order.
type fastExtraHeader struct {
	date, contentLength                       string
	contentType, connection, transferEncoding string
}

func (h *fastExtraHeader) write(bw *bufio.Writer) {
	for _, f := range [...]struct{ k, v string }{
		{"Date", h.date}, {"Content-Length", h.contentLength},
		{"Content-Type", h.contentType}, {"Connection", h.connection}, {"Transfer-Encoding", h.transferEncoding},
	} {
		if f.v != "" {
			_, _ = bw.WriteString(f.k)
			_, _ = bw.WriteString(": ")
			_, _ = bw.WriteString(f.v)
			_, _ = bw.WriteString("\r\n")
		}
	}
}

// excludedNoBody are the fields an informational answer does not carry.
var excludedNoBody = map[string]bool{"Content-Length": true, "Transfer-Encoding": true}

func writeStatusLine(bw *bufio.Writer, code int) {
	_, _ = bw.WriteString("HTTP/1.1 ")
	if text := http.StatusText(code); text != "" {
		_, _ = bw.Write(strconv.AppendInt(bw.AvailableBuffer(), int64(code), 10))
		_ = bw.WriteByte(' ')
		_, _ = bw.WriteString(text)
		_, _ = bw.WriteString("\r\n")
		return
	}
	fmt.Fprintf(bw, "%03d status code %d\r\n", code, code)
}

// bodyAllowedForStatus reports whether a status may carry a body.
func bodyAllowedForStatus(status int) bool {
	return !(status >= 100 && status <= 199) && status != http.StatusNoContent && status != http.StatusNotModified
}

// suppressedHeaders are the fields an answer without a body drops.
func suppressedHeaders(status int) []string {
	switch {
	case status == http.StatusNotModified:
		return []string{"Content-Type", "Content-Length", "Transfer-Encoding"}
	case !bodyAllowedForStatus(status):
		return []string{"Content-Length", "Transfer-Encoding"}
	}
	return nil
}

// headerGet is the first value of an exact (canonical) key.
func headerGet(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// headerHas reports whether an exact key is present.
func headerHas(h http.Header, key string) bool {
	_, ok := h[key]
	return ok
}

// hasToken reports whether v holds token, case-insensitively, between
// spaces, tabs or commas (net/http's test for "Connection: close").
func hasToken(v, token string) bool {
	for sp := 0; sp+len(token) <= len(v); sp++ {
		if sp > 0 && !isTokenBoundary(v[sp-1]) {
			continue
		}
		if end := sp + len(token); end != len(v) && !isTokenBoundary(v[end]) {
			continue
		}
		if strings.EqualFold(v[sp:sp+len(token)], token) {
			return true
		}
	}
	return false
}

func isTokenBoundary(b byte) bool { return b == ' ' || b == ',' || b == '\t' }
