package routetest

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Update rewrites, in the test file at path, the expectations of result's
// failed cases to what happened (gwdev test --update): only the fields
// that failed, in place, keeping the file's comments and layout. It
// returns one line per field changed ("file:line: field: old → new"); a
// field whose actual value cannot be written (a case that was not sent,
// or received: when no echo backend answered) is left and reported as not
// updated. The file is written only when something changed.
func Update(path string, result FileResult) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	cases := mapValue(doc.Content[0], "cases")
	if cases == nil {
		return nil, fmt.Errorf("%s: no cases", path)
	}
	var notes []string
	changed := false
	for i, cr := range result.Cases {
		if cr.Passed() || i >= len(cases.Content) {
			continue
		}
		if cr.Error != "" || cr.Actual == nil {
			notes = append(notes, fmt.Sprintf("%s:%d: not updated: %s", path, cr.Line, cr.Error))
			continue
		}
		expect := mapValue(cases.Content[i], "expect")
		for _, m := range cr.Mismatches {
			v, ok := actualValue(m.Field, cr.Actual)
			n := nodeExact(expect, fieldPath(m.Field))
			if !ok || n == nil {
				notes = append(notes, fmt.Sprintf("%s:%d: %s: not updated (%s)", path, m.Line, m.Field, m.Got))
				continue
			}
			var nn yaml.Node
			if err := nn.Encode(v); err != nil {
				return nil, err
			}
			if nn.Kind == yaml.DocumentNode && len(nn.Content) == 1 {
				nn = *nn.Content[0]
			}
			nn.Style = n.Style & yaml.FlowStyle
			line := n.Line
			*n = nn
			changed = true
			notes = append(notes, fmt.Sprintf("%s:%d: %s: %s → %s", path, line, m.Field, m.Want, valueText(v)))
		}
	}
	if !changed {
		return notes, nil
	}
	out, err := yaml.Dump(&doc, yaml.WithIndent(2))
	if err != nil {
		return nil, err
	}
	if _, err := Parse(path, out); err != nil {
		return nil, fmt.Errorf("%s: the updated file would not parse, left as it was: %w", path, err)
	}
	return notes, os.WriteFile(path, out, 0o644)
}

func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "absent"
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}

// actualValue is what happened for an expectation field (Mismatch.Field),
// as the value the field takes (ok false: none can be written).
func actualValue(field string, a *Actual) (any, bool) {
	head, rest, _ := strings.Cut(field, ".")
	switch head {
	case "refused":
		return a.Refused, true
	case "reason":
		return a.Reason, a.Reason != ""
	case "listener":
		return a.Listener, true
	case "status":
		return a.Status, a.Status != 0
	case "grpcStatus":
		return a.GRPCStatus, true
	case "location":
		return a.Location, true
	case "reply":
		return a.Reply, true
	case "mirrors":
		return nonNil(a.Mirrored), true
	case "policies":
		return nonNil(a.Policies), true
	case "auth":
		switch rest {
		case "asked":
			return nonNil(a.AuthAsked), true
		case "basic":
			return a.BasicAuthDecision(), true
		case "user":
			return a.BasicAuthUser, a.BasicAuthUser != ""
		}
	case "rateLimit":
		switch rest {
		case "limited":
			return a.RateLimited != "", true
		case "status":
			return a.RateLimitedStatus, a.RateLimitedStatus != 0
		}
	case "route":
		r := a.Route
		if r == nil {
			return nil, false
		}
		switch rest {
		case "kind":
			return r.Kind, true
		case "namespace":
			return r.Namespace, true
		case "name":
			return r.Name, true
		case "rule":
			return r.Rule, true
		case "match":
			return r.Match, true
		}
	case "backend":
		switch rest {
		case "service":
			return a.Service, a.Service != ""
		case "target":
			return a.Target, true
		case "pod":
			return a.Pod, true
		}
	case "responseHeaders":
		return headerValue(a.ResponseHeaders[canonical(rest)]), true
	case "received":
		r := a.Received
		if r == nil {
			return nil, false
		}
		switch {
		case rest == "path":
			return r.Path, true
		case rest == "host":
			return r.Host, true
		case rest == "method":
			return r.Method, true
		case strings.HasPrefix(rest, "headers."):
			return headerValue(r.Headers[canonical(strings.TrimPrefix(rest, "headers."))]), true
		}
	case "split":
		if rest != "shares" || len(a.Shares) == 0 {
			return nil, false
		}
		m := map[string]float64{}
		for k, v := range a.Shares {
			m[k] = math.Round(v*100) / 100
		}
		return m, true
	}
	return nil, false
}

func headerValue(vs []string) any {
	if len(vs) == 0 {
		return nil
	}
	return vs[0]
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

func canonical(name string) string { return http.CanonicalHeaderKey(name) }

// nodeExact is the node at path below n (nil: a key is missing).
func nodeExact(n *yaml.Node, path []string) *yaml.Node {
	for _, k := range path {
		if n = mapValue(n, k); n == nil {
			return nil
		}
	}
	return n
}

// fieldPath splits a Mismatch.Field into keys: a header name is one key
// whatever it holds.
func fieldPath(field string) []string {
	for _, p := range []string{"responseHeaders.", "received.headers."} {
		if rest, ok := strings.CutPrefix(field, p); ok {
			return append(strings.Split(strings.TrimSuffix(p, "."), "."), rest)
		}
	}
	return strings.Split(field, ".")
}
