package emulator

import (
	"bufio"
	"context"
	"io"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/net/http/httpguts"

	"github.com/gwdev/gwdev/emulator/h1"
)

// The forwarding lane: a request the fast HTTP/1.1 path parsed (package h1)
// and the routing decision sent to a plain-HTTP backend is forwarded here
// without httputil.ReverseProxy and without the request clones, contexts
// and request writer it needs. The decision, the filters and the outbound
// header edits are the ones the ReverseProxy path runs (decide, rewriteFor);
// the lane writes the upstream request head itself, sends it over the
// upstream pool (h1.Pool: the pool's reuse guarantees hold here too), and
// passes the answer to the client with what ReverseProxy does to it
// (hop-by-hop fields, 1xx, trailers, flushes) through the same response
// writer, so that a client and the traces cannot tell the two paths apart:
// TestForwardLaneMatchesReverseProxy holds it to that. A plain answer (one
// Content-Length, chunked or no body; no 1xx, no announced trailers) is read
// by the pool's own parser into the connection's buffers and passed on as
// header fields, without an http.Header (laneForward; the trace's map is
// made from the fields when it is recorded, redactFields); every other
// answer is read by net/http's ReadResponse and passed on through the
// header map (laneRespond). Everything else takes the ReverseProxy path: request
// bodies (the fast path sends those to net/http), upgrades, mirrors,
// retries, timeouts, error pages (errorpages.go), gRPC and h2c backends,
// TLS to the backend, the echo backend, a backend client certificate,
// queries ReverseProxy would re-encode and hosts it would rewrite.

// laneWritesFirst reports whether the lane writes field k before the
// header map, or not at all, as net/http's request writer does (a switch:
// a map lookup hashes the name).
func laneWritesFirst(k string) bool {
	switch k {
	case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
		return true
	}
	return false
}

// hopByHop are the fields ReverseProxy removes from both the request and
// the answer, besides those the Connection field lists.
var hopByHop = [...]string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// queryReencoded is set when GODEBUG asks net/url for a query parameter
// limit: ReverseProxy then re-encodes every query, so the lane sends none.
var queryReencoded = strings.Contains(os.Getenv("GODEBUG"), "urlmaxqueryparams=")

// laneTakes reports whether the lane forwards the exchange's request,
// answered through w; the pool to send it with is the backend's.
func laneTakes(ex *exchange, w http.ResponseWriter, r *http.Request) (*h1.Pool, bool) {
	rec, ok := w.(*responseRecorder)
	if !ok {
		return nil, false
	}
	if _, ok := rec.ResponseWriter.(*h1.ResponseWriter); !ok {
		return nil, false // net/http's server: bodies, Expect, upgrades, HTTP/1.0, HTTP/2
	}
	b := ex.backend
	up := b.up
	if ex.upgrade || len(ex.mirrors) > 0 || ex.rule.retry != nil || ex.rule.errorPages != nil || ex.rule.requestTimeout > 0 ||
		ex.rule.backendTimeout > 0 || b.h2c || ex.view.grpc || up.echo != nil || up.scheme != "http" ||
		up.clientCert != "" || len(up.addrs) == 0 || (r.Body != nil && r.Body != http.NoBody) {
		return nil, false
	}
	if !plainQuery(r.URL.RawQuery) {
		return nil, false
	}
	up.transport(false) // sets up the pool
	return up.h1p, up.h1p != nil
}

