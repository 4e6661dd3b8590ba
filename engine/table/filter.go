package table

import (
	"fmt"
	"strings"
)

// This file holds filters resolved to concrete operations: the engine
// applies the spec's defaults, so the data plane only executes them. What
// depends on the request (its scheme, host, path, the listener it came in
// on) is said field by field.

// FilterType names a filter as the spec does, for traces and people.
type FilterType string

// Filter types.
const (
	FilterRequestHeaderModifier  FilterType = "RequestHeaderModifier"
	FilterResponseHeaderModifier FilterType = "ResponseHeaderModifier"
	FilterRequestRedirect        FilterType = "RequestRedirect"
	FilterURLRewrite             FilterType = "URLRewrite"
	FilterRequestMirror          FilterType = "RequestMirror"
	FilterCORS                   FilterType = "CORS"
	FilterExternalAuth           FilterType = "ExternalAuth"
	FilterExtensionRef           FilterType = "ExtensionRef"
)

// Filter is one filter of a rule or backendRef with its operation. At most
// one operation field is set; none means the filter does nothing (its
// configuration is missing).
type Filter struct {
	Type FilterType `json:"type"`
	// RequestHeaderModifier changes the request's headers.
	RequestHeaderModifier *HeaderModifier `json:"requestHeaderModifier,omitempty"`
	// ResponseHeaderModifier changes the response's headers.
	ResponseHeaderModifier *HeaderModifier `json:"responseHeaderModifier,omitempty"`
	// RequestRedirect answers with a redirect instead of forwarding.
	RequestRedirect *Redirect `json:"requestRedirect,omitempty"`
	// URLRewrite changes the request's host and path before forwarding.
	URLRewrite *URLRewrite `json:"urlRewrite,omitempty"`
	// RequestMirror sends a copy of the request to a mirror backend.
	RequestMirror *Mirror `json:"requestMirror,omitempty"`
	// CORS answers preflight requests and adds CORS response headers.
	CORS *CORS `json:"cors,omitempty"`
	// ExternalAuth is the index of the filter's entry in the ExternalAuth
	// list of its rule or backend.
	ExternalAuth *int `json:"externalAuth,omitempty"`
	// Unsupported, when set, is why gwdev cannot apply the filter: a
	// request that reaches it is answered 500.
	Unsupported string `json:"unsupported,omitempty"`
}

// HeaderModifier is a header change, applied as set, then add, then
// remove. Names are canonical (textproto.CanonicalMIMEHeaderKey).
type HeaderModifier struct {
	// Set replaces a header's values.
	Set []Header `json:"set,omitempty"`
	// Add appends a value: joined to an existing value with a comma, on a
	// line of its own for Set-Cookie.
	Add []Header `json:"add,omitempty"`
	// Remove deletes headers.
	Remove []string `json:"remove,omitempty"`
}

// Header is a header name and value.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// PathRewriteType says how a path is rewritten.
type PathRewriteType string

// Path rewrite types.
const (
	// ReplaceFullPath replaces the whole path with Value.
	ReplaceFullPath PathRewriteType = "ReplaceFullPath"
	// ReplacePrefixMatch replaces the matched Prefix of the path, by whole
	// segments, with Value ("/foo/bar" with prefix "/foo" and value "/xyz"
	// gives "/xyz/bar"); a path the prefix does not match is kept, and an
	// empty result is "/".
	ReplacePrefixMatch PathRewriteType = "ReplacePrefixMatch"
	// ReplaceRegexMatch replaces the whole path with Value when Pattern
	// matches it (nginx's "rewrite <regex> <value> break"), after
	// expanding ${n} in Value to Pattern's n-th group ("" for a group that
	// did not take part); a path Pattern does not match is kept.
	ReplaceRegexMatch PathRewriteType = "ReplaceRegexMatch"
	// TrimTrailingSlash removes one trailing slash from the path ("/" gives
	// ""): ingress-nginx's HTTPS redirect without preserve-trailing-slash.
	TrimTrailingSlash PathRewriteType = "TrimTrailingSlash"
)

// PathRewrite is the path operation of a redirect or rewrite.
type PathRewrite struct {
	Type PathRewriteType `json:"type"`
	// Value is the new path (ReplaceFullPath), or the prefix's
	// replacement without trailing slashes (ReplacePrefixMatch).
	Value string `json:"value"`
	// Prefix is the rule's matched path prefix that Value replaces, as in
	// PathMatch.Value ("": "/"); ReplacePrefixMatch only.
	Prefix string `json:"prefix,omitempty"`
	// Pattern is the expression a ReplaceRegexMatch matches the whole path
	// against (RE2, anchored at both ends by the data plane, as path
	// matches are); ReplaceRegexMatch only.
	Pattern string `json:"pattern,omitempty"`
}

// URLRewrite is a request rewrite.
type URLRewrite struct {
	// Hostname replaces the Host header ("": the request's).
	Hostname string `json:"hostname,omitempty"`
	// Path rewrites the path (nil: the request's path).
	Path *PathRewrite `json:"path,omitempty"`
}

