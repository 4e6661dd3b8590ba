package engine

import (
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// Coverage: whether every request one route match accepts is also accepted
// by another. The answer must never be a false "yes" (a shadow warning for
// a rule that does receive traffic), so every case that cannot be decided
// exactly is "no". The semantics are the table's (engine/table match.go):
// PathPrefix is segment-aware with trailing slashes dropped, regular
// expressions match the whole value (RE2), header names are canonical and
// query param names exact, and of several entries with equivalent names
// only the first is kept.

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

func (c *coverChecker) coversHTTP(a, b *table.HTTPMatch) bool {
	if a.Method != "" && a.Method != b.Method {
		return false
	}
	if !c.coversPath(a.Path, b.Path) {
		return false
	}
	return c.coversNamed(a.Headers, b.Headers) && c.coversNamed(a.QueryParams, b.QueryParams)
}

// segmentPrefix is the data plane's PathPrefix test for a normalised
// prefix: "/foo" matches "/foo", "/foo/" and "/foo/bar", not "/foobar".
func segmentPrefix(prefix, path string) bool {
	return strings.HasPrefix(path, prefix) && (len(path) == len(prefix) || path[len(prefix)] == '/')
}

func (c *coverChecker) coversPath(a, b table.PathMatch) bool {
	ta, va := a.Type, a.Value
	tb, vb := b.Type, b.Value
	switch ta {
	case table.MatchExact:
		return tb == table.MatchExact && va == vb
	case table.MatchPathPrefix:
		switch tb {
		case table.MatchExact:
			return segmentPrefix(va, vb)
		case table.MatchPathPrefix:
			// Every path b matches starts with vb then "/" or ends; it
			// starts with va on a segment boundary when vb does.
			return segmentPrefix(va, vb)
		}
		return false // a regular expression may match paths without a leading "/"
	case table.MatchRegularExpression:
		switch tb {
		case table.MatchExact:
			return c.fullMatch(va, vb)
		case table.MatchRegularExpression:
			return va == vb
		case table.MatchPathPrefix:
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

// coversNamed reports whether every condition of a is implied by b's
// condition on the same name.
func (c *coverChecker) coversNamed(a, b []table.ValueMatch) bool {
	for _, na := range a {
		ok := false
		for _, nb := range b {
			if nb.Name == na.Name {
				ok = c.coversValue(na.Value, na.Type == table.MatchRegularExpression, nb.Value, nb.Type == table.MatchRegularExpression)
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

func (c *coverChecker) coversGRPC(a, b *table.GRPCMatch) bool {
	ra, rb := a.Type == table.MatchRegularExpression, b.Type == table.MatchRegularExpression
	part := func(va, vb string) bool {
		if va == "" {
			return true
		}
		return vb != "" && c.coversValue(va, ra, vb, rb)
	}
	return part(a.Service, b.Service) && part(a.Method, b.Method) && c.coversNamed(a.Headers, b.Headers)
}
