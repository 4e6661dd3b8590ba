package table

import (
	"fmt"
	"net/netip"
	"regexp"
	"time"
)

// This file holds the routing table's implementation-profile settings:
// data-plane behaviour that an implementation profile (see profile.go)
// adds to the spec's, such as gwin's RBAC, allowHTTP10 and access-log
// discard rules. Every field is plain data; nil means the spec's behaviour.

// ListenerPolicy is a listener's implementation-profile behaviour.
type ListenerPolicy struct {
	// Profile is the implementation profile that set it (for example gwin).
	Profile string `json:"profile"`
	// RBAC, when set, decides which requests an HTTP or HTTPS listener
	// serves; refused requests get 403 (nil: every request).
	RBAC *RBAC `json:"rbac,omitempty"`
	// AllowHTTP10 restricts the listener to HTTP/1.0 and HTTP/1.1: HTTP/2
	// requests (h2c or h2) are refused (false: HTTP/2 is served too).
	AllowHTTP10 bool `json:"allowHTTP10,omitempty"`
	// MaxConcurrentStreams limits concurrent HTTP/2 streams per connection
	// (0: the server default).
	MaxConcurrentStreams uint32 `json:"maxConcurrentStreams,omitempty"`
	// StreamIdleTimeout closes a TLS or TCP connection after that long
	// without data in either direction, in Go duration syntax ("": no idle
	// timeout).
	StreamIdleTimeout string `json:"streamIdleTimeout,omitempty"`
	// From lists where the settings came from (annotations, policies).
	From []string `json:"from,omitempty"`
}

// RBAC actions.
const (
	// RBACAllow serves a request only when a principal group matches it.
	RBACAllow = "ALLOW"
	// RBACDeny refuses a request when a principal group matches it.
	RBACDeny = "DENY"
)

// RBAC is an access control policy: principal groups are ORed, the
// principals inside a group ANDed; Action says what a match means.
type RBAC struct {
	// Name is the stable name traces use, such as
	// "gateway/<ns>/<gw>/listener/<name>/rbac".
	Name string `json:"name"`
	// Action is RBACAllow or RBACDeny.
	Action string `json:"action"`
	// Groups are sorted by name (nil: none, so ALLOW refuses every request
	// and DENY refuses none).
	Groups []RBACGroup `json:"groups,omitempty"`
	// From lists where the policy's settings came from.
	From []string `json:"from,omitempty"`
}

// RBACGroup is a principal group: it matches a request when every one of
// its principals does.
type RBACGroup struct {
	Name string `json:"name"`
	// Principals are sorted by name.
	Principals []RBACPrincipal `json:"principals"`
}

// RBACPrincipal is one check. A principal without a check (any: false)
// matches no request.
type RBACPrincipal struct {
	Name string `json:"name"`
	// Header matches a request header (nil: no header check).
	Header *RBACHeaderMatch `json:"header,omitempty"`
	// RemoteIP is a CIDR prefix the client address must be in ("": none).
	RemoteIP string `json:"remoteIP,omitempty"`
	// Any matches every request.
	Any bool `json:"any,omitempty"`
}

