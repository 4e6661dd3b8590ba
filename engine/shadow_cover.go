package engine

import (
	"net/textproto"
	"regexp"
	"regexp/syntax"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Coverage: whether every request one route match accepts is also accepted
// by another. The answer must never be a false "yes" (a shadow warning for
// a rule that does receive traffic), so every case that cannot be decided
// exactly is "no". The semantics are the data plane's (emulator/match.go):
// PathPrefix is segment-aware with trailing slashes dropped, regular
// expressions match the whole value (RE2), header names are compared
// case-insensitively and query param names exactly, and of several entries
// with equivalent names only the first counts.

// coverChecker decides coverage between the rules of one translation; it
// caches compiled regular expressions.
type coverChecker struct {
	regexps map[string]*regexp.Regexp
}

// fullMatch reports whether expr matches all of s ("" when expr does not
// compile: then it matches nothing, as in the data plane).
func (c *coverChecker) fullMatch(expr, s string) bool {
	re, ok := c.regexps[expr]
	if !ok {
		re, _ = regexp.Compile(`^(?:` + expr + `)$`)
		if c.regexps == nil {
			c.regexps = map[string]*regexp.Regexp{}
		}
		c.regexps[expr] = re
	}
	return re != nil && re.MatchString(s)
}

// covers reports whether every request b matches is matched by a too.
// HTTPRoute and GRPCRoute matches are never compared: an HTTPRoute match
// also takes gRPC requests, a GRPCRoute match only those, and gwdev does not
// claim more than it can show.
func (c *coverChecker) covers(a, b *RouteRule) bool {
	switch {
	case a.HTTP != nil && b.HTTP != nil:
		return c.coversHTTP(a.HTTP, b.HTTP)
	case a.GRPC != nil && b.GRPC != nil:
		return c.coversGRPC(a.GRPC, b.GRPC)
	}
	return false
}

func (c *coverChecker) coversHTTP(a, b *gwv1.HTTPRouteMatch) bool {
	if a.Method != nil && (b.Method == nil || *a.Method != *b.Method) {
		return false
	}
	if !c.coversPath(a, b) {
		return false
	}
	return c.coversNamed(httpHeaders(a.Headers), httpHeaders(b.Headers)) &&
		c.coversNamed(queryParams(a.QueryParams), queryParams(b.QueryParams))
}

// pathOf returns a match's path type and value as the data plane uses it:
// PathPrefix values without trailing slashes ("" for "/").
func pathOf(m *gwv1.HTTPRouteMatch) (gwv1.PathMatchType, string) {
	typ, value := gwv1.PathMatchPathPrefix, "/"
	if m.Path != nil {
		if m.Path.Type != nil {
			typ = *m.Path.Type
		}
		if m.Path.Value != nil {
			value = *m.Path.Value
		}
	}
	if typ == gwv1.PathMatchPathPrefix {
		value = strings.TrimRight(value, "/")
	}
	return typ, value
}

// segmentPrefix is the data plane's PathPrefix test for a normalised
// prefix: "/foo" matches "/foo", "/foo/" and "/foo/bar", not "/foobar".
func segmentPrefix(prefix, path string) bool {
	return strings.HasPrefix(path, prefix) && (len(path) == len(prefix) || path[len(prefix)] == '/')
}

func (c *coverChecker) coversPath(a, b *gwv1.HTTPRouteMatch) bool {
	ta, va := pathOf(a)
	tb, vb := pathOf(b)
	switch ta {
	case gwv1.PathMatchExact:
		return tb == gwv1.PathMatchExact && va == vb
	case gwv1.PathMatchPathPrefix:
		switch tb {
		case gwv1.PathMatchExact:
			return segmentPrefix(va, vb)
		case gwv1.PathMatchPathPrefix:
			// Every path b matches starts with vb then "/" or ends; it
			// starts with va on a segment boundary when vb does.
			return segmentPrefix(va, vb)
		}
		return false // a regular expression may match paths without a leading "/"
	case gwv1.PathMatchRegularExpression:
		switch tb {
		case gwv1.PathMatchExact:
			return c.fullMatch(va, vb)
		case gwv1.PathMatchRegularExpression:
			return va == vb
		case gwv1.PathMatchPathPrefix:
			return regexCoversPrefix(va, vb)
		}
	}
	return false
}

// regexCoversPrefix reports whether expr matches every path the normalised
// PathPrefix p matches. Only the shapes "L.*" and ".*" with "." matching
// any character, newline included ((?s) or [\s\S]), are recognised: with
// "." alone, a path with an encoded newline (%0A) escapes the expression.
func regexCoversPrefix(expr, p string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return false
	}
	re = re.Simplify()
	lit := ""
	star := re
	if re.Op == syntax.OpConcat {
		if len(re.Sub) != 2 || re.Sub[0].Op != syntax.OpLiteral || re.Sub[0].Flags&syntax.FoldCase != 0 {
			return false
		}
		lit, star = string(re.Sub[0].Rune), re.Sub[1]
	}
	if star.Op != syntax.OpStar || star.Sub[0].Op != syntax.OpAnyChar {
		return false
	}
	if p == "" { // PathPrefix "/": every path starting with "/"
		return lit == "" || lit == "/"
	}
	return strings.HasPrefix(p, lit)
}