// plainQuery reports whether ReverseProxy sends query s as it is (it
// re-encodes one with a semicolon, a malformed escape or too many
// parameters).
func plainQuery(s string) bool {
	if queryReencoded || strings.Count(s, "&") >= 10000 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ';':
			return false
		case '%':
			if i+2 >= len(s) || !ishex(s[i+1]) || !ishex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// laneHead is the upstream request head the lane writes.
type laneHead struct {
	method, target, host, userAgent string
	header                          http.Header
	// keys are the header's fields write writes, sorted by name (sortValid).
	keys []laneField
}

// laneField is one name of the outbound header and its values, as the
// map holds them.
type laneField struct {
	name   string
	values []string
}

// sortValid sorts the header's names write writes into h.keys and reports
// whether the header can be sent as is: every name and value valid, as
// h1.InvalidHeader requires (net/http's Transport refuses the rest) — one
// pass over the map for both.
func (h *laneHead) sortValid() bool {
	keys := h.keys[:0]
	for k, vs := range h.header {
		if !httpguts.ValidHeaderFieldName(k) {
			return false
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return false
			}
		}
		if laneWritesFirst(k) {
			continue
		}
		keys = append(keys, laneField{k, vs})
		if len(keys) <= laneInsertMax {
			// In place while the map is walked: map order is random, so
			// the few fields of a usual head are sorted by insertion,
			// comparing names directly (a sort's comparison is a call).
			i := len(keys) - 1
			for ; i > 0 && keys[i-1].name > k; i-- {
				keys[i] = keys[i-1]
			}
			keys[i] = laneField{k, vs}
		}
	}
	if len(keys) > laneInsertMax {
		// Insertion is quadratic: a 4 KiB head can carry hundreds of fields.
		slices.SortFunc(keys, func(a, b laneField) int { return strings.Compare(a.name, b.name) })
	}
	h.keys = keys
	return true
}

// laneInsertMax is how many fields sortValid sorts by insertion; past it
// the whole list is sorted once.
const laneInsertMax = 16

// write puts the head on w as net/http's request writer does for a request
// without a body: request line, Host, User-Agent, a zero Content-Length for
// the methods servers expect one on, the other fields sorted (as
// http.Header.WriteSubset writes them: its newline replacement has nothing
// to replace in values sortValid passed).
func (h *laneHead) write(_ *http.Request, w io.Writer) error {
	bw := w.(*bufio.Writer) // the pool's connection buffer
	for _, s := range [...]string{h.method, " ", h.target, " HTTP/1.1\r\nHost: ", h.host, "\r\n"} {
		_, _ = bw.WriteString(s)
	}
	if h.userAgent != "" {
		_, _ = bw.WriteString("User-Agent: ")
		_, _ = bw.WriteString(h.userAgent)
		_, _ = bw.WriteString("\r\n")
	}
	switch h.method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		_, _ = bw.WriteString("Content-Length: 0\r\n")
	}
	for _, f := range h.keys {
		for _, v := range f.values {
			_, _ = bw.WriteString(f.name)
			_, _ = bw.WriteString(": ")
			_, _ = bw.WriteString(textproto.TrimString(v))
			_, _ = bw.WriteString("\r\n")
		}
	}
	_, err := bw.WriteString("\r\n")
	return err
}

// laneOut is what outboundHead makes for one request: the head the lane
// writes and the outbound request rewriteFor edits. Nothing refers to it
// once the lane returns (the pool reads the request only during the
// exchange, the lane takes no mirror), so it goes back to laneOuts with its
// header map, emptied.
type laneOut struct {
	head laneHead
	req  http.Request
	url  url.URL
}

// laneOuts keeps the laneOuts of finished requests.
var laneOuts = sync.Pool{New: func() any { return new(laneOut) }}

// maxPooledLaneHeader is the most header names a pooled laneOut's map
// keeps room for: a larger one is left to the collector.
const maxPooledLaneHeader = 64

// release returns lo to laneOuts.
func (lo *laneOut) release() {
	h := lo.head.header
	if len(h) > maxPooledLaneHeader {
		h = nil
	}
	clear(h)
	keys := lo.head.keys
	if h == nil {
		keys = nil
	}
	clear(keys)
	*lo = laneOut{head: laneHead{header: h, keys: keys[:0]}}
	laneOuts.Put(lo)
}

