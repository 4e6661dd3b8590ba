package emulator

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/gwdev/gwdev/emulator/h1"
)

// Redacted replaces a credential's value in every output gwdev has for a
// request: traces, the admin API, the access log, the dashboard, its
// copy-as-curl, and `gwdev explain` (text and JSON).
const Redacted = "[redacted]"

// SensitiveHeaders are the request and response headers whose values are
// always redacted (canonical names). A header whose lower-case name
// contains one of SensitiveHeaderWords is redacted as well.
var SensitiveHeaders = []string{
	"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
	"X-Api-Key", "X-Auth-Token", "X-Access-Token", "X-Amz-Security-Token",
	"X-Csrf-Token", "X-Xsrf-Token", "X-Goog-Api-Key", "Api-Key",
}

// SensitiveHeaderWords redact a header whose lower-case name contains one
// of them (X-Session-Id, X-Client-Secret, Ocp-Apim-Subscription-Key,
// X-Goog-Iap-Jwt-Assertion, X-Amzn-Oidc-Data, X-Auth-Request-Email, …),
// unless the name is one of NotSensitiveHeaders.
var SensitiveHeaderWords = []string{
	"auth", "cookie", "token", "secret", "password", "passwd", "key", "jwt", "assertion", "oidc",
	"credential", "signature", "session",
}

// NotSensitiveHeaders are the headers a word of SensitiveHeaderWords would
// redact but that carry no credential, kept by a deliberate decision so that
// traces stay useful: the authority (Host's HTTP/2 name), authentication
// challenges (they name a scheme and realm, never a secret), the WebSocket
// handshake's nonce and its answer, and idempotency keys (chosen by clients
// to be repeated, and what a retry decision reads).
var NotSensitiveHeaders = []string{
	":authority", "Authority", "Www-Authenticate", "Proxy-Authenticate",
	"Sec-Websocket-Key", "Sec-Websocket-Accept", "Idempotency-Key", "X-Idempotency-Key",
}

// SensitiveQueryNames are the query parameters whose values are always
// redacted (compared without case): signed-URL and OAuth parameters.
var SensitiveQueryNames = []string{
	"sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
	"x-goog-signature", "x-goog-credential", "auth", "code", "jwt", "session", "sid",
	"token", "access_token", "id_token", "refresh_token", "client_secret", "apikey", "api_key",
	"key", "password", "pwd", "pass", "secret",
}

// SensitiveQueryWords redact a query parameter whose lower-case name
// contains one of them (api_key, x-amz-signature, sessionid, …).
var SensitiveQueryWords = []string{"token", "key", "secret", "password", "signature", "session", "credential", "jwt",
	"assertion", "oidc"}

// sensitiveHeader reports whether a header's values are credentials. It
// runs for every header of every traced request: the answers for the first
// maxSensitiveCache names seen are kept (names repeat from request to
// request), and the others are worked out each time without allocating.
func sensitiveHeader(name string) bool {
	if v, ok := sensitiveCache.Load(name); ok {
		return v.(bool)
	}
	secret := isSensitiveHeader(name)
	if sensitiveCached.Add(1) <= maxSensitiveCache {
		sensitiveCache.Store(strings.Clone(name), secret) // a name may be a slice of a whole request head
	}
	return secret
}

// maxSensitiveCache bounds sensitiveHeader's cache, against clients that
// send new header names with every request.
const maxSensitiveCache = 1024

var (
	sensitiveCache  sync.Map // header name → bool
	sensitiveCached atomic.Int64
)

// isSensitiveHeader is sensitiveHeader without the cache.
func isSensitiveHeader(name string) bool {
	for _, n := range SensitiveHeaders {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	for _, n := range NotSensitiveHeaders {
		if strings.EqualFold(name, n) {
			return false
		}
	}
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return containsAny(strings.ToLower(name), SensitiveHeaderWords)
		}
	}
	for _, w := range SensitiveHeaderWords {
		if containsFoldASCII(name, w) {
			return true
		}
	}
	return false
}

