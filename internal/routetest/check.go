package routetest

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Actual is what happened to a case's request, as the runner saw it: the
// data plane's trace of the real request, the answer the client got and
// what the echo backend reported receiving.
type Actual struct {
	// Refused: the connection or TLS handshake was refused, or nothing
	// matched (no rule); Reason says why (the dial or handshake error, or
	// the trace's reason).
	Refused bool   `json:"refused"`
	Reason  string `json:"reason,omitempty"`
	// Listener is the table's listener name.
	Listener string `json:"listener,omitempty"`
	// Route is the route and rule that took the request (nil: none).
	Route *RouteAt `json:"route,omitempty"`
	// Service is "namespace/name:port"; Target how it was reached; Pod the
	// echo backend's answer.
	Service string `json:"service,omitempty"`
	Target  string `json:"target,omitempty"`
	Pod     string `json:"pod,omitempty"`
	Status  int    `json:"status,omitempty"`
	// GRPCStatus is the grpc-status by name.
	GRPCStatus      string      `json:"grpcStatus,omitempty"`
	ResponseHeaders http.Header `json:"responseHeaders,omitempty"`
	// Received is what the echo backend reported (nil: no echo answered).
	Received *ReceivedActual `json:"received,omitempty"`
	Location string          `json:"location,omitempty"`
	// Mirrored are the Services ("namespace/name") whose echo backend
	// logged the request without answering it.
	Mirrored []string `json:"mirrored,omitempty"`
	// Policies are the policies applied to the Gateway, the route and the
	// backend Service the request went through ("Kind namespace/name").
	Policies []string `json:"policies,omitempty"`
	// AuthAsked are the ExternalAuth filters asked.
	AuthAsked []string `json:"authAsked,omitempty"`
	// BasicAuth is the basic auth (by table name) that checked the
	// request's credentials ("": none did); BasicAuthUser the user it let
	// in ("": it refused them).
	BasicAuth     string `json:"basicAuth,omitempty"`
	BasicAuthUser string `json:"basicAuthUser,omitempty"`
	// RateLimited is the rate limit (by table name) that refused the
	// first request refused ("": none was), RateLimitedStatus its status
	// and RateLimitedAt its number (1: the first request sent).
	RateLimited       string `json:"rateLimited,omitempty"`
	RateLimitedStatus int    `json:"rateLimitedStatus,omitempty"`
	RateLimitedAt     int    `json:"rateLimitedAt,omitempty"`
	// Reply is what a stream case read back.
	Reply string `json:"reply,omitempty"`
	// Shares are the share of the requests each Service got (Count > 1).
	Shares map[string]float64 `json:"shares,omitempty"`
	// Requests is how many requests were sent.
	Requests int `json:"requests"`
}

// The basic-auth decisions (Auth.Basic, Actual.BasicAuthDecision).
const (
	BasicAllowed = "allowed"
	BasicRefused = "refused"
	BasicNone    = "none"
)

// BasicAuthDecision is what basic auth decided: BasicAllowed (it let a
// user in), BasicRefused (it answered 401) or BasicNone (no basic auth
// checked the request).
func (a *Actual) BasicAuthDecision() string {
	switch {
	case a.BasicAuth == "":
		return BasicNone
	case a.BasicAuthUser != "":
		return BasicAllowed
	}
	return BasicRefused
}

// basicAuthText says the basic-auth decision for a mismatch.
func basicAuthText(a *Actual) string {
	switch a.BasicAuthDecision() {
	case BasicNone:
		return "no basic auth checked the request"
	case BasicAllowed:
		return "basic auth " + a.BasicAuth + " allowed user " + strconv.Quote(a.BasicAuthUser)
	}
	return "basic auth " + a.BasicAuth + " refused the credentials"
}

// RouteAt is a route and the indexes of the rule and match in it.
type RouteAt struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Rule      int    `json:"rule"`
	Match     int    `json:"match"`
}