// outboundHead builds the upstream request head: the client's header
// without hop-by-hop fields and forwarding fields, then rewriteFor's edits
// (X-Forwarded-*, auth headers, the span, header filters, URL rewrites), as
// ReverseProxy builds its outbound request. ok false: the head would not be
// the ReverseProxy path's (a host it would rewrite, a byte it refuses).
// The caller releases lo once the exchange ended.
func (s *Server) outboundHead(ex *exchange, r *http.Request) (lo *laneOut, ok bool) {
	lo = laneOuts.Get().(*laneOut)
	h := lo.head.header
	if h == nil {
		h = make(http.Header, len(r.Header)+4)
	}
	for k, vv := range r.Header {
		if laneDrops(k) {
			continue // what removeHopByHop and the forwarding fields' delete would take out
		}
		h[k] = vv[:len(vv):len(vv)] // shared: every edit below replaces a slice, none writes into one
	}
	removeConnectionListed(h, r.Header["Connection"]) // removeHopByHop's first step, on the copy
	if httpguts.HeaderValuesContainsToken(r.Header["Te"], "trailers") {
		h.Set("Te", "trailers")
	}
	lo.url = *r.URL
	u, out := &lo.url, &lo.req
	*out = http.Request{Method: r.Method, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Host: r.Host}
	s.rewriteFor(ex, &httputil.ProxyRequest{In: r, Out: out})
	head := &lo.head
	*head = laneHead{method: r.Method, target: u.RequestURI(), host: out.Host, header: h, keys: head.keys}
	if !httpguts.ValidHostHeader(head.host) {
		head.host = "" // what net/http's request writer sends then
	}
	for i := 0; i < len(head.host); i++ {
		if c := head.host[i]; c >= 0x80 || c == '%' {
			lo.release()
			return nil, false // punycode or a zone: net/http rewrites it
		}
	}
	if u.Opaque != "" || strings.ContainsFunc(head.target, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		lo.release()
		return nil, false
	}
	if ua := h["User-Agent"]; len(ua) > 0 && ua[0] != "" {
		head.userAgent = h1.WireValue(ua[0])
	}
	return lo, true
}

// laneDrops reports whether outboundHead leaves the client's field k out
// of the upstream head whatever the Connection field lists: a hop-by-hop
// field or a forwarding field rewriteFor sets afresh. A switch instead of
// a map delete per name.
func laneDrops(k string) bool {
	switch k {
	case "Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto":
		return true
	}
	return isHopByHop(k)
}

// isHopByHop reports whether k is in hopByHop (a switch: it runs for every
// field of every request and answer on the lane).
func isHopByHop(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// removeHopByHop deletes the hop-by-hop fields of h, those its Connection
// field lists first.
func removeHopByHop(h http.Header) {
	removeConnectionListed(h, h["Connection"])
	for _, f := range hopByHop {
		delete(h, f)
	}
}

// removeConnectionListed deletes from h the fields a Connection field's
// values (conn) name.
func removeConnectionListed(h http.Header, conn []string) {
	for _, f := range conn {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" {
				h.Del(sf)
			}
		}
	}
}

// forwardLane forwards the request through the lane when it takes it (see
// laneTakes); false: nothing was sent or written, ReverseProxy serves it.
// ctx is the request's context with the exchange.
func (s *Server) forwardLane(ctx context.Context, ex *exchange, w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.NoForwardLane {
		return false
	}
	pool, ok := laneTakes(ex, w, r)
	if !ok {
		return false
	}
	lo, ok := s.outboundHead(ex, r)
	if !ok {
		return false
	}
	defer lo.release()
	head, out := &lo.head, &lo.req
	if !head.sortValid() {
		return false // ReverseProxy answers it (502, as the pool refuses it)
	}
	s.laneServed.Add(1)
	ex.laneServed = true
	up := ex.backend.up
	i := ex.pinAddr
	if i < 0 || i >= len(up.addrs) {
		i = up.nextAddr()
	}
	addr := up.addrs[i]
	ex.upstreamAddr = addr
	ex.attempts++
	ex.upstreamStart = clockAfter(ex.start) // one clock read: no one prints it as a wall clock
	ex.backend.budget.request(ex.upstreamStart)
	got1xx := func(code int, hdr textproto.MIMEHeader) error {
		h := w.Header()
		copyHeader(h, http.Header(hdr))
		w.WriteHeader(code)
		clear(h)
		return nil
	}
	var a *h1.Answer
	var resp *http.Response
	var err error
	if laneOwnsAnswer(ex) {
		// ctx is the request's with a value: the client connection
		// watches the exchange (laneTakes took no timeout).
		a, resp, err = pool.ExchangeFor(w.(*responseRecorder).ResponseWriter.(*h1.ResponseWriter), ctx, out, addr, head.write, got1xx)
	} else {
		resp, err = pool.Send(ctx, out, addr, head.write, got1xx)
	}
	if err == nil && resp != nil && (resp.StatusCode < 100 || resp.StatusCode > 999) {
		_ = resp.Body.Close()
		resp, err = nil, &badStatusError{code: resp.StatusCode} // statusGuard's refusal
	}
	ex.upstreamDur = clockSince(ex.upstreamStart)
	if err != nil {
		errorHandler(w, r.WithContext(ctx), err)
		return true
	}
	if a != nil {
		s.laneForward(w.(*responseRecorder), r, a)
		return true
	}
	s.laneRespond(w, r, resp)
	return true
}

