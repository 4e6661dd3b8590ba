// Package routetest is the routing tests' file format (`gwdev test`):
// files named *.gwtest.yaml (or *.gwtest.yml) beside the manifests, each a
// list of cases, a request and what must happen to it. Only the
// expectations given are checked. The format is described by the JSON
// Schema docs/schema/gwdev-test.schema.json, embedded here and applied to
// every file read (Parse), so that an unknown field or a wrong type is an
// error naming file:line:column. The runner (internal/app's RunTests)
// sends each case through the real data plane and fills an Actual; Check
// compares. It imports no package of gwdev: the report renderers and the
// application both read it.
package routetest

// File is one test file.
type File struct {
	// Path is the file as found (relative to the folder given, or as
	// --tests named it).
	Path  string `yaml:"-" json:"-"`
	Cases []Case `yaml:"cases" json:"cases"`
}

// Case is one request and what must happen to it.
type Case struct {
	// Name says what the case checks ("": "case <n>").
	Name    string  `yaml:"name,omitempty" json:"name,omitempty"`
	Request Request `yaml:"request" json:"request"`
	Expect  Expect  `yaml:"expect" json:"expect"`
	// Line and Column are where the case starts in its file; Lines the
	// line of each expectation given, by its path ("status",
	// "received.path").
	Line   int            `yaml:"-" json:"-"`
	Column int            `yaml:"-" json:"-"`
	Lines  map[string]int `yaml:"-" json:"-"`
	// Columns are the columns of the values of Lines' fields.
	Columns map[string]int `yaml:"-" json:"-"`
}

// Request is what a case sends: the URL as `gwdev explain` takes it
// (http, https, grpc, grpcs, tls, tcp, udp), with the flags explain has.
type Request struct {
	URL    string `yaml:"url" json:"url"`
	Method string `yaml:"method,omitempty" json:"method,omitempty"`
	// Headers are sent as given; a Host header sets the request's host.
	Headers map[string]string `yaml:"headers,omitempty" json:"headers,omitempty"`
	Body    string            `yaml:"body,omitempty" json:"body,omitempty"`
	// HTTP2 sends HTTP/2 (h2c on http://, h2 on https://); HTTP1 sends
	// HTTP/1.1 even for a gRPC content type.
	HTTP2 bool `yaml:"http2,omitempty" json:"http2,omitempty"`
	HTTP1 bool `yaml:"http1,omitempty" json:"http1,omitempty"`
	// SNI is the TLS server name (nil: the URL's host; "": none).
	SNI *string `yaml:"sni,omitempty" json:"sni,omitempty"`
	// Gateway is the Gateway ("namespace/name") the request goes to (""
	// : the first with a listener on the URL's port).
	Gateway string `yaml:"gateway,omitempty" json:"gateway,omitempty"`
	// ClientCert is the certificate a TLS request presents (paths relative
	// to the test file).
	ClientCert *ClientCert `yaml:"clientCert,omitempty" json:"clientCert,omitempty"`
	// Data are the bytes a tcp://, udp:// or tls:// case writes.
	Data string `yaml:"data,omitempty" json:"data,omitempty"`
	// Count sends the request this many times (0: once); a split
	// expectation needs enough of them.
	Count int `yaml:"count,omitempty" json:"count,omitempty"`
}

// ClientCert is a certificate and key, PEM files.
type ClientCert struct {
	Cert string `yaml:"cert" json:"cert"`
	Key  string `yaml:"key" json:"key"`
}