// namedMatch is one header or query param match, its name normalised.
type namedValue struct {
	name, value string
	regex       bool
}

func httpHeaders(hs []gwv1.HTTPHeaderMatch) []namedValue {
	out := make([]namedValue, 0, len(hs))
	for _, h := range hs {
		out = append(out, namedValue{textproto.CanonicalMIMEHeaderKey(string(h.Name)), h.Value,
			h.Type != nil && *h.Type == gwv1.HeaderMatchRegularExpression})
	}
	return firstByName(out)
}

func grpcHeaders(hs []gwv1.GRPCHeaderMatch) []namedValue {
	out := make([]namedValue, 0, len(hs))
	for _, h := range hs {
		out = append(out, namedValue{textproto.CanonicalMIMEHeaderKey(string(h.Name)), h.Value,
			h.Type != nil && *h.Type == gwv1.GRPCHeaderMatchRegularExpression})
	}
	return firstByName(out)
}

func queryParams(qs []gwv1.HTTPQueryParamMatch) []namedValue {
	out := make([]namedValue, 0, len(qs))
	for _, q := range qs {
		out = append(out, namedValue{string(q.Name), q.Value,
			q.Type != nil && *q.Type == gwv1.QueryParamMatchRegularExpression})
	}
	return firstByName(out)
}

// firstByName keeps the first entry of each name, as the spec requires.
func firstByName(in []namedValue) []namedValue {
	out := in[:0]
	seen := map[string]bool{}
	for _, n := range in {
		if !seen[n.name] {
			seen[n.name] = true
			out = append(out, n)
		}
	}
	return out
}

// coversNamed reports whether every condition of a is implied by b's
// condition on the same name.
func (c *coverChecker) coversNamed(a, b []namedValue) bool {
	for _, na := range a {
		ok := false
		for _, nb := range b {
			if nb.name == na.name {
				ok = c.coversValue(na.value, na.regex, nb.value, nb.regex)
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// coversValue reports whether the values accepted by (vb, rb) are all
// accepted by (va, ra): equal exact values, a regex matching b's exact
// value, or identical regular expressions.
func (c *coverChecker) coversValue(va string, ra bool, vb string, rb bool) bool {
	switch {
	case !ra && !rb:
		return va == vb
	case ra && !rb:
		return c.fullMatch(va, vb)
	case ra && rb:
		return va == vb
	}
	return false
}

func (c *coverChecker) coversGRPC(a, b *gwv1.GRPCRouteMatch) bool {
	sa, ma, ra := grpcMethodParts(a)
	sb, mb, rb := grpcMethodParts(b)
	part := func(va, vb string) bool {
		if va == "" {
			return true
		}
		return vb != "" && c.coversValue(va, ra, vb, rb)
	}
	return part(sa, sb) && part(ma, mb) && c.coversNamed(grpcHeaders(a.Headers), grpcHeaders(b.Headers))
}

// grpcMethodParts returns a match's service and method ("" matches any)
// and whether they are regular expressions.
func grpcMethodParts(m *gwv1.GRPCRouteMatch) (service, method string, regex bool) {
	if m.Method == nil {
		return "", "", false
	}
	if m.Method.Service != nil {
		service = *m.Method.Service
	}
	if m.Method.Method != nil {
		method = *m.Method.Method
	}
	return service, method, m.Method.Type != nil && *m.Method.Type == gwv1.GRPCMethodMatchRegularExpression
}
