package table

import "fmt"

// This file holds compiled route matches: what a request must carry for a
// RouteRule to take it, with every spec default decided by the engine.

// MatchType says how a match compares a value.
type MatchType string

// Match types.
const (
	// MatchExact compares the whole value.
	MatchExact MatchType = "Exact"
	// MatchPathPrefix compares a path by whole segments with a prefix that
	// has no trailing slash: "/foo" matches "/foo", "/foo/" and "/foo/bar"
	// but not "/foobar"; "" matches every path.
	MatchPathPrefix MatchType = "PathPrefix"
	// MatchRegularExpression matches the whole value against an RE2
	// expression (the engine has checked that it compiles).
	MatchRegularExpression MatchType = "RegularExpression"
)

// HTTPMatch is a compiled HTTPRouteMatch: a request matches when every
// part does.
type HTTPMatch struct {
	Path PathMatch `json:"path"`
	// Method is the request method to match ("": any method).
	Method string `json:"method,omitempty"`
	// Headers match request headers; names are canonical
	// (textproto.CanonicalMIMEHeaderKey) and unique: of entries with
	// equivalent names only the first is kept, as the spec requires
	// (nil: no header condition).
	Headers []ValueMatch `json:"headers,omitempty"`
	// QueryParams match query parameters by exact name (the first value
	// of a repeated parameter counts); names are unique as for Headers.
	QueryParams []ValueMatch `json:"queryParams,omitempty"`
}

// PathMatch is a compiled path match.
type PathMatch struct {
	// Type is MatchExact, MatchPathPrefix or MatchRegularExpression.
	Type MatchType `json:"type"`
	// Value is the exact path, the prefix without trailing slashes ("" for
	// "/": every path), or the regular expression.
	Value string `json:"value"`
}

// ValueMatch is a compiled header, query parameter or gRPC header match.
type ValueMatch struct {
	Name string `json:"name"`
	// Type is MatchExact or MatchRegularExpression.
	Type  MatchType `json:"type"`
	Value string    `json:"value"`
}

// GRPCMatch is a compiled GRPCRouteMatch. It takes gRPC requests only
// (HTTP/2 with an application/grpc content type), whose path is
// "/<service>/<method>".
type GRPCMatch struct {
	// Type is MatchExact or MatchRegularExpression, for Service and Method
	// ("" when neither is set).
	Type MatchType `json:"type,omitempty"`
	// Service and Method match the two parts of the path ("": any).
	Service string `json:"service,omitempty"`
	Method  string `json:"method,omitempty"`
	// Headers are as HTTPMatch.Headers.
	Headers []ValueMatch `json:"headers,omitempty"`
}

// String renders the match for people, e.g. "PathPrefix /api" ("/" for
// the prefix that matches every path).
func (p PathMatch) String() string {
	v := p.Value
	if v == "" && p.Type == MatchPathPrefix {
		v = "/"
	}
	return string(p.Type) + " " + v
}

// validateMatch checks a rule's match types.
func (r *RouteRule) validateMatch() error {
	valueTypes := func(ms []ValueMatch) error {
		for _, m := range ms {
			if m.Type != MatchExact && m.Type != MatchRegularExpression {
				return fmt.Errorf("rule %s: %s match type %q", r.Name, m.Name, m.Type)
			}
		}
		return nil
	}
	if m := r.HTTP; m != nil {
		switch m.Path.Type {
		case MatchExact, MatchPathPrefix, MatchRegularExpression:
		default:
			return fmt.Errorf("rule %s: path match type %q", r.Name, m.Path.Type)
		}
		if err := valueTypes(m.Headers); err != nil {
			return err
		}
		return valueTypes(m.QueryParams)
	}
	return valueTypes(r.GRPC.Headers)
}