func (r *RouteAt) String() string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("%s %s/%s rule %d match %d", r.Kind, r.Namespace, r.Name, r.Rule, r.Match)
}

// ReceivedActual is what the echo backend received.
type ReceivedActual struct {
	// Service is the Service ("namespace/name") the echo backend answered
	// as.
	Service string      `json:"service"`
	Path    string      `json:"path"`
	Host    string      `json:"host"`
	Method  string      `json:"method"`
	Headers http.Header `json:"headers,omitempty"`
}

// Mismatch is one expectation not met.
type Mismatch struct {
	// Field is the expectation's path ("status", "received.path").
	Field string `json:"field"`
	// Line is its line in the test file (0: unknown).
	Line int    `json:"line"`
	Want string `json:"want"`
	Got  string `json:"got"`
}

// Check compares a case's expectations with what happened: one Mismatch
// per expectation given and not met. Expectations not given are not
// checked.
func Check(c *Case, a *Actual) []Mismatch {
	e := &c.Expect
	var out []Mismatch
	add := func(field, want, got string) {
		out = append(out, Mismatch{Field: field, Line: c.Lines[field], Want: want, Got: got})
	}
	eq := func(field, want, got string) {
		if want != "" && want != got {
			add(field, want, quoteEmpty(got))
		}
	}
	if e.Refused != nil && *e.Refused != a.Refused {
		add("refused", strconv.FormatBool(*e.Refused), strconv.FormatBool(a.Refused)+reasonNote(a.Reason))
	}
	if e.Reason != "" && !strings.Contains(a.Reason, e.Reason) {
		add("reason", "contains "+strconv.Quote(e.Reason), quoteEmpty(a.Reason))
	}
	eq("listener", e.Listener, a.Listener)
	if r := e.Route; r != nil {
		got := a.Route
		if got == nil {
			got = &RouteAt{Rule: -1, Match: -1}
		}
		eq("route.kind", r.Kind, got.Kind)
		eq("route.namespace", r.Namespace, got.Namespace)
		eq("route.name", r.Name, got.Name)
		if r.Rule != nil && *r.Rule != got.Rule {
			add("route.rule", strconv.Itoa(*r.Rule), indexText(a.Route, got.Rule))
		}
		if r.Match != nil && *r.Match != got.Match {
			add("route.match", strconv.Itoa(*r.Match), indexText(a.Route, got.Match))
		}
	}
	if b := e.Backend; b != nil {
		if b.Service != "" && !serviceMatches(b.Service, a.Service) {
			add("backend.service", b.Service, quoteEmpty(a.Service))
		}
		eq("backend.target", b.Target, a.Target)
		eq("backend.pod", b.Pod, a.Pod)
	}
	if e.Status != 0 && e.Status != a.Status {
		add("status", strconv.Itoa(e.Status), statusText(a))
	}
	eq("grpcStatus", e.GRPCStatus, a.GRPCStatus)
	out = append(out, headerMismatches(c, "responseHeaders", e.ResponseHeaders, a.ResponseHeaders, true)...)
	if r := e.Received; r != nil {
		got := a.Received
		if got == nil {
			add("received", "the echo backend's report", "no echo backend answered"+reasonNote(a.Reason))
		} else {
			eq("received.path", r.Path, got.Path)
			eq("received.host", r.Host, got.Host)
			eq("received.method", r.Method, got.Method)
			out = append(out, headerMismatches(c, "received.headers", r.Headers, got.Headers, false)...)
		}
	}
	eq("location", e.Location, a.Location)
	for _, m := range e.Mirrors {
		if !slices.Contains(a.Mirrored, m) {
			add("mirrors", m+" received a copy", "copies went to "+listText(a.Mirrored))
		}
	}
	if au := e.Auth; au != nil {
		if au.Asked != nil && !slices.Equal(au.Asked, a.AuthAsked) {
			add("auth.asked", listText(au.Asked), listText(a.AuthAsked))
		}
		if au.Basic != "" && au.Basic != a.BasicAuthDecision() {
			add("auth.basic", au.Basic, basicAuthText(a))
		}
		if au.User != "" && au.User != a.BasicAuthUser {
			add("auth.user", au.User, basicAuthText(a))
		}
	}
	if rl := e.RateLimit; rl != nil {
		limited := a.RateLimited != ""
		if rl.Limited != nil && *rl.Limited != limited {
			got := fmt.Sprintf("no request of %d refused", a.Requests)
			if limited {
				got = fmt.Sprintf("request %d of %d refused by rate limit %s", a.RateLimitedAt, a.Requests, a.RateLimited)
			}
			add("rateLimit.limited", strconv.FormatBool(*rl.Limited), got)
		}
		if rl.Status != 0 && rl.Status != a.RateLimitedStatus {
			got := fmt.Sprintf("no request of %d refused", a.Requests)
			if limited {
				got = fmt.Sprintf("%d (request %d)", a.RateLimitedStatus, a.RateLimitedAt)
			}
			add("rateLimit.status", strconv.Itoa(rl.Status), got)
		}
	}
	for _, p := range e.Policies {
		if !slices.Contains(a.Policies, p) {
			add("policies", p+" applies", "applied: "+listText(a.Policies))
		}
	}
	if e.Reply != nil && !strings.Contains(a.Reply, *e.Reply) {
		add("reply", "contains "+strconv.Quote(*e.Reply), strconv.Quote(a.Reply))
	}
	if s := e.Split; s != nil {
		tol := s.Tolerance
		if tol == 0 {
			tol = DefaultSplitTolerance
		}
		for _, svc := range sortedKeys(s.Shares) {
			want := s.Shares[svc]
			got := 0.0
			for k, v := range a.Shares {
				if serviceMatches(svc, k) {
					got += v
				}
			}
			if math.Abs(got-want) > tol {
				add("split.shares", fmt.Sprintf("%s %.3f ± %.3f", svc, want, tol),
					fmt.Sprintf("%.3f of %d requests (%s)", got, a.Requests, sharesText(a.Shares)))
			}
		}
	}
	return out
}