// Expect are the expectations of a case; nil and zero fields are not
// checked.
type Expect struct {
	// Refused: the request reached no route (the connection or TLS
	// handshake was refused, or nothing matched); false: it did.
	Refused *bool `yaml:"refused,omitempty" json:"refused,omitempty"`
	// Reason must be part of the gateway's reason (nothing matched, the
	// gateway answered itself, the connection was refused).
	Reason   string       `yaml:"reason,omitempty" json:"reason,omitempty"`
	Listener string       `yaml:"listener,omitempty" json:"listener,omitempty"`
	Route    *RouteExpect `yaml:"route,omitempty" json:"route,omitempty"`
	Backend  *Backend     `yaml:"backend,omitempty" json:"backend,omitempty"`
	Status   int          `yaml:"status,omitempty" json:"status,omitempty"`
	// GRPCStatus is the grpc-status by name ("OK", "Unimplemented").
	GRPCStatus string `yaml:"grpcStatus,omitempty" json:"grpcStatus,omitempty"`
	// ResponseHeaders must have these values; a null value: the header
	// must be absent.
	ResponseHeaders map[string]*string `yaml:"responseHeaders,omitempty" json:"responseHeaders,omitempty"`
	Received        *Received          `yaml:"received,omitempty" json:"received,omitempty"`
	// Location is a redirect's Location.
	Location string `yaml:"location,omitempty" json:"location,omitempty"`
	// Mirrors are the Services ("namespace/name") that must have received
	// a copy of the request.
	Mirrors []string `yaml:"mirrors,omitempty" json:"mirrors,omitempty"`
	// Auth is the authentication decision: the ExternalAuth checks the
	// request asked and what basic auth decided.
	Auth *Auth `yaml:"auth,omitempty" json:"auth,omitempty"`
	// RateLimit is the rate-limit decision over the Count requests sent.
	RateLimit *RateLimit `yaml:"rateLimit,omitempty" json:"rateLimit,omitempty"`
	// Policies are policies ("Kind namespace/name") that must apply to the
	// Gateway, the route or the backend Service the request went through.
	Policies []string `yaml:"policies,omitempty" json:"policies,omitempty"`
	// Reply must be part of what a tcp://, udp:// or tls:// case reads back.
	Reply *string `yaml:"reply,omitempty" json:"reply,omitempty"`
	// Split are the shares of the requests each Service
	// ("namespace/name:port") must get, within Tolerance.
	Split *Split `yaml:"split,omitempty" json:"split,omitempty"`
}

// RouteExpect is the route and rule that must take the request.
type RouteExpect struct {
	Kind      string `yaml:"kind,omitempty" json:"kind,omitempty"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	Name      string `yaml:"name,omitempty" json:"name,omitempty"`
	// Rule and Match are indexes in spec.rules and the rule's matches.
	Rule  *int `yaml:"rule,omitempty" json:"rule,omitempty"`
	Match *int `yaml:"match,omitempty" json:"match,omitempty"`
}

// Backend is the backend that must answer.
type Backend struct {
	// Service is "namespace/name:port".
	Service string `yaml:"service,omitempty" json:"service,omitempty"`
	// Target is how it was reached: echo, mapped, endpointslice,
	// externalname, pods.
	Target string `yaml:"target,omitempty" json:"target,omitempty"`
	// Pod is the Pod the echo backend answered as.
	Pod string `yaml:"pod,omitempty" json:"pod,omitempty"`
}

// Received is what the backend must have received (the echo backend
// reports it).
type Received struct {
	Path   string `yaml:"path,omitempty" json:"path,omitempty"`
	Host   string `yaml:"host,omitempty" json:"host,omitempty"`
	Method string `yaml:"method,omitempty" json:"method,omitempty"`
	// Headers must have these values; null: absent.
	Headers map[string]*string `yaml:"headers,omitempty" json:"headers,omitempty"`
}

// Auth is the authentication decision.
type Auth struct {
	// Asked are the ExternalAuth filters asked, by table name.
	Asked []string `yaml:"asked,omitempty" json:"asked,omitempty"`
	// Basic is what basic auth decided: allowed, refused (401) or none
	// (no basic auth checked the request) ("": not checked).
	Basic string `yaml:"basic,omitempty" json:"basic,omitempty"`
	// User is the user basic auth let in ("": not checked).
	User string `yaml:"user,omitempty" json:"user,omitempty"`
}

// RateLimit is the rate-limit decision over a case's Count requests.
type RateLimit struct {
	// Limited: a rate limit refused one of the requests (false: it
	// refused none; nil: not checked).
	Limited *bool `yaml:"limited,omitempty" json:"limited,omitempty"`
	// Status is the status of the first request refused (0: not checked).
	Status int `yaml:"status,omitempty" json:"status,omitempty"`
}

// Split is a weighted split's expected shares.
type Split struct {
	Shares map[string]float64 `yaml:"shares" json:"shares"`
	// Tolerance is the absolute difference allowed per share (0: 0.05).
	Tolerance float64 `yaml:"tolerance,omitempty" json:"tolerance,omitempty"`
}

// DefaultSplitTolerance is Split.Tolerance's default.
const DefaultSplitTolerance = 0.05