// containsFoldASCII reports whether the ASCII string s contains the
// lower-case word w, ignoring case.
func containsFoldASCII(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		j := 0
		for j < len(w) {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != w[j] {
				break
			}
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// sensitiveParam reports whether a query parameter's value is a
// credential.
func sensitiveParam(name string) bool {
	n := strings.ToLower(name)
	for _, s := range SensitiveQueryNames {
		if n == s {
			return true
		}
	}
	return containsAny(n, SensitiveQueryWords)
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// redactQuery replaces the values of sensitive query parameters, keeping the
// rest of the raw query as sent.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	var b strings.Builder
	changed := false
	for i, part := range strings.Split(raw, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		k, _, hasValue := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && sensitiveParam(name) {
			b.WriteString(k)
			b.WriteString("=" + Redacted)
			changed = true
			continue
		}
		b.WriteString(part)
	}
	if !changed {
		return raw
	}
	return b.String()
}

// RedactURI redacts a path with its query, or an absolute URL: the values
// of sensitive query parameters and a password in the user information.
func RedactURI(s string) string {
	if strings.IndexByte(s, '?') < 0 && strings.IndexByte(s, '@') < 0 {
		return s // no query, no user information: nothing below changes s
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok && !strings.ContainsAny(scheme, "/?") {
		authority := rest
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			authority = rest[:i]
		}
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			if user, _, hasPass := strings.Cut(authority[:at], ":"); hasPass {
				s = scheme + "://" + user + ":" + Redacted + rest[at:]
			}
		}
	}
	base, query, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	out := base + "?" + redactQuery(query)
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// redactText redacts the URLs in free text (a filter's description, a
// reason): every space-separated word with a query or user information.
func redactText(s string) string {
	if strings.IndexByte(s, '?') < 0 && strings.IndexByte(s, '@') < 0 {
		return s // what ContainsAny(s, "?@") says, with the vectorised search
	}
	words := strings.Split(s, " ")
	for i, w := range words {
		if strings.ContainsAny(w, "?@") {
			words[i] = RedactURI(w)
		}
	}
	return strings.Join(words, " ")
}

// requestURI renders a request's path and query as sent (redactTrace
// redacts it).
func requestURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery == "" {
		return p
	}
	return p + "?" + u.RawQuery
}

// Sizes past which a trace keeps a shortened copy of what the client sent.
const (
	// TraceValueLimit is the longest header value, path, host, location,
	// reason or filter description a trace keeps; a longer one is cut and
	// ends with TruncatedMarker and the number of bytes cut.
	TraceValueLimit = 2048
	// TraceHeaderLimit bounds the header names and values a trace keeps
	// per direction; the values past it are left out and counted in
	// Trace.Truncated.
	TraceHeaderLimit = 16 << 10
)

// TruncatedMarker starts the note that ends a value cut to TraceValueLimit:
// "…[truncated 1046528 bytes]".
const TruncatedMarker = "…[truncated "

// IsTruncated reports whether a trace value was cut to TraceValueLimit.
func IsTruncated(v string) bool {
	return strings.HasSuffix(v, " bytes]") && strings.Contains(v, TruncatedMarker)
}

// clip cuts s to TraceValueLimit bytes (at a rune boundary) with a marker.
func clip(s string) string {
	if len(s) <= TraceValueLimit || IsTruncated(s) {
		return s
	}
	n := TraceValueLimit
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return fmt.Sprintf("%s%s%d bytes]", s[:n], TruncatedMarker, len(s)-n)
}

// redactAll redacts and clips every element of l, copying l only when an
// element changes.
func redactAll(l []string) []string {
	var out []string
	for i, s := range l {
		if r := redactText(clip(s)); r != s || out != nil {
			if out == nil {
				out = slices.Clone(l)
			}
			out[i] = r
		}
	}
	if out == nil {
		return l
	}
	return out
}

// headerCounts says what redactHeader left out or cut; redactTraceHeaders
// adds the copy's size (headerSize), kept with it in the memo.
type headerCounts struct{ dropped, cut, size int }

// redactHeader copies h with credential values replaced by Redacted, URLs
// in the other values redacted (Location, Referer), and long values
// clipped, keeping at most TraceHeaderLimit bytes.
//
// The values go into vals's array when it has room (redactTrace's one
// array for both directions); the rest of vals is returned.
func redactHeader(h http.Header, vals []string) (http.Header, headerCounts, []string) {
	var n headerCounts
	if len(h) == 0 {
		return nil, n, vals
	}
	var stack [32]string
	names, total := stack[:0], 0
	for name, vs := range h {
		names = append(names, name)
		total += len(vs)
	}
	slices.Sort(names) // the same headers are left out every time
	r := newHeaderRedaction(len(h), total, vals)
	for _, name := range names {
		secret, first := sensitiveHeader(name), len(r.vals)
		for _, v := range h[name] {
			r.value(name, secret, v)
		}
		r.name(name, first)
	}
	return r.out, r.n, r.vals[len(r.vals):]
}

// headerValues is the number of h's values.
func headerValues(h http.Header) int {
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	return n
}

// redactFields is redactHeader for header fields sorted by name, each
// name's values in order (an answer the forwarding lane passed on as
// fields, h1.ResponseWriter.Forwarded): the same copy, without the map of
// the fields made first.
func redactFields(fs []h1.Field, vals []string) (http.Header, headerCounts) {
	if len(fs) == 0 {
		return nil, headerCounts{}
	}
	r := newHeaderRedaction(len(fs), len(fs), vals)
	for i := 0; i < len(fs); {
		name := fs[i].Name
		secret, first := sensitiveHeader(name), len(r.vals)
		for ; i < len(fs) && fs[i].Name == name; i++ {
			r.value(name, secret, fs[i].Value)
		}
		r.name(name, first)
	}
	return r.out, r.n
}

// headerRedaction is a redacted copy of a header in the making, name by
// name in sorted order.
type headerRedaction struct {
	out  http.Header
	vals []string // one array for every value kept
	size int
	n    headerCounts
}

// newHeaderRedaction starts a copy of names names and values values, in
// vals's array when it has room for them.
func newHeaderRedaction(names, values int, vals []string) headerRedaction {
	if cap(vals)-len(vals) < values {
		vals = make([]string, 0, values)
	}
	return headerRedaction{out: make(http.Header, names), vals: vals[len(vals):len(vals)]}
}

// value adds one value of name (secret: a credential), redacted and
// clipped, unless the copy is full.
func (r *headerRedaction) value(name string, secret bool, v string) {
	if secret {
		v = Redacted
	} else {
		if c := clip(v); c != v {
			v = c
			r.n.cut++
		}
		v = redactText(v)
	}
	if r.size+len(name)+len(v) > TraceHeaderLimit {
		r.n.dropped++
		return
	}
	r.size += len(name) + len(v)
	r.vals = append(r.vals, v)
}

// name ends name's values: those added since first are its own.
func (r *headerRedaction) name(name string, first int) {
	if len(r.vals) > first {
		r.out[name] = r.vals[first:len(r.vals):len(r.vals)]
	}
}

// redactTrace is the one place a trace's credentials are redacted and its
// client-controlled values bounded, before the trace is kept, sent to a
// subscriber or returned by Explain. It replaces the header maps (it never
// changes the maps it was given).
//
// It returns the estimated bytes of the redacted header maps (headerSize
// of both), which the trace ring counts against its budget: a memo's copy
// comes with its size, so a keep-alive connection's requests do not walk
// the same maps again.
func redactTrace(t *Trace) (headerBytes int) {
	// Clip first: redacting a megabyte would cost more than the rest.
	t.Path = RedactURI(clip(t.Path))
	t.Location = RedactURI(clip(t.Location))
	t.Reason = redactText(clip(t.Reason))
	t.Host, t.Method, t.SNI = clip(t.Host), clip(t.Method), clip(t.SNI)
	t.GRPCService, t.GRPCMethod = clip(t.GRPCService), clip(t.GRPCMethod)
	t.Filters = redactAll(t.Filters)
	if len(t.ALPN) > 0 {
		alpn := make([]string, len(t.ALPN))
		for i, p := range t.ALPN {
			alpn[i] = clip(p)
		}
		t.ALPN = alpn
	}
	req, resp := redactTraceHeaders(t)
	headerBytes = req.size + resp.size
	var notes []string
	for _, c := range []struct {
		what string
		n    headerCounts
	}{{"request", req}, {"response", resp}} {
		if c.n.cut > 0 {
			notes = append(notes, fmt.Sprintf("%d %s header values cut to %d bytes", c.n.cut, c.what, TraceValueLimit))
		}
		if c.n.dropped > 0 {
			notes = append(notes, fmt.Sprintf("%d %s header values past %d bytes left out", c.n.dropped, c.what, TraceHeaderLimit))
		}
	}
	if t.Truncated == "" {
		t.Truncated = strings.Join(notes, "; ")
	}
	return headerBytes
}

// redactTraceHeaders replaces the trace's header maps (and its response
// fields) with their redacted copies, or with the copies its connection's
// memo made of the same headers.
func redactTraceHeaders(t *Trace) (req, resp headerCounts) {
	m, reused := t.memo, t.headerReused
	t.memo, t.headerReused = nil, false
	reqDone, respDone := false, false
	if m != nil {
		if e := m.req.Load(); e != nil && sameHeader(e.src, t.RequestHeaders) {
			t.RequestHeaders, req, reqDone = e.out, e.n, true
		}
		if e := m.resp.Load(); e != nil && t.responseFields != nil && slices.Equal(e.src, t.responseFields) {
			t.ResponseHeaders, resp, respDone = e.out, e.n, true
			t.responseFields = nil
		}
	}
	// One array for both directions' values (each name's slice capped).
	values := 0
	if !reqDone {
		values += headerValues(t.RequestHeaders)
	}
	if respDone {
	} else if t.responseFields != nil {
		values += len(t.responseFields)
	} else {
		values += headerValues(t.ResponseHeaders)
	}
	vals := make([]string, 0, values)
	if !reqDone {
		src := t.RequestHeaders
		t.RequestHeaders, req, vals = redactHeader(src, vals)
		req.size = headerSize(t.RequestHeaders)
		if m != nil && len(src) > 0 {
			if reused {
				src = src.Clone() // the map and its values are the next request's
			}
			m.req.Store(&memoHeader{src: src, out: t.RequestHeaders, n: req})
		}
	}
	switch {
	case respDone:
	case t.responseFields != nil:
		src := t.responseFields
		t.ResponseHeaders, resp = redactFields(src, vals)
		resp.size = headerSize(t.ResponseHeaders)
		t.responseFields = nil
		if m != nil && len(src) > 0 {
			m.resp.Store(&memoFields{src: slices.Clone(src), out: t.ResponseHeaders, n: resp})
		}
	default:
		t.ResponseHeaders, resp, _ = redactHeader(t.ResponseHeaders, vals)
		resp.size = headerSize(t.ResponseHeaders)
	}
	return req, resp
}

// headerMemo is the last redaction of one connection's request header and
// of a forwarded answer's fields (redactTraceHeaders): a keep-alive client
// sends the same header with every request and mostly gets the same
// answer's header, and comparing costs less than redacting into new maps.
// Redaction depends on nothing but the header, so the copy is the one
// redacting would make. The maps it hands out are shared by the traces
// that got them and, as every trace's maps, never written. An HTTP/2
// connection's streams share it (atomic entries).
type headerMemo struct {
	req  atomic.Pointer[memoHeader]
	resp atomic.Pointer[memoFields]
}

// memoHeader is a request header (a request's own map, not written after
// its request, or a copy of one the fast path reuses) and its redaction.
type memoHeader struct {
	src, out http.Header
	n        headerCounts
}

// memoFields is a forwarded answer's header fields (a copy) and their
// redaction.
type memoFields struct {
	src []h1.Field
	out http.Header
	n   headerCounts
}

// sameHeader reports whether a and b hold the same fields and values.
func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		if bv, ok := b[k]; !ok || !slices.Equal(av, bv) {
			return false
		}
	}
	return true
}
