package emulator

import (
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// filterStep is a compiled HTTPRouteFilter.
type filterStep struct {
	typ         table.HTTPRouteFilterType
	reqHeaders  *headerMod
	respHeaders *headerMod
	redirect    *table.HTTPRequestRedirectFilter
	rewrite     *table.HTTPURLRewriteFilter
	// mirror is the index into the resolved mirrors of the rule or
	// backendRef (-1: not a mirror).
	mirror    int
	mirrorNum int32
	mirrorDen int32
	cors      *corsPolicy
	// extAuth is the index into the resolved ExternalAuth filters of the
	// rule or backendRef (-1: not an ExternalAuth filter).
	extAuth     int
	unsupported string
}

// headerMod is a compiled HTTPHeaderFilter with canonical header names.
type headerMod struct {
	set    []headerValue
	add    []headerValue
	remove []string
}

type headerValue struct{ name, value string }

func compileFilters(fs []table.HTTPRouteFilter, rc *regexCache) []filterStep {
	var out []filterStep
	mirrors, auths := 0, 0
	for _, f := range fs {
		s := filterStep{typ: f.Type, mirror: -1, extAuth: -1}
		switch f.Type {
		case table.HTTPRouteFilterRequestHeaderModifier:
			s.reqHeaders = compileHeaderMod(f.RequestHeaderModifier)
		case table.HTTPRouteFilterResponseHeaderModifier:
			s.respHeaders = compileHeaderMod(f.ResponseHeaderModifier)
		case table.HTTPRouteFilterRequestRedirect:
			s.redirect = f.RequestRedirect
		case table.HTTPRouteFilterURLRewrite:
			s.rewrite = f.URLRewrite
		case table.HTTPRouteFilterRequestMirror:
			if f.RequestMirror == nil {
				continue
			}
			s.mirror = mirrors
			mirrors++
			s.mirrorNum, s.mirrorDen = mirrorFraction(f.RequestMirror)
		case table.HTTPRouteFilterCORS:
			s.cors = compileCORS(f.CORS, rc)
		case table.HTTPRouteFilterExternalAuth:
			if f.ExternalAuth == nil {
				continue
			}
			s.extAuth = auths
			auths++
		case table.HTTPRouteFilterExtensionRef:
			name := ""
			if f.ExtensionRef != nil {
				name = string(f.ExtensionRef.Kind) + " " + string(f.ExtensionRef.Name)
			}
			s.unsupported = "extensionRef " + name + " is not supported by gwdev"
		default:
			s.unsupported = string(f.Type) + " filters are not emulated by gwdev"
		}
		out = append(out, s)
	}
	return out
}

func mirrorFraction(m *table.HTTPRequestMirrorFilter) (num, den int32) {
	switch {
	case m.Fraction != nil:
		den = 100
		if m.Fraction.Denominator != nil && *m.Fraction.Denominator > 0 {
			den = *m.Fraction.Denominator
		}
		return m.Fraction.Numerator, den
	case m.Percent != nil:
		return *m.Percent, 100
	}
	return 1, 1
}

func compileHeaderMod(f *table.HTTPHeaderFilter) *headerMod {
	m := &headerMod{}
	if f == nil {
		return m
	}
	for _, h := range f.Set {
		m.set = append(m.set, headerValue{textproto.CanonicalMIMEHeaderKey(string(h.Name)), h.Value})
	}
	for _, h := range f.Add {
		m.add = append(m.add, headerValue{textproto.CanonicalMIMEHeaderKey(string(h.Name)), h.Value})
	}
	for _, n := range f.Remove {
		m.remove = append(m.remove, textproto.CanonicalMIMEHeaderKey(n))
	}
	return m
}

// apply modifies h; a Host header (requests only) goes to *host instead.
// Added values are appended to an existing value with a comma, as the
// HTTPHeaderFilter documentation shows (Set-Cookie gets its own line).
func (m *headerMod) apply(h http.Header, host *string) {
	for _, s := range m.set {
		if s.name == "Host" && host != nil {
			*host = s.value
			continue
		}
		h[s.name] = []string{s.value}
	}
	for _, a := range m.add {
		if a.name == "Host" && host != nil {
			*host = a.value
			continue
		}
		old := h[a.name]
		if len(old) == 0 || a.name == "Set-Cookie" {
			h[a.name] = append(old, a.value)
			continue
		}
		h[a.name] = []string{strings.Join(old, ",") + "," + a.value}
	}
	for _, n := range m.remove {
		delete(h, n)
	}
}

// describe summarises a header modification for traces.
func (m *headerMod) describe() string {
	var parts []string
	for _, s := range m.set {
		parts = append(parts, "set "+s.name)
	}
	for _, a := range m.add {
		parts = append(parts, "add "+a.name)
	}
	for _, r := range m.remove {
		parts = append(parts, "remove "+r)
	}
	return strings.Join(parts, ", ")
}

// modifyPath applies a path modifier (redirect or rewrite) to path. A
// ReplacePrefixMatch needs the rule's prefix; without one the path is kept.
func modifyPath(m *table.HTTPPathModifier, path string, rule *ruleRoutes) string {
	if m == nil {
		return path
	}
	switch m.Type {
	case table.FullPathHTTPPathModifier:
		if m.ReplaceFullPath != nil {
			return *m.ReplaceFullPath
		}
	case table.PrefixMatchHTTPPathModifier:
		if m.ReplacePrefixMatch == nil || rule == nil || rule.http == nil || rule.http.kind == pathRegex {
			return path
		}
		return replacePrefix(path, rule.http.path, *m.ReplacePrefixMatch)
	}
	return path
}

// replacePrefix replaces the matched (normalised) prefix of path with repl,
// by whole path segments, following the table in the HTTPPathModifier
// documentation: /foo/bar with prefix /foo and replacement /xyz gives
// /xyz/bar; an empty result is "/".
func replacePrefix(path, prefix, repl string) string {
	if !prefixMatches(prefix, path) {
		return path
	}
	out := strings.TrimRight(repl, "/") + path[len(prefix):]
	if out == "" {
		return "/"
	}
	return out
}

// redirectLocation builds the Location of a RequestRedirect. Defaults follow
// the spec: the request's scheme and host; the port of the scheme when the
// scheme is set, else the listener's port; no port for http:80 and
// https:443. The query string is kept.
func redirectLocation(f *table.HTTPRequestRedirectFilter, r *http.Request, host string, listenerPort int32, rule *ruleRoutes) (string, int) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	port := listenerPort
	if f.Scheme != nil && *f.Scheme != "" {
		scheme = strings.ToLower(*f.Scheme)
		switch scheme {
		case "http":
			port = 80
		case "https":
			port = 443
		}
	}
	if f.Port != nil {
		port = *f.Port
	}
	if f.Hostname != nil && *f.Hostname != "" {
		host = string(*f.Hostname)
	}
	hostport := host
	if strings.Contains(host, ":") {
		hostport = "[" + host + "]"
	}
	if !(scheme == "http" && port == 80) && !(scheme == "https" && port == 443) {
		hostport = net.JoinHostPort(host, strconv.Itoa(int(port)))
	}
	path := r.URL.Path
	if path == "" {
		path = "/"
	}
	path = modifyPath(f.Path, path, rule)
	loc := scheme + "://" + hostport + (&url.URL{Path: path}).EscapedPath()
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	code := http.StatusFound
	if f.StatusCode != nil && *f.StatusCode != 0 {
		code = *f.StatusCode
	}
	return loc, code
}
