package emulator

import (
	"bytes"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// headerEnd returns the length of the request header at the start of b,
// its empty line included (0: not complete yet). Lines end with CRLF or a
// bare LF, as net/http accepts.
func headerEnd(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return 0
		}
		next := i + j + 1
		line := b[i : i+j]
		if i > 0 && (len(line) == 0 || (len(line) == 1 && line[0] == '\r')) {
			return next
		}
		i = next
	}
}

// parseFastRequest parses a complete request header (headerEnd bytes) as
// net/http's server would, for the requests the fast path serves. nil:
// the request is not one of them — malformed, or something net/http
// treats specially (a body, Expect, Upgrade, a version other than
// HTTP/1.1, a target not in origin form, CONNECT, a header net/http would
// refuse or fold) — and net/http serves it.
func parseFastRequest(b []byte) *http.Request {
	block := string(b) // one allocation; the fields are substrings
	nl := indexLF(block, 0)
	line := trimCR(block[:nl])
	method, rest, ok := strings.Cut(line, " ")
	if !ok {
		return nil
	}
	target, proto, ok := strings.Cut(rest, " ")
	if !ok || proto != "HTTP/1.1" || method == "CONNECT" || method == "PRI" ||
		!httpguts.ValidHeaderFieldName(method) || len(target) == 0 || target[0] != '/' {
		return nil
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil
	}
	h := parseFastHeader(block, nl+1)
	if h == nil {
		return nil
	}
	hosts := h["Host"]
	if len(hosts) != 1 || !httpguts.ValidHostHeader(hosts[0]) {
		return nil
	}
	for _, k := range [...]string{"Content-Length", "Transfer-Encoding", "Expect", "Upgrade"} {
		if _, ok := h[k]; ok {
			return nil
		}
	}
	delete(h, "Host")
	if p := h["Pragma"]; len(p) > 0 && p[0] == "no-cache" {
		if _, ok := h["Cache-Control"]; !ok {
			h["Cache-Control"] = []string{"no-cache"} // as net/http does
		}
	}
	return &http.Request{
		Method: method, URL: u, Proto: proto, ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: http.NoBody, Host: hosts[0], RequestURI: target,
		Close: httpguts.HeaderValuesContainsToken(h["Connection"], "close"),
	}
}

// parseFastHeader parses the header fields from block[i:] up to the empty
// line (nil: a field the fast path leaves to net/http).
func parseFastHeader(block string, i int) http.Header {
	n := strings.Count(block[i:], "\n")
	h := make(http.Header, n)
	strs := make([]string, n)
	for {
		nl := indexLF(block, i)
		line := trimCR(block[i:nl])
		i = nl + 1
		if line == "" {
			return h
		}
		c := line[0]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return nil // obs-fold, or a field net/http may read otherwise
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || !httpguts.ValidHeaderFieldName(k) || !validFieldValue(v) {
			return nil
		}
		k = textproto.CanonicalMIMEHeaderKey(k)
		v = trimOWS(v)
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

func trimOWS(s string) string { return strings.Trim(s, " \t") }