// Redirect is a RequestRedirect with the spec's defaults applied. The
// query string is kept unless NoQuery says otherwise.
type Redirect struct {
	// Scheme is the Location's scheme, lower case ("": the request's,
	// https over TLS and http otherwise).
	Scheme string `json:"scheme,omitempty"`
	// Hostname is the Location's host ("": the request's host).
	Hostname string `json:"hostname,omitempty"`
	// Port is the Location's port (0: the port of the listener the request
	// came in on). A port that is the scheme's own (http 80, https 443) is
	// left out of the Location.
	Port int32 `json:"port,omitempty"`
	// Path rewrites the path (nil: the request's path).
	Path *PathRewrite `json:"path,omitempty"`
	// StatusCode is the redirect's status (301, 302, ...).
	StatusCode int `json:"statusCode"`
	// NoQuery leaves the request's query string out of the Location
	// (nginx's "return 301 <url>"; false: it is kept, as the spec says).
	NoQuery bool `json:"noQuery,omitempty"`
}

// Mirror is a RequestMirror: a copy of a share of the requests goes to a
// mirror backend; its responses are ignored.
type Mirror struct {
	// Index is the mirror's entry in the Mirrors list of its rule or
	// backend.
	Index int `json:"index"`
	// Fraction is the share of requests mirrored, from 0 (none) to 1
	// (all).
	Fraction float64 `json:"fraction"`
}

// CORS is a CORS filter with the spec's defaults applied. Wildcards are
// answered with the request's own origin, method or headers.
type CORS struct {
	// AnyOrigin allows every origin ("*").
	AnyOrigin bool `json:"anyOrigin,omitempty"`
	// AllowOrigins are the allowed origins, lower case.
	AllowOrigins []CORSOrigin `json:"allowOrigins,omitempty"`
	// AllowCredentials lets the browser expose responses to credentialed
	// requests.
	AllowCredentials bool `json:"allowCredentials,omitempty"`
	// AnyMethod allows every method; AllowMethods lists them otherwise.
	AnyMethod    bool     `json:"anyMethod,omitempty"`
	AllowMethods []string `json:"allowMethods,omitempty"`
	// AnyHeader allows every request header; AllowHeaders lists them
	// otherwise.
	AnyHeader    bool     `json:"anyHeader,omitempty"`
	AllowHeaders []string `json:"allowHeaders,omitempty"`
	// ExposeAny exposes every response header (not with credentials);
	// ExposeHeaders lists them otherwise.
	ExposeAny     bool     `json:"exposeAny,omitempty"`
	ExposeHeaders []string `json:"exposeHeaders,omitempty"`
	// MaxAge is how many seconds a browser may cache a preflight answer.
	MaxAge int32 `json:"maxAge"`
	// Nginx, when set, answers as ingress-nginx's enable-cors does instead
	// of as the Gateway API's CORS filter (nil: the spec's behaviour).
	Nginx *NginxCORS `json:"nginx,omitempty"`
}

// NginxCORS is how ingress-nginx's CORS differs from the Gateway API's:
// every OPTIONS request from an allowed origin is a preflight (with or
// without Access-Control-Request-Method), answered PreflightStatus with
// the lists as written; actual responses carry the preflight's
// Allow-Methods, Allow-Headers and Max-Age too; AnyOrigin answers "*" to
// every request, with or without an Origin; and "*" in an origin's host
// matches one DNS label.
type NginxCORS struct {
	// PreflightStatus answers an allowed preflight (204).
	PreflightStatus int `json:"preflightStatus"`
}

// CORSOrigin is one allowed origin.
type CORSOrigin struct {
	Scheme string `json:"scheme"`
	// Host is exact or has "*", which matches any characters.
	Host string `json:"host"`
	// Port is the origin's port, the scheme's default when it had none.
	Port string `json:"port,omitempty"`
}

// ParseOrigin parses a lower-case origin "<scheme>://<host>[:<port>]",
// giving http and https their default ports. The engine reads a CORS
// filter's origins with it and the data plane a request's Origin header.
func ParseOrigin(s string) (CORSOrigin, bool) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || rest == "" {
		return CORSOrigin{}, false
	}
	host, port := strings.TrimSuffix(rest, "/"), ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host, port = host[:i], host[i+1:]
	}
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return CORSOrigin{Scheme: scheme, Host: host, Port: port}, true
}

// validateFilters checks that every mirror and ExternalAuth filter of a
// rule or backend (named where) points into its lists.
func validateFilters(where string, fs []Filter, mirrors, auths int) error {
	for i, f := range fs {
		if m := f.RequestMirror; m != nil && (m.Index < 0 || m.Index >= mirrors) {
			return fmt.Errorf("%s: filter %d: mirror %d of %d", where, i, m.Index, mirrors)
		}
		if a := f.ExternalAuth; a != nil && (*a < 0 || *a >= auths) {
			return fmt.Errorf("%s: filter %d: ExternalAuth %d of %d", where, i, *a, auths)
		}
	}
	return nil
}
