package emulator

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// reqView is what matching needs from a request, computed once per request.
// The query string is parsed only when a candidate rule has query matches.
type reqView struct {
	r      *http.Request
	path   string
	method string
	grpc   bool
	// grpcService and grpcMethod split a gRPC request's path
	// "/<service>/<method>".
	grpcService, grpcMethod string
	query                   url.Values
	queryParsed             bool
}

func newReqView(r *http.Request) reqView {
	v := reqView{r: r, path: r.URL.Path, method: r.Method}
	if v.path == "" {
		v.path = "/"
	}
	v.grpc = wire.IsGRPC(r)
	if v.grpc {
		p := strings.TrimPrefix(v.path, "/")
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			v.grpcService, v.grpcMethod = p[:i], p[i+1:]
		}
	}
	return v
}

func (v *reqView) queryParam(name string) (string, bool) {
	if !v.queryParsed {
		v.query, _ = url.ParseQuery(v.r.URL.RawQuery)
		v.queryParsed = true
	}
	vs, ok := v.query[name]
	if !ok || len(vs) == 0 {
		return "", false
	}
	return vs[0], true // the spec recommends the first value
}

// header returns a request header's value; repeated headers are joined with
// commas as RFC 9110 allows. Host is read from the request line.
func (v *reqView) header(canonical string) (string, bool) {
	if canonical == "Host" {
		return v.r.Host, v.r.Host != ""
	}
	vs, ok := v.r.Header[canonical]
	switch {
	case !ok || len(vs) == 0:
		return "", false
	case len(vs) == 1:
		return vs[0], true
	}
	return strings.Join(vs, ","), true
}

// stringMatch is an exact or a full-match regular expression comparison.
type stringMatch struct {
	value string
	re    *regexp.Regexp
}

func (m *stringMatch) match(s string) bool {
	if m.re != nil {
		return m.re.MatchString(s)
	}
	return m.value == s
}

// namedMatch matches the value of a header (name canonical) or a query
// parameter.
type namedMatch struct {
	name string
	stringMatch
}

// Path match kinds.
const (
	pathPrefix = iota
	pathExact
	pathRegex
)

// httpMatch is the table's HTTPMatch with its expressions compiled.
type httpMatch struct {
	kind int
	// path is the Exact value, or the PathPrefix value (no trailing slash;
	// "" for "/").
	path    string
	pathRE  *regexp.Regexp
	method  string
	headers []namedMatch
	query   []namedMatch
}

// grpcMatch is the table's GRPCMatch compiled; nil service or method match
// any.
type grpcMatch struct {
	service, method *stringMatch
	headers         []namedMatch
}

// regexCache compiles each expression once: expressions of the previous
// table are reused, and only those the new table uses are kept.
type regexCache struct {
	old, cur map[string]*regexp.Regexp
}

// compile returns the full-match expression for expr.
func (c *regexCache) compile(expr string) (*regexp.Regexp, error) {
	if re, ok := c.cur[expr]; ok {
		return re, nil
	}
	re, ok := c.old[expr]
	if !ok {
		var err error
		re, err = regexp.Compile(`^(?:` + expr + `)$`)
		if err != nil {
			return nil, fmt.Errorf("regular expression %q: %w", expr, err)
		}
	}
	c.cur[expr] = re
	return re, nil
}

// compileHTTPMatch compiles the table's HTTP match: the engine has decided
// every default, so only expressions are compiled here.
func compileHTTPMatch(m *table.HTTPMatch, rc *regexCache) (*httpMatch, error) {
	c := &httpMatch{method: m.Method}
	switch m.Path.Type {
	case table.MatchExact:
		c.kind, c.path = pathExact, m.Path.Value
	case table.MatchRegularExpression:
		re, err := rc.compile(m.Path.Value)
		if err != nil {
			return nil, fmt.Errorf("path: %w", err)
		}
		c.kind, c.pathRE = pathRegex, re
	case table.MatchPathPrefix:
		c.kind, c.path = pathPrefix, m.Path.Value
	default:
		return nil, fmt.Errorf("path match type %q is not supported", m.Path.Type)
	}
	var err error
	if c.headers, err = compileNamed(m.Headers, "header", rc); err != nil {
		return nil, err
	}
	if c.query, err = compileNamed(m.QueryParams, "query param", rc); err != nil {
		return nil, err
	}
	return c, nil
}

func compileGRPCMatch(m *table.GRPCMatch, rc *regexCache) (*grpcMatch, error) {
	c := &grpcMatch{}
	re := m.Type == table.MatchRegularExpression
	if m.Service != "" {
		sm, err := compileString(m.Service, re, rc)
		if err != nil {
			return nil, fmt.Errorf("service: %w", err)
		}
		c.service = &sm
	}
	if m.Method != "" {
		sm, err := compileString(m.Method, re, rc)
		if err != nil {
			return nil, fmt.Errorf("method: %w", err)
		}
		c.method = &sm
	}
	var err error
	c.headers, err = compileNamed(m.Headers, "header", rc)
	return c, err
}

// compileNamed compiles header or query parameter matches (names already
// canonical and unique).
func compileNamed(entries []table.ValueMatch, what string, rc *regexCache) ([]namedMatch, error) {
	var out []namedMatch
	for _, e := range entries {
		sm, err := compileString(e.Value, e.Type == table.MatchRegularExpression, rc)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, e.Name, err)
		}
		out = append(out, namedMatch{name: e.Name, stringMatch: sm})
	}
	return out, nil
}

func compileString(value string, regex bool, rc *regexCache) (stringMatch, error) {
	if !regex {
		return stringMatch{value: value}, nil
	}
	re, err := rc.compile(value)
	return stringMatch{re: re}, err
}

// matchPath reports whether the request path satisfies the path match.
func (m *httpMatch) matchPath(path string) bool {
	switch m.kind {
	case pathExact:
		return path == m.path
	case pathRegex:
		return m.pathRE.MatchString(path)
	}
	return prefixMatches(m.path, path)
}

// prefixMatches is the segment-aware PathPrefix comparison with the
// table's prefix (no trailing slash): "/foo" matches "/foo", "/foo/" and
// "/foo/bar" but not "/foobar".
func prefixMatches(prefix, path string) bool {
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	return len(path) == len(prefix) || path[len(prefix)] == '/'
}

// matchRest checks everything but the path.
func (m *httpMatch) matchRest(v *reqView) bool {
	if m.method != "" && m.method != v.method {
		return false
	}
	return allMatch(m.headers, v.header) && allMatch(m.query, v.queryParam)
}

func (m *grpcMatch) matches(v *reqView) bool {
	if !v.grpc {
		return false
	}
	if m.service != nil && !m.service.match(v.grpcService) {
		return false
	}
	if m.method != nil && !m.method.match(v.grpcMethod) {
		return false
	}
	return allMatch(m.headers, v.header)
}

// allMatch reports whether every named match finds its name (through
// lookup) with a matching value.
func allMatch(ms []namedMatch, lookup func(name string) (string, bool)) bool {
	for i := range ms {
		val, ok := lookup(ms[i].name)
		if !ok || !ms[i].match(val) {
			return false
		}
	}
	return true
}
