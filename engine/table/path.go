package table

import (
	"net/url"
	"strings"
)

// PathPolicy is how a Gateway normalises a request's path before any
// matching, filter or forwarding (docs/decisions.md, "Request paths are
// normalised before matching"). Its zero value is the default the engine
// decides for every Gateway, Envoy Gateway's: escaped slashes are unescaped
// and the client redirected, percent-encoded unreserved characters are
// decoded, adjacent slashes merged and dot segments removed (RFC 3986). The
// backend receives the normalised path.
type PathPolicy struct {
	// KeepDotSegments leaves "." and ".." segments (false: removed as RFC
	// 3986 section 5.2.4 says, "%2e" counting as ".").
	KeepDotSegments bool `json:"keepDotSegments,omitempty"`
	// KeepSlashes leaves adjacent slashes (false: "//" is merged to "/").
	KeepSlashes bool `json:"keepSlashes,omitempty"`
	// EscapedSlashes is what "%2F" and "%5C" (either case) in a path do.
	EscapedSlashes EscapedSlashAction `json:"escapedSlashes,omitempty"`
	// MatchOnly makes the normalised path the one rules match while the
	// backend receives the path as sent, unless a filter rewrites it
	// (nginx's $uri against $request_uri: ingress-nginx's behaviour).
	// false: the normalised path replaces the request's.
	MatchOnly bool `json:"matchOnly,omitempty"`
}

// EscapedSlashAction is what a path with an escaped slash or backslash
// does (Envoy's path_with_escaped_slashes_action).
type EscapedSlashAction string

const (
	// EscapedSlashesRedirect (the zero value) unescapes them to "/" and
	// redirects the client (307) to the normalised path, so that client,
	// gateway and backend all see the same path; a gRPC request, which
	// cannot follow a redirect, is refused.
	EscapedSlashesRedirect EscapedSlashAction = ""
	// EscapedSlashesKeep leaves them escaped: matching sees "%2F" as part
	// of a segment, and so does the backend.
	EscapedSlashesKeep EscapedSlashAction = "KeepUnchanged"
	// EscapedSlashesReject refuses the request with 400.
	EscapedSlashesReject EscapedSlashAction = "RejectRequest"
	// EscapedSlashesForward unescapes them to "/" for matching, with no
	// redirect (nginx decodes its $uri so).
	EscapedSlashesForward EscapedSlashAction = "UnescapeAndForward"
)

// NormalizedPath is a request path after a PathPolicy.
type NormalizedPath struct {
	// Escaped is the normalised path as sent on the wire: what the backend
	// receives and a redirect points to.
	Escaped string
	// Path is Escaped decoded: what route matches compare.
	Path string
	// Redirect is set when escaped slashes were unescaped: the client is
	// sent to Escaped (EscapedSlashesRedirect).
	Redirect bool
	// Reject is set when the request is refused (EscapedSlashesReject).
	Reject bool
}

// Normalize applies the policy to a path as received (escaped, as
// url.URL.EscapedPath gives it). A path that does not start with "/" (the
// "*" of OPTIONS) is left alone.
func (p PathPolicy) Normalize(escaped string) NormalizedPath {
	out := NormalizedPath{Escaped: escaped}
	if !strings.HasPrefix(escaped, "/") {
		out.Path, _ = url.PathUnescape(escaped)
		return out
	}
	s := escaped
	if hasEscapedSlash(s) {
		switch p.EscapedSlashes {
		case EscapedSlashesReject:
			out.Reject = true
			out.Path, _ = url.PathUnescape(escaped)
			return out
		case EscapedSlashesRedirect:
			s = unescapeSlashes(s)
			out.Redirect = true
		case EscapedSlashesForward:
			s = unescapeSlashes(s)
		}
	}
	s = decodeUnreserved(s)
	if !p.KeepSlashes {
		for strings.Contains(s, "//") {
			s = strings.ReplaceAll(s, "//", "/")
		}
	}
	if !p.KeepDotSegments {
		s = RemoveDotSegments(s)
	}
	out.Escaped = s
	if dec, err := url.PathUnescape(s); err == nil {
		out.Path = dec
	} else {
		out.Path = s
	}
	return out
}

// escapedSlashAt reports whether s holds "%2F" or "%5C" (either case) at i.
func escapedSlashAt(s string, i int) bool {
	return s[i] == '%' && i+2 < len(s) && ((s[i+1] == '2' && (s[i+2] == 'f' || s[i+2] == 'F')) || (s[i+1] == '5' && (s[i+2] == 'c' || s[i+2] == 'C')))
}

// hasEscapedSlash reports whether s holds "%2F" or "%5C" (either case).
func hasEscapedSlash(s string) bool {
	for i := range len(s) {
		if escapedSlashAt(s, i) {
			return true
		}
	}
	return false
}

// unescapeSlashes turns "%2F" and "%5C" (either case) into "/".
func unescapeSlashes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if escapedSlashAt(s, i) {
			b.WriteByte('/')
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// decodeUnreserved decodes percent-encoded unreserved characters (ALPHA,
// DIGIT, "-", ".", "_", "~") and writes every other escape's hex digits in
// upper case (RFC 3986 sections 6.2.2.1 and 6.2.2.2): "%2e%2E" becomes
// "..", "%61dmin" "admin", "%3f" "%3F".
func decodeUnreserved(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
			b.WriteByte(s[i])
			continue
		}
		c := byte(unhex(s[i+1])<<4 | unhex(s[i+2]))
		if isUnreserved(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(s[i+1 : i+3]))
		}
		i += 2
	}
	return b.String()
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// RemoveDotSegments is RFC 3986 section 5.2.4 for an absolute path: "."
// segments go, ".." removes the segment before it (never above the root).
// A trailing "." or ".." leaves a trailing "/".
func RemoveDotSegments(p string) string {
	if !strings.Contains(p, "/.") {
		return p
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}
