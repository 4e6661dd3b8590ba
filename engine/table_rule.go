package engine

import (
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// Defaults where the spec leaves a value to the implementation.
const (
	// defaultRetries is how often a request is retried when a rule's retry
	// gives no attempts.
	defaultRetries = 1
	// defaultBackoff is the wait before the first retry when a rule's retry
	// gives no (or a zero) backoff.
	defaultBackoff = 25 * time.Millisecond
	// defaultSessionCookie and defaultSessionHeader name a session whose
	// rule gives no sessionName.
	defaultSessionCookie = "gwdev-session"
	defaultSessionHeader = "X-Gwdev-Session"
)

// durationOrZero reads a Gateway API duration (specDuration): unset,
// "0s" (which disables a timeout), invalid and negative values give 0.
func durationOrZero(d *gwv1.Duration) time.Duration {
	if v, ok := specDuration(d); ok && v > 0 {
		return v
	}
	return 0
}

// compileTimeouts converts a rule's timeouts (nil: none).
func compileTimeouts(t *gwv1.HTTPRouteTimeouts) *table.Timeouts {
	if t == nil {
		return nil
	}
	return &table.Timeouts{Request: durationOrZero(t.Request), BackendRequest: durationOrZero(t.BackendRequest)}
}

// compileRetry converts a rule's retry policy with gwdev's defaults for
// attempts and backoff (nil: no retries).
func compileRetry(r *gwv1.HTTPRouteRetry) *table.Retry {
	if r == nil {
		return nil
	}
	out := &table.Retry{Attempts: defaultRetries, Backoff: defaultBackoff}
	for _, c := range r.Codes {
		out.Codes = append(out.Codes, int(c))
	}
	if r.Attempts != nil {
		out.Attempts = *r.Attempts
	}
	if d := durationOrZero(r.Backoff); d > 0 {
		out.Backoff = d
	}
	return out
}

// compileSession converts session persistence with its defaults: a
// cookie, named by gwdev when the rule gives no cookie.name, with path "/"
// (the spec's default for cookie.path) and a Session lifetime unless the
// rule asks for Permanent; a header session takes header.name (nil: none).
func compileSession(sp *gwv1.SessionPersistence) *table.Session {
	if sp == nil {
		return nil
	}
	s := &table.Session{Type: table.SessionCookie, Name: defaultSessionCookie, AbsoluteTimeout: durationOrZero(sp.AbsoluteTimeout),
		Lifetime: table.LifetimeSession, Path: "/"}
	if sp.Type != nil && *sp.Type == gwv1.HeaderBasedSessionPersistence {
		s.Type, s.Name, s.Lifetime, s.Path = table.SessionHeader, defaultSessionHeader, "", ""
		if h := sp.Header; h != nil && h.Name != "" {
			s.Name = string(h.Name)
		}
		return s
	}
	if c := sp.Cookie; c != nil {
		if c.Name != nil && *c.Name != "" {
			s.Name = string(*c.Name)
		}
		if c.Path != nil && *c.Path != "" {
			s.Path = *c.Path
		}
		if c.LifetimeType != nil && *c.LifetimeType == gwv1.PermanentCookieLifetimeType {
			s.Lifetime = table.LifetimePermanent
		}
	}
	return s
}

// compileSubjectAltNames converts a BackendTLSPolicy's subjectAltNames.
func compileSubjectAltNames(in []gwv1.SubjectAltName) []table.SubjectAltName {
	var out []table.SubjectAltName
	for _, s := range in {
		switch s.Type {
		case gwv1.HostnameSubjectAltNameType:
			out = append(out, table.SubjectAltName{Hostname: string(s.Hostname)})
		case gwv1.URISubjectAltNameType:
			out = append(out, table.SubjectAltName{URI: string(s.URI)})
		}
	}
	return out
}

// noteSessionDeprecated warns that a route rule's or an
// XBackendTrafficPolicy's sessionPersistence is deprecated in Gateway API
// v1.7.0 ("use the Backend resource for session persistence", GEP-4894);
// gwdev still applies it.
func (t *translator) noteSessionDeprecated(k ObjectKey, sp *gwv1.SessionPersistence, scope string) {
	if sp == nil {
		return
	}
	t.note(SeverityWarning, k, scope, scope+" is deprecated in Gateway API v1.7.0: use the XBackend resource's sessionPersistence (GEP-4894); "+
		"gwdev still applies it (an XBackend's own sessionPersistence wins for requests sent to that XBackend)")
}
