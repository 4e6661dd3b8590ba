package table

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// This file holds a rule's timeouts, retries and session persistence as
// plain values with the spec's (and gwdev's) defaults applied. Durations
// are time.Duration; they serialise in the Gateway API's duration format
// ("1h2m3s4ms").

// Timeouts are a rule's timeouts; 0 means none (unset, or "0s", which
// disables a timeout).
type Timeouts struct {
	// Request bounds the whole request, retries included.
	Request time.Duration
	// BackendRequest bounds each request to a backend.
	BackendRequest time.Duration
}

// Retry is a rule's retry policy.
type Retry struct {
	// Codes are the response statuses that are retried (connection errors
	// and backend timeouts always are).
	Codes []int
	// Attempts is how many times a request is retried at most.
	Attempts int
	// Backoff is the wait before the first retry; each further retry waits
	// twice as long as the one before.
	Backoff time.Duration
}

// SessionType says where a session lives.
type SessionType string

// Session types.
const (
	SessionCookie SessionType = "Cookie"
	SessionHeader SessionType = "Header"
)

// CookieLifetime says whether a session cookie outlives the browser.
type CookieLifetime string

// Cookie lifetimes.
const (
	// LifetimeSession is a cookie without Max-Age.
	LifetimeSession CookieLifetime = "Session"
	// LifetimePermanent is a cookie whose Max-Age is the absolute
	// timeout.
	LifetimePermanent CookieLifetime = "Permanent"
)

// Session is a rule's session persistence: a client's requests stick to
// the backend endpoint its first request reached.
type Session struct {
	Type SessionType
	// Name is the cookie's or header's name.
	Name string
	// AbsoluteTimeout ends a session that long after it began (0: never).
	AbsoluteTimeout time.Duration
	// Lifetime is the cookie's lifetime ("" for header sessions).
	Lifetime CookieLifetime
	// Path is the cookie's Path attribute ("" for header sessions; the
	// translator defaults a cookie's to "/").
	Path string
}

// jsonDuration is a time.Duration that serialises in the Gateway API's
// duration format; 0 is omitted by omitempty.
type jsonDuration time.Duration

// MarshalJSON writes the duration like "1m30s" or "250ms".
func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(FormatDuration(time.Duration(d)))
}

// UnmarshalJSON reads what MarshalJSON writes (any Go duration).
func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = jsonDuration(v)
	return err
}

// FormatDuration renders d in the Gateway API's duration format: hours,
// minutes, seconds and milliseconds, each only when non-zero ("0s" for 0).
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if n := d / u.unit; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10) + u.name)
			d -= n * u.unit
		}
	}
	if d > 0 { // below a millisecond: not a Gateway API duration
		b.WriteString(d.String())
	}
	return b.String()
}

type timeoutsJSON struct {
	Request        jsonDuration `json:"request,omitempty"`
	BackendRequest jsonDuration `json:"backendRequest,omitempty"`
}

// MarshalJSON writes the timeouts with their durations as text.
func (t Timeouts) MarshalJSON() ([]byte, error) {
	return json.Marshal(timeoutsJSON{jsonDuration(t.Request), jsonDuration(t.BackendRequest)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Timeouts) UnmarshalJSON(b []byte) error {
	var j timeoutsJSON
	err := json.Unmarshal(b, &j)
	*t = Timeouts{Request: time.Duration(j.Request), BackendRequest: time.Duration(j.BackendRequest)}
	return err
}

type retryJSON struct {
	Codes    []int        `json:"codes,omitempty"`
	Attempts int          `json:"attempts"`
	Backoff  jsonDuration `json:"backoff,omitempty"`
}

// MarshalJSON writes the retry policy with its backoff as text.
func (r Retry) MarshalJSON() ([]byte, error) {
	return json.Marshal(retryJSON{r.Codes, r.Attempts, jsonDuration(r.Backoff)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Retry) UnmarshalJSON(b []byte) error {
	var j retryJSON
	err := json.Unmarshal(b, &j)
	*r = Retry{Codes: j.Codes, Attempts: j.Attempts, Backoff: time.Duration(j.Backoff)}
	return err
}

type sessionJSON struct {
	Type            SessionType    `json:"type"`
	Name            string         `json:"name"`
	AbsoluteTimeout jsonDuration   `json:"absoluteTimeout,omitempty"`
	Lifetime        CookieLifetime `json:"lifetime,omitempty"`
	Path            string         `json:"path,omitempty"`
}

// MarshalJSON writes the session settings with the timeout as text.
func (s Session) MarshalJSON() ([]byte, error) {
	return json.Marshal(sessionJSON{s.Type, s.Name, jsonDuration(s.AbsoluteTimeout), s.Lifetime, s.Path})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Session) UnmarshalJSON(b []byte) error {
	var j sessionJSON
	err := json.Unmarshal(b, &j)
	*s = Session{Type: j.Type, Name: j.Name, AbsoluteTimeout: time.Duration(j.AbsoluteTimeout), Lifetime: j.Lifetime, Path: j.Path}
	return err
}