// laneOwnsAnswer reports whether the lane may read the answer with the
// pool's own parser and pass it on as header fields (laneForward): the
// exchange edits the answer's header with response header modifiers at
// most (applyFields); CORS headers and a new session cookie go through the
// header map (laneRespond).
func laneOwnsAnswer(ex *exchange) bool {
	return (ex.corsOrigin == "" || ex.cors == nil) && (ex.sessionValue == "" || ex.session == nil)
}

// laneForward passes an answer the pool's parser read to the client as
// laneRespond passes ReadResponse's, without a header map: hop-by-hop
// fields removed, the response header modifiers applied, the fields
// written as the response writer writes a map, the body streamed (flushed
// at once when its end is unknown or it is an event stream), trailers (the
// parser takes no answer that announces them) after it.
func (s *Server) laneForward(w *responseRecorder, r *http.Request, a *h1.Answer) {
	s.laneParsed.Add(1)
	// a is the pool connection's until its body ends: nothing of it is
	// read once the copy started.
	body, flush := a.Body, a.ContentLength == -1 || eventStream(h1.FieldValue(a.Fields, "Content-Type"))
	flushNow := flush && (a.NoBody || body.Buffered() == 0)
	w.writeForwarded(a.Status, removeHopByHopFields(a.Fields))
	var dst io.Writer = w
	if flush {
		if flushNow {
			_ = http.NewResponseController(w).Flush()
		}
		dst = laneFlusher{w}
	}
	buf := s.proxy.BufferPool.Get()
	err := laneCopy(dst, body, buf)
	s.proxy.BufferPool.Put(buf)
	_ = body.Close()
	if err != nil {
		if r.Context().Value(http.ServerContextKey) != nil {
			panic(http.ErrAbortHandler) // what ReverseProxy does on net/http's server
		}
		return
	}
	if tr := body.Trailer(); len(tr) > 0 {
		// None was announced (the parser leaves those to ReadResponse):
		// ReverseProxy sends them as trailers it did not announce.
		_ = http.NewResponseController(w).Flush()
		for k, vv := range tr {
			for _, v := range vv {
				w.Header().Add(http.TrailerPrefix+k, v)
			}
		}
	}
}