// RBACHeaderMatch matches a header's value (several values are joined with
// ","): at most one of Exact, Prefix and Regex is set, and with none any
// value matches. A request without the header does not match.
type RBACHeaderMatch struct {
	Name   string `json:"name"`
	Exact  string `json:"exact,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	// Regex is an RE2 expression matched against the whole value.
	Regex string `json:"regex,omitempty"`
}

// RulePolicy is a route rule's implementation-profile behaviour on one
// virtual host.
type RulePolicy struct {
	// Profile is the implementation profile that set it.
	Profile string `json:"profile"`
	// HostRBAC is the route's access control for the virtual host,
	// checked first (nil: none).
	HostRBAC *RBAC `json:"hostRBAC,omitempty"`
	// RBAC is the rule's access control (nil: none).
	RBAC *RBAC `json:"rbac,omitempty"`
	// MaxRequestBody refuses a request whose body is larger, in bytes,
	// with 413: by its Content-Length before anything else, a body without
	// one while it is read, before it is forwarded (0: no limit).
	MaxRequestBody int64 `json:"maxRequestBody,omitempty"`
	// BasicAuth asks for a user name and password, after the RBAC checks
	// (nil: none).
	BasicAuth *BasicAuth `json:"basicAuth,omitempty"`
	// RateLimit limits the requests of each client address, after the
	// RBAC checks and BasicAuth (nil: none).
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	// From lists where the settings above came from (annotations); empty
	// for defaults.
	From []string `json:"from,omitempty"`
}

// BasicAuth is HTTP basic authentication (RFC 7617) against a list of
// users with password hashes in htpasswd formats: a request without valid
// credentials gets 401 with a Basic challenge.
type BasicAuth struct {
	// Name is the stable name traces use.
	Name string `json:"name"`
	// Realm is the challenge's realm.
	Realm string `json:"realm"`
	// Secret names where the users came from ("<ns>/<name>").
	Secret string `json:"secret"`
	// Users are the users and their hashes: "$2y$"/"$2a$"/"$2b$" bcrypt,
	// "$apr1$" Apache MD5, "{SHA}" base64 SHA-1, "{PLAIN}" plain text.
	// A user whose hash has another format never authenticates. Never
	// serialised.
	Users []BasicAuthUser `json:"-"`
	// UserCount is len(Users), for the serialised table.
	UserCount int `json:"userCount"`
}

// BasicAuthUser is one user of a BasicAuth.
type BasicAuthUser struct {
	Name string
	Hash string
}

// RateLimit limits each client address's requests: PerSecond and
// PerMinute are leaky buckets that admit Burst requests above the rate at
// once (nginx's limit_req with burst and nodelay), Connections limits the
// requests in progress (limit_conn). A refused request gets Status.
type RateLimit struct {
	// Name is the stable name traces use; rules with the same name share
	// their counters.
	Name string `json:"name"`
	// PerSecond and PerMinute are the rates (0: no such limit).
	PerSecond int `json:"perSecond,omitempty"`
	PerMinute int `json:"perMinute,omitempty"`
	// BurstPerSecond and BurstPerMinute are the requests admitted above
	// each rate at once.
	BurstPerSecond int `json:"burstPerSecond,omitempty"`
	BurstPerMinute int `json:"burstPerMinute,omitempty"`
	// Connections limits the requests in progress per address (0: none).
	Connections int `json:"connections,omitempty"`
	// Exempt are CIDR prefixes whose clients are not limited.
	Exempt []string `json:"exempt,omitempty"`
	// Status answers a refused request (503 when 0).
	Status int `json:"status,omitempty"`
	// MaxClients bounds the addresses remembered: beyond it the least
	// recently seen without a request in progress is forgotten, and a new
	// address is refused while every one remembered has a request in
	// progress (0: 10000).
	MaxClients int `json:"maxClients,omitempty"`
}

// AccessLogPolicy filters the access log lines of a Gateway's requests (it
// never changes traces).
type AccessLogPolicy struct {
	// Profile is the implementation profile that set it.
	Profile string `json:"profile"`
	// Disabled drops every access log line of the Gateway.
	Disabled bool `json:"disabled,omitempty"`
	// DiscardRules are sorted by name; the first rule that matches a
	// request decides whether its line is dropped.
	DiscardRules []LogDiscardRule `json:"discardRules,omitempty"`
}

// LogDiscardRule drops DiscardPercent percent of the access log lines of
// requests whose HTTP status is in HTTPCodes or HTTPCodeIntervals, or whose
// gRPC status is in GRPCCodes.
type LogDiscardRule struct {
	Name      string `json:"name"`
	HTTPCodes []int  `json:"httpCodes,omitempty"`
	// HTTPCodeIntervals are HTTP_1XX … HTTP_5XX or HTTP_ALL.
	HTTPCodeIntervals []string `json:"httpCodeIntervals,omitempty"`
	// GRPCCodes are gRPC status names such as UNAVAILABLE.
	GRPCCodes []string `json:"grpcCodes,omitempty"`
	// DiscardPercent is 0 (keep all) to 100 (drop all matching lines).
	DiscardPercent int `json:"discardPercent"`
}

// validate checks the RBAC invariants: a known action, names, one check
// per header match, parseable prefixes and expressions.
func (r *RBAC) validate() error {
	if r == nil {
		return nil
	}
	if r.Action != RBACAllow && r.Action != RBACDeny {
		return fmt.Errorf("%s: action %q is neither %s nor %s", r.Name, r.Action, RBACAllow, RBACDeny)
	}
	for _, g := range r.Groups {
		for _, p := range g.Principals {
			if p.RemoteIP != "" {
				if _, err := netip.ParsePrefix(p.RemoteIP); err != nil {
					return fmt.Errorf("%s: principal %s/%s: %w", r.Name, g.Name, p.Name, err)
				}
			}
			if h := p.Header; h != nil {
				n := 0
				for _, s := range []string{h.Exact, h.Prefix, h.Regex} {
					if s != "" {
						n++
					}
				}
				if h.Name == "" || n > 1 {
					return fmt.Errorf("%s: principal %s/%s: a header match needs a name and at most one of exact, prefix, regex", r.Name, g.Name, p.Name)
				}
				if _, err := regexp.Compile(h.Regex); err != nil {
					return fmt.Errorf("%s: principal %s/%s: %w", r.Name, g.Name, p.Name, err)
				}
			}
		}
	}
	return nil
}

// validate checks a listener policy.
func (p *ListenerPolicy) validate() error {
	if p == nil {
		return nil
	}
	if p.StreamIdleTimeout != "" {
		if d, err := time.ParseDuration(p.StreamIdleTimeout); err != nil || d < 0 {
			return fmt.Errorf("streamIdleTimeout %q is not a duration", p.StreamIdleTimeout)
		}
	}
	return p.RBAC.validate()
}

// BasicAuthMaxBcryptCost is the highest bcrypt cost the data plane checks:
// each step doubles the work of every request's check (cost 12 takes about
// a quarter of a second of one core, cost 31 days), and common defaults are
// 10 to 12 (htpasswd -B writes 5). A costlier hash is not checked, so its
// user is refused.
const BasicAuthMaxBcryptCost = 12

// BasicAuthHashSupported reports whether the data plane checks passwords
// against a hash of this htpasswd format: bcrypt ("$2y$", "$2a$",
// "$2b$") of at most BasicAuthMaxBcryptCost, Apache MD5 ("$apr1$"),
// "{SHA}" and "{PLAIN}".
func BasicAuthHashSupported(hash string) bool {
	if cost, ok := BcryptCost(hash); ok {
		return cost <= BasicAuthMaxBcryptCost
	}
	for _, p := range []string{"$apr1$", "{SHA}", "{PLAIN}"} {
		if len(hash) > len(p) && hash[:len(p)] == p {
			return true
		}
	}
	return false
}

// BcryptCost is the cost of a bcrypt hash ("$2y$NN$..."); ok is false when
// hash is not one.
func BcryptCost(hash string) (cost int, ok bool) {
	if len(hash) < 8 || hash[0] != '$' || hash[1] != '2' || hash[6] != '$' || hash[4] < '0' || hash[4] > '9' || hash[5] < '0' || hash[5] > '9' {
		return 0, false
	}
	switch hash[2:4] {
	case "y$", "a$", "b$":
		return int(hash[4]-'0')*10 + int(hash[5]-'0'), true
	}
	return 0, false
}
