package engine

import (
	"net/textproto"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// compileFilters resolves a rule's or backendRef's filters to the table's
// operations for one match m (nil for gRPC rules), applying the spec's
// defaults. Mirror and ExternalAuth filters are numbered in filter order,
// as resolveFilters lists their backends.
func compileFilters(in []gwv1.HTTPRouteFilter, m *table.HTTPMatch) []table.Filter {
	if len(in) == 0 {
		return nil
	}
	out := make([]table.Filter, 0, len(in))
	mirrors, auths := 0, 0
	for _, f := range in {
		tf := table.Filter{Type: table.FilterType(f.Type)}
		switch f.Type {
		case gwv1.HTTPRouteFilterRequestHeaderModifier:
			tf.RequestHeaderModifier = headerModifier(f.RequestHeaderModifier)
		case gwv1.HTTPRouteFilterResponseHeaderModifier:
			tf.ResponseHeaderModifier = headerModifier(f.ResponseHeaderModifier)
		case gwv1.HTTPRouteFilterRequestRedirect:
			if f.RequestRedirect != nil {
				tf.RequestRedirect = compileRedirect(f.RequestRedirect, m)
			}
		case gwv1.HTTPRouteFilterURLRewrite:
			if w := f.URLRewrite; w != nil {
				tf.URLRewrite = &table.URLRewrite{Path: pathRewrite(w.Path, m)}
				if w.Hostname != nil {
					tf.URLRewrite.Hostname = string(*w.Hostname)
				}
			}
		case gwv1.HTTPRouteFilterRequestMirror:
			if f.RequestMirror != nil {
				tf.RequestMirror = &table.Mirror{Index: mirrors, Fraction: mirrorFraction(f.RequestMirror)}
				mirrors++
			}
		case gwv1.HTTPRouteFilterCORS:
			tf.CORS = compileCORS(f.CORS)
		case gwv1.HTTPRouteFilterExternalAuth:
			if f.ExternalAuth != nil {
				i := auths
				tf.ExternalAuth = &i
				auths++
			}
		case gwv1.HTTPRouteFilterExtensionRef:
			name := ""
			if f.ExtensionRef != nil {
				name = string(f.ExtensionRef.Kind) + " " + string(f.ExtensionRef.Name)
			}
			tf.Unsupported = "extensionRef " + name + " is not supported by gwdev"
		default:
			tf.Unsupported = string(f.Type) + " filters are not emulated by gwdev"
		}
		out = append(out, tf)
	}
	return out
}

// filtersDependOnMatch reports whether compiling the filters needs the
// match: a ReplacePrefixMatch replaces the matched prefix.
func filtersDependOnMatch(in []gwv1.HTTPRouteFilter) bool {
	prefix := func(p *gwv1.HTTPPathModifier) bool {
		return p != nil && p.Type == gwv1.PrefixMatchHTTPPathModifier
	}
	for _, f := range in {
		if f.RequestRedirect != nil && prefix(f.RequestRedirect.Path) || f.URLRewrite != nil && prefix(f.URLRewrite.Path) {
			return true
		}
	}
	return false
}

// headerModifier copies a header filter with canonical names (an empty
// modifier when the filter has no configuration).
func headerModifier(f *gwv1.HTTPHeaderFilter) *table.HeaderModifier {
	m := &table.HeaderModifier{}
	if f == nil {
		return m
	}
	for _, h := range f.Set {
		m.Set = append(m.Set, table.Header{Name: textproto.CanonicalMIMEHeaderKey(string(h.Name)), Value: h.Value})
	}
	for _, h := range f.Add {
		m.Add = append(m.Add, table.Header{Name: textproto.CanonicalMIMEHeaderKey(string(h.Name)), Value: h.Value})
	}
	for _, n := range f.Remove {
		m.Remove = append(m.Remove, textproto.CanonicalMIMEHeaderKey(n))
	}
	return m
}

// compileRedirect applies the spec's RequestRedirect defaults: status 302;
// the port of a given scheme is that scheme's well-known port (http 80,
// https 443) unless a port is given; without a scheme or with another
// scheme, the listener's port. Scheme and hostname default to the
// request's, which only the data plane knows.
func compileRedirect(f *gwv1.HTTPRequestRedirectFilter, m *table.HTTPMatch) *table.Redirect {
	r := &table.Redirect{StatusCode: 302, Path: pathRewrite(f.Path, m)}
	if f.StatusCode != nil && *f.StatusCode != 0 {
		r.StatusCode = *f.StatusCode
	}
	if f.Scheme != nil && *f.Scheme != "" {
		r.Scheme = strings.ToLower(*f.Scheme)
		switch r.Scheme {
		case "http":
			r.Port = 80
		case "https":
			r.Port = 443
		}
	}
	if f.Port != nil {
		r.Port = *f.Port
	}
	if f.Hostname != nil {
		r.Hostname = string(*f.Hostname)
	}
	return r
}

// pathRewrite resolves a path modifier for match m. ReplacePrefixMatch
// needs a prefix to replace: the match's PathPrefix (or Exact) value; with
// a regular expression or no HTTP match the path is kept (nil).
func pathRewrite(p *gwv1.HTTPPathModifier, m *table.HTTPMatch) *table.PathRewrite {
	if p == nil {
		return nil
	}
	switch p.Type {
	case gwv1.FullPathHTTPPathModifier:
		if p.ReplaceFullPath != nil {
			return &table.PathRewrite{Type: table.ReplaceFullPath, Value: *p.ReplaceFullPath}
		}
	case gwv1.PrefixMatchHTTPPathModifier:
		if p.ReplacePrefixMatch != nil && m != nil && m.Path.Type != table.MatchRegularExpression {
			return &table.PathRewrite{Type: table.ReplacePrefixMatch, Value: strings.TrimRight(*p.ReplacePrefixMatch, "/"),
				Prefix: m.Path.Value}
		}
	}
	return nil
}

// mirrorFraction is the share of requests a mirror filter copies: its
// fraction (denominator 100 by default) or percent, all when neither is
// given.
func mirrorFraction(m *gwv1.HTTPRequestMirrorFilter) float64 {
	f := 1.0
	switch {
	case m.Fraction != nil:
		den := int32(100)
		if m.Fraction.Denominator != nil && *m.Fraction.Denominator > 0 {
			den = *m.Fraction.Denominator
		}
		f = float64(m.Fraction.Numerator) / float64(den)
	case m.Percent != nil:
		f = float64(*m.Percent) / 100
	}
	return min(max(f, 0), 1)
}

// compileCORS applies the CORS filter's defaults: origins lower case with
// their scheme's port, "*" entries as wildcards, maxAge 5 seconds.
func compileCORS(f *gwv1.HTTPCORSFilter) *table.CORS {
	c := &table.CORS{MaxAge: 5}
	if f == nil {
		return c
	}
	for _, o := range f.AllowOrigins {
		s := strings.ToLower(strings.TrimSpace(string(o)))
		if s == "*" {
			c.AnyOrigin = true
			continue
		}
		if origin, ok := table.ParseOrigin(s); ok {
			c.AllowOrigins = append(c.AllowOrigins, origin)
		}
	}
	c.AllowCredentials = f.AllowCredentials != nil && *f.AllowCredentials
	c.AllowMethods, c.AnyMethod = corsList(f.AllowMethods)
	c.AllowHeaders, c.AnyHeader = corsList(f.AllowHeaders)
	c.ExposeHeaders, c.ExposeAny = corsList(f.ExposeHeaders)
	if f.MaxAge > 0 {
		c.MaxAge = f.MaxAge
	}
	return c
}

// corsList copies a CORS list without its "*" entries and reports whether
// it had one.
func corsList[T ~string](in []T) ([]string, bool) {
	var out []string
	anyValue := false
	for _, v := range in {
		if v == "*" {
			anyValue = true
			continue
		}
		out = append(out, string(v))
	}
	return out, anyValue
}
