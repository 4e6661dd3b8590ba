package h1

import (
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// scanHeader looks at the complete lines of a request header at the start
// of b: it returns the header's length, its empty line included, once it
// is complete; 0 while it is not; -1 as soon as a complete line is one the
// fast path leaves to net/http (which answers a malformed line without
// waiting for the rest). Lines end with CRLF or a bare LF, as net/http
// accepts.
func scanHeader(b string) int {
	for i := 0; ; {
		j := strings.IndexByte(b[i:], '\n')
		if j < 0 {
			return 0
		}
		line := trimCR(b[i : i+j])
		next := i + j + 1
		switch {
		case i == 0:
			if !fastRequestLine(line) {
				return -1
			}
		case line == "":
			return next
		case !fastFieldLine(line):
			return -1
		}
		i = next
	}
}

// fastRequestLine reports whether a request line is one the fast path
// serves: a token method other than CONNECT and PRI, a target in origin
// form, HTTP/1.1.
func fastRequestLine(line string) bool {
	method, rest, ok := strings.Cut(line, " ")
	if !ok {
		return false
	}
	target, proto, ok := strings.Cut(rest, " ")
	return ok && proto == "HTTP/1.1" && method != "CONNECT" && method != "PRI" &&
		httpguts.ValidHeaderFieldName(method) && len(target) > 0 && target[0] == '/'
}

// fastFieldLine reports whether a header field line is one the fast path
// reads as net/http does: a name starting with a letter (no folding),
// token characters up to the colon, a value net/http accepts.
func fastFieldLine(line string) bool {
	c := line[0]
	if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return false
	}
	k, v, ok := strings.Cut(line, ":")
	return ok && httpguts.ValidHeaderFieldName(k) && validFieldValue(v)
}

// parseFastRequest parses a complete request header (scanHeader bytes) as
// net/http's server would, for the requests the fast path serves. nil:
// the request is not one of them — malformed, or something net/http
// treats specially (a body, Expect, Upgrade, a version other than
// HTTP/1.1, a target not in origin form, CONNECT, a header net/http would
// refuse or fold) — and net/http serves it. The request is slot's, made of
// its parts (the slot is new or reset).
func parseFastRequest(block string, slot *reqSlot) *http.Request {
	nl := indexLF(block, 0)
	line := trimCR(block[:nl])
	if !fastRequestLine(line) {
		return nil
	}
	method, rest, _ := strings.Cut(line, " ")
	target, proto, _ := strings.Cut(rest, " ")
	u := plainPathURL(target, &slot.url)
	if u == nil {
		var err error
		if u, err = url.ParseRequestURI(target); err != nil {
			return nil
		}
	}
	h, f := parseFastHeader(block, nl+1, slot)
	if h == nil || f.hosts != 1 || !httpguts.ValidHostHeader(f.host) {
		return nil
	}
	if f.pragmaNoCache && !f.cacheControl {
		h["Cache-Control"] = []string{"no-cache"} // as net/http does
	}
	closing := f.connection && httpguts.HeaderValuesContainsToken(h["Connection"], "close")
	r := &slot.req
	*r = slot.start // the context alone
	r.Method, r.URL, r.Proto, r.ProtoMajor, r.ProtoMinor = method, u, proto, 1, 1
	r.Header, r.Body, r.Host, r.RequestURI, r.Close = h, http.NoBody, f.host, target, closing
	return r
}

// plainPathURL is url.ParseRequestURI's result for a target made of '/'
// and unreserved characters only (RFC 3986: letters, digits, "-._~"),
// the common case, without its scan for a scheme, a query and escapes:
// such a path unescapes to itself and escapes back to itself, so the URL
// is the path alone (TestPlainPathURLMatchesParseRequestURI), written into
// into. nil: any other target, for ParseRequestURI.
func plainPathURL(target string, into *url.URL) *url.URL {
	if len(target) == 0 || target[0] != '/' {
		return nil
	}
	for i := 0; i < len(target); i++ {
		switch c := target[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '/', c == '-', c == '.', c == '_', c == '~':
		default:
			return nil
		}
	}
	*into = url.URL{Path: target}
	return into
}

// fastHeaderFacts is what parseFastHeader notes of the fields it reads, so
// that parseFastRequest looks none of them up: the Host field (kept out of
// the map, as net/http keeps it in Request.Host) and whether the first
// Pragma value is "no-cache", a Cache-Control or a Connection field came.
type fastHeaderFacts struct {
	host                     string
	hosts                    int
	pragmaNoCache, pragma    bool
	cacheControl, connection bool
}

// parseFastHeader parses the header fields from block[i:] up to the empty
// line, Host left out (nil: a field the fast path leaves to net/http: a
// body's framing, Expect, Upgrade, a folded or odd line), into the slot's
// map and value array (made when it has none, or one too short).
func parseFastHeader(block string, i int, slot *reqSlot) (http.Header, fastHeaderFacts) {
	var f fastHeaderFacts
	n := strings.Count(block[i:], "\n")
	h := slot.header
	if h == nil {
		h = make(http.Header, n)
		slot.header = h
	}
	if cap(slot.values) < n {
		slot.values = make([]string, n)
	}
	strs := slot.values[:n]
	for {
		nl := indexLF(block, i)
		line := trimCR(block[i:nl])
		i = nl + 1
		if line == "" {
			return h, f
		}
		if !fastFieldLine(line) {
			return nil, f // obs-fold, or a field net/http may read otherwise
		}
		k, v, _ := strings.Cut(line, ":")
		k = textproto.CanonicalMIMEHeaderKey(k)
		v = trimOWS(v)
		switch k {
		case "Content-Length", "Transfer-Encoding", "Expect", "Upgrade":
			return nil, f
		case "Host":
			f.host, f.hosts = v, f.hosts+1
			continue
		case "Pragma":
			if !f.pragma {
				f.pragma, f.pragmaNoCache = true, v == "no-cache"
			}
		case "Cache-Control":
			f.cacheControl = true
		case "Connection":
			f.connection = true
		}
		if vv := h[k]; vv != nil {
			h[k] = append(vv, v)
			continue
		}
		vv := strs[:1:1]
		strs = strs[1:]
		vv[0] = v
		h[k] = vv
	}
}

// validFieldValue reports whether v holds only what a field value may:
// visible characters, space, tab and obs-text (net/http refuses the rest).
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

func indexLF(s string, from int) int {
	if j := strings.IndexByte(s[from:], '\n'); j >= 0 {
		return from + j
	}
	return len(s)
}

func trimCR(s string) string { return strings.TrimSuffix(s, "\r") }

// trimOWS is strings.Trim(s, " \t") without building its set per call
// (it runs for every header field of every request and answer).
func trimOWS(s string) string {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return s[i:j]
}