// serviceMatches: "ns/name" matches any port of that Service,
// "ns/name:port" only that port.
func serviceMatches(want, got string) bool {
	if want == got {
		return true
	}
	name, _, _ := strings.Cut(got, ":")
	return !strings.Contains(want, ":") && want == name
}

func headerMismatches(c *Case, field string, want map[string]*string, got http.Header, _ bool) []Mismatch {
	var out []Mismatch
	for _, name := range sortedKeys(want) {
		v := want[name]
		vals, present := got[http.CanonicalHeaderKey(name)]
		f := field + "." + name
		line := c.Lines[f]
		if line == 0 {
			line = c.Lines[field]
		}
		switch {
		case v == nil && present:
			out = append(out, Mismatch{Field: f, Line: line, Want: "absent", Got: strings.Join(vals, ", ")})
		case v != nil && !present:
			out = append(out, Mismatch{Field: f, Line: line, Want: *v, Got: "absent"})
		case v != nil && !slices.Contains(vals, *v):
			out = append(out, Mismatch{Field: f, Line: line, Want: *v, Got: strings.Join(vals, ", ")})
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func quoteEmpty(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func reasonNote(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}

func indexText(r *RouteAt, i int) string {
	if r == nil {
		return "no route"
	}
	return strconv.Itoa(i)
}

func statusText(a *Actual) string {
	if a.Status == 0 {
		return "no HTTP answer" + reasonNote(a.Reason)
	}
	return strconv.Itoa(a.Status) + reasonNote(a.Reason)
}

func listText(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func sharesText(m map[string]float64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %.3f", k, m[k]))
	}
	return listText(parts)
}