// removeHopByHopFields is removeHopByHop on an answer's fields (canonical
// names), in place: the fields every Connection field lists (h.Del deletes
// the canonical form of a valid name), then the hop-by-hop ones.
func removeHopByHopFields(fs []h1.Field) []h1.Field {
	var stack [32]bool
	drop := stack[:0]
	if len(fs) > len(stack) {
		drop = make([]bool, len(fs))
	} else {
		drop = stack[:len(fs)]
	}
	for _, c := range fs {
		if c.Name != "Connection" {
			continue
		}
		for sf := range strings.SplitSeq(c.Value, ",") {
			if sf = textproto.TrimString(sf); sf == "" || !httpguts.ValidHeaderFieldName(sf) {
				continue
			}
			for j, f := range fs {
				if strings.EqualFold(sf, f.Name) {
					drop[j] = true
				}
			}
		}
	}
	out := fs[:0]
	for j, f := range fs {
		if !drop[j] && !isHopByHop(f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// eventStream reports whether a Content-Type value is text/event-stream
// (mime.ParseMediaType asked only when the value names it at all).
func eventStream(ct string) bool {
	if len(ct) < len("text/event-stream") {
		return false
	}
	for i := 0; i+len("event-stream") <= len(ct); i++ {
		if strings.EqualFold(ct[i:i+len("event-stream")], "event-stream") {
			mt, _, _ := mime.ParseMediaType(ct)
			return mt == "text/event-stream"
		}
	}
	return false
}

// laneRespond passes the upstream answer to the client as ReverseProxy
// does: hop-by-hop fields removed, announced trailers listed, the body
// streamed (flushed at once when its end is unknown or it is an event
// stream), trailers after it.
func (s *Server) laneRespond(w http.ResponseWriter, r *http.Request, resp *http.Response) {
	removeHopByHop(resp.Header)
	copyHeader(w.Header(), resp.Header)
	announced := len(resp.Trailer)
	if announced > 0 {
		keys := make([]string, 0, len(resp.Trailer))
		for k := range resp.Trailer {
			keys = append(keys, k)
		}
		w.Header().Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(resp.StatusCode)
	var dst io.Writer = w
	if laneFlushAtOnce(resp) {
		// ReverseProxy arms a timer that flushes at once: the header goes
		// out before the proxy waits for the backend, after the first
		// write when the body's start is here already. (ReverseProxy's
		// timer races its first read: when that read fails at once, it
		// sends the header or nothing; the lane sends nothing.)
		if hb, ok := resp.Body.(*h1.Body); !ok || hb.Buffered() == 0 {
			_ = http.NewResponseController(w).Flush()
		}
		dst = laneFlusher{w}
	}
	buf := s.proxy.BufferPool.Get()
	err := laneCopy(dst, resp.Body, buf)
	s.proxy.BufferPool.Put(buf)
	if err != nil {
		_ = resp.Body.Close()
		if r.Context().Value(http.ServerContextKey) != nil {
			panic(http.ErrAbortHandler) // what ReverseProxy does on net/http's server
		}
		return
	}
	_ = resp.Body.Close()
	if len(resp.Trailer) > 0 {
		_ = http.NewResponseController(w).Flush()
	}
	if len(resp.Trailer) == announced {
		copyHeader(w.Header(), resp.Trailer)
		return
	}
	for k, vv := range resp.Trailer {
		for _, v := range vv {
			w.Header().Add(http.TrailerPrefix+k, v)
		}
	}
}

// laneFlushAtOnce reports whether ReverseProxy flushes after every write of
// the answer's body: an event stream, or a body of unknown length.
func laneFlushAtOnce(resp *http.Response) bool {
	return resp.ContentLength == -1 || eventStream(resp.Header.Get("Content-Type"))
}

// laneCopy copies the body to the client until it ends or either side
// fails. A read that returns the body's last bytes with its end (a chunked
// body whose last chunk was buffered with them, a close-delimited one) is
// framed but not sent on its own when dst flushes every write (laneFrame):
// the answer ends right after it without waiting on the backend, and the
// end of the response sends those bytes with the last chunk in one write
// instead of two.
func laneCopy(dst io.Writer, src io.Reader, buf []byte) error {
	for {
		nr, rerr := src.Read(buf)
		if nr > 0 {
			var nw int
			var werr error
			if f, ok := dst.(laneFlusher); ok && rerr == io.EOF {
				nw, werr = laneFramer(f).Write(buf[:nr])
			} else {
				nw, werr = dst.Write(buf[:nr])
			}
			if werr != nil {
				return werr
			}
			if nw != nr {
				return io.ErrShortWrite
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// laneFlusher flushes the client's answer after every write.
type laneFlusher struct{ w http.ResponseWriter }

func (f laneFlusher) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	_ = http.NewResponseController(f.w).Flush()
	return n, err
}

// laneFramer is laneFlusher for the body's last write: on the fast
// server's writer it frames the write as a flush would (the header goes
// out chunked, as after a flush) and leaves the send to the end of the
// response (h1.ResponseWriter.Frame); elsewhere it flushes.
type laneFramer laneFlusher

func (f laneFramer) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if rec, ok := f.w.(*responseRecorder); ok {
		if hw, ok := rec.ResponseWriter.(*h1.ResponseWriter); ok {
			_ = hw.Frame()
			return n, err
		}
	}
	_ = http.NewResponseController(f.w).Flush()
	return n, err
}

// copyHeader adds every value of src to dst, as ReverseProxy does; src's
// keys are canonical already (net/http's parser) and its value slices are
// not used again, so a key dst lacks takes src's slice.
func copyHeader(dst, src http.Header) {
	for k, vv := range src {
		if old, ok := dst[k]; ok {
			dst[k] = append(old, vv...)
			continue
		}
		dst[k] = vv
	}
}
