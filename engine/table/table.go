package table

import (
	"fmt"
	"strconv"
	"time"
)

// Table is the routing table: plain data, no behaviour. Gateways are sorted
// by namespace/name; every element carries a stable Name that is also the key
// used in traces and in the TUI.
type Table struct {
	Gateways []*GatewayTable `json:"gateways"`
}

// GatewayTable is one Gateway's data plane: the address it binds and its ports.
type GatewayTable struct {
	// Name is "gateway/<ns>/<name>".
	Name    string    `json:"name"`
	Gateway ObjectKey `json:"gateway"`
	Source  Source    `json:"source,omitzero"`
	// Address is the IP the Gateway binds ("" : none could be assigned).
	Address string       `json:"address"`
	Ports   []*PortTable `json:"ports"`
	// AccessLog filters the Gateway's access log lines (nil: every line is
	// written); set by an implementation profile.
	AccessLog *AccessLogPolicy `json:"accessLog,omitempty"`
	// Tracing makes a span per HTTP request through the Gateway (nil: no
	// tracing; telemetry.go).
	Tracing *Tracing `json:"tracing,omitempty"`
	// Mesh is set when the entry is a Service's mesh frontend rather than a
	// Gateway (Name is then "mesh/<ns>/<service>…", Gateway the Service).
	Mesh *MeshService `json:"mesh,omitempty"`
	// Paths is how the Gateway normalises request paths before matching
	// (path.go; the zero value is the engine's default for every Gateway).
	Paths PathPolicy `json:"paths,omitzero"`
}

// DefaultPortOffset is where the data plane serves a port it cannot bind
// (privileged without rights, or in use): port+DefaultPortOffset, 80 on
// 8080 and 443 on 8443, unless configured otherwise.
const DefaultPortOffset = 8000

// PortTable is one bound port: every programmed listener sharing it, in
// hostname precedence order (exact, longer wildcard, shorter wildcard, any).
type PortTable struct {
	Port int32 `json:"port"`
	// Transport is "TCP" or "UDP".
	Transport string           `json:"transport"`
	Listeners []*ListenerTable `json:"listeners"`
}

// ListenerTable is one programmed listener with what is attached to it.
type ListenerTable struct {
	// Name is "gateway/<ns>/<gw>/listener/<section>" or
	// "listenerset/<ns>/<ls>/listener/<section>".
	Name string `json:"name"`
	// Owner is the Gateway or ListenerSet that declares the listener.
	Owner       ObjectKey    `json:"owner"`
	SectionName string       `json:"sectionName"`
	Source      Source       `json:"source,omitzero"`
	Protocol    ProtocolType `json:"protocol"`
	// Hostname is the listener hostname ("" matches any host).
	Hostname string `json:"hostname,omitempty"`
	// TLS is set for HTTPS and TLS listeners.
	TLS *ListenerTLS `json:"tls,omitempty"`
	// VirtualHosts are set for HTTP and HTTPS listeners, most specific first.
	VirtualHosts []*VirtualHost `json:"virtualHosts,omitempty"`
	// TLSRoutes are set for TLS listeners: one entry per served hostname,
	// most specific hostname first, then oldest route; the first entry whose
	// hostname matches the SNI serves the connection.
	TLSRoutes []*SNIRoute `json:"tlsRoutes,omitempty"`
	// StreamRoutes are set for TCP and UDP listeners, in route precedence
	// order; the first one serves connections.
	StreamRoutes []*StreamRoute `json:"streamRoutes,omitempty"`
	// PreRoutingAuth are the listener's pre-routing ExternalAuth filters
	// (spec.listeners[].filters.requests, GEP-5224), in order: every
	// request the listener accepts must pass each before a route is
	// matched; the headers they allow onto the request are visible to route
	// matching (never Host). An entry whose backend is invalid refuses.
	PreRoutingAuth []*ExternalAuth `json:"preRoutingAuth,omitempty"`
	// PreRoutingRefused, when set, is why every request on the listener is
	// refused with 500 before routing: a pre-routing filter gwdev cannot
	// run or whose reference does not resolve ("": none).
	PreRoutingRefused string `json:"preRoutingRefused,omitempty"`
	// Policy is implementation-profile behaviour (RBAC, HTTP versions,
	// idle timeouts; nil: the spec's behaviour only).
	Policy *ListenerPolicy `json:"policy,omitempty"`
}

// ListenerTLS is a listener's TLS configuration with resolved material.
type ListenerTLS struct {
	Mode         TLSModeType    `json:"mode"`
	Certificates []*Certificate `json:"certificates,omitempty"`
	// ClientCAs is the PEM bundle that client certificates must chain to
	// (nil: no client validation).
	ClientCAs []byte `json:"-"`
	// ClientCARefs names where ClientCAs came from.
	ClientCARefs []string `json:"clientCARefs,omitempty"`
	// ClientValidationMode is AllowValidOnly or AllowInsecureFallback.
	ClientValidationMode string `json:"clientValidationMode,omitempty"`
	// Options are the listener's tls.options, passed through.
	Options map[string]string `json:"options,omitempty"`
	// Limits are the TLS versions and cipher suites gwdev's option keys
	// allow (nil: gwdev's defaults).
	Limits *TLSLimits `json:"limits,omitempty"`
}

// Client certificate validation modes (ListenerTLS.ClientValidationMode).
const (
	// AllowValidOnly refuses clients without a valid certificate.
	AllowValidOnly = "AllowValidOnly"
	// AllowInsecureFallback lets clients without a valid certificate in.
	AllowInsecureFallback = "AllowInsecureFallback"
)

// Certificate is a parsed certificate with its key from a Secret: a
// listener's serving certificate, or a Gateway's client certificate to
// backends. The key material is never serialised.
type Certificate struct {
	// Secret is "<ns>/<name>".
	Secret string `json:"secret"`
	// DNSNames are the certificate's SANs (or its CN when it has none).
	DNSNames []string  `json:"dnsNames,omitempty"`
	NotAfter time.Time `json:"notAfter,omitzero"`
	CertPEM  []byte    `json:"-"`
	KeyPEM   []byte    `json:"-"`
	// ClientAuth is true when the leaf may authenticate a client: it has no
	// extended key usage, or one that lists clientAuth or any.
	ClientAuth bool `json:"-"`
}

// VirtualHost is the set of rules a request with a matching Host reaches.
type VirtualHost struct {
	// Name is "<listener name>/vhost/<hostname>" ("*" for any).
	Name string `json:"name"`
	// Hostname is exact, a "*." wildcard, or "" for any host.
	Hostname string `json:"hostname"`
	// Rules are in match precedence order (HTTPRoute or GRPCRoute rules).
	Rules []*RouteRule `json:"rules"`
}

// RouteRule is one match of one rule of an HTTPRoute or GRPCRoute, with what
// a request that matches it gets.
type RouteRule struct {
	// Name is "<kind>/<ns>/<name>/rule/<i>/match/<j>".
	Name   string    `json:"name"`
	Route  ObjectKey `json:"route"`
	Source Source    `json:"source,omitzero"`
	// RuleName is the rule's spec name, if any.
	RuleName string `json:"ruleName,omitempty"`
	// Index locates the entry in its route's spec (nil: not compiled from
	// a route rule, such as an Ingress path). Not in the YAML: Name says
	// the same to people; code reads Index, never Name.
	Index *RuleIndex `json:"-"`
	// HTTP is the compiled match of an HTTPRoute rule.
	HTTP *HTTPMatch `json:"http,omitempty"`
	// GRPC is the compiled match of a GRPCRoute rule.
	GRPC *GRPCMatch `json:"grpc,omitempty"`
	// Filters are applied in order before a backend is chosen, resolved
	// for this match (a ReplacePrefixMatch knows its prefix).
	Filters []Filter `json:"filters,omitempty"`
	// Mirrors holds the resolved backend of each RequestMirror filter, in
	// filter order.
	Mirrors []*Backend `json:"mirrors,omitempty"`
	// ExternalAuth holds the resolved ExternalAuth filters, in filter order
	// (nil: none).
	ExternalAuth []*ExternalAuth `json:"externalAuth,omitempty"`
	Backends     []*Backend      `json:"backends,omitempty"`
	// Timeouts are the rule's timeouts (nil: none).
	Timeouts *Timeouts `json:"timeouts,omitempty"`
	// Retry is the rule's retry policy (nil: no retries).
	Retry *Retry `json:"retry,omitempty"`
	// SessionPersistence pins a client to a backend endpoint (nil: none).
	SessionPersistence *Session `json:"sessionPersistence,omitempty"`
	// DirectStatus, when non-zero, is answered instead of forwarding: the
	// spec's 500 for a rule with no valid backend.
	DirectStatus int `json:"directStatus,omitempty"`
	// DirectReason explains DirectStatus for traces.
	DirectReason string `json:"directReason,omitempty"`
	// Policy is implementation-profile behaviour on this virtual host
	// (RBAC; nil: none).
	Policy *RulePolicy `json:"policy,omitempty"`
	// ErrorPages replaces the backend's answers of some statuses with an
	// error backend's (nil: none).
	ErrorPages *ErrorPages `json:"errorPages,omitempty"`
}

// ErrorPages is ingress-nginx's custom-http-errors: an answer of one of
// Codes is replaced by the answer of Backend, asked with GET for the same
// URI and X-Code, X-Format, X-Original-URI, X-Namespace, X-Ingress-Name,
// X-Service-Name, X-Service-Port and X-Request-ID; the client gets the
// error backend's answer as it is, status included.
type ErrorPages struct {
	Codes []int `json:"codes"`
	// Backend is the error backend (nil: gwdev answers 404 "default
	// backend - 404", as ingress-nginx's own default backend does).
	Backend *Backend `json:"backend,omitempty"`
	// From names the setting ("annotation ...custom-http-errors").
	From string `json:"from"`
}

// RuleIndex is where a table entry comes from in its route's spec.
type RuleIndex struct {
	// Rule is the index of the rule in spec.rules.
	Rule int
	// Match is the index of the match in the rule's matches (-1: the kind
	// has no matches: TLSRoute, TCPRoute, UDPRoute).
	Match int
}

// SNIRoute is a TLSRoute rule attached to a TLS listener.
type SNIRoute struct {
	// Name is "tlsroute/<ns>/<name>/rule/<i>".
	Name   string    `json:"name"`
	Route  ObjectKey `json:"route"`
	Source Source    `json:"source,omitzero"`
	// Index locates the entry in its route's spec (nil: not known).
	Index *RuleIndex `json:"-"`
	// Hostnames holds the one hostname this entry serves: a route hostname
	// intersected with the listener's ("" matches any SNI). A route serving
	// several hostnames has one entry per hostname, all with the same Name.
	Hostnames []string   `json:"hostnames"`
	Backends  []*Backend `json:"backends,omitempty"`
}

// StreamRoute is a TCPRoute or UDPRoute rule attached to a listener.
type StreamRoute struct {
	// Name is "tcproute/<ns>/<name>/rule/<i>" or "udproute/...".
	Name   string    `json:"name"`
	Route  ObjectKey `json:"route"`
	Source Source    `json:"source,omitzero"`
	// Index locates the entry in its route's spec (nil: not known).
	Index    *RuleIndex `json:"-"`
	Backends []*Backend `json:"backends,omitempty"`
}

// Backend is one weighted backendRef resolved to a target.
type Backend struct {
	// Name is "<rule name>/backend/<k>".
	Name string `json:"name"`
	// Service is the referenced Service ("Service/<ns>/<name>").
	Service ObjectKey `json:"service"`
	Port    int32     `json:"port,omitempty"`
	Weight  int32     `json:"weight"`
	// AppProtocol is the Service port's appProtocol ("" : none).
	AppProtocol string `json:"appProtocol,omitempty"`
	// HTTP2 is set when the gateway speaks HTTP/2 to the backend (h2c
	// without TLS): GRPCRoute backends, gRPC ExternalAuth backends and
	// ports whose appProtocol is kubernetes.io/h2c, h2c or grpc (false:
	// HTTP/1.1, unless the request itself is gRPC).
	HTTP2 bool `json:"http2,omitempty"`
	// Filters are the backendRef's own filters, resolved for the rule's
	// match.
	Filters []Filter `json:"filters,omitempty"`
	// Mirrors holds the resolved backend of each RequestMirror among
	// Filters, in filter order (nil: none).
	Mirrors []*Backend `json:"mirrors,omitempty"`
	// ExternalAuth holds the resolved ExternalAuth filters among Filters,
	// in filter order (nil: none).
	ExternalAuth []*ExternalAuth `json:"externalAuth,omitempty"`
	// Target says where requests go; nil when the backend is invalid.
	Target *Target `json:"target,omitempty"`
	// Invalid, when set, is why this backend cannot be used: requests that
	// pick it get a 500 (HTTP) or are refused (streams).
	Invalid string `json:"invalid,omitempty"`
	// TLS is set when a BackendTLSPolicy applies.
	TLS *BackendTLS `json:"tls,omitempty"`
	// RetryBudget is set when an XBackendTrafficPolicy limits retries to
	// the backend (nil: the rule's retries are not limited).
	RetryBudget *RetryBudget `json:"retryBudget,omitempty"`
	// SessionPersistence is the backend's own session persistence (an
	// XBackend's spec.sessionPersistence): after the backend is chosen by
	// weight, it pins a client to one of the backend's endpoints. It wins
	// over the rule's SessionPersistence for requests sent to this backend
	// (nil: the rule's applies, if any).
	SessionPersistence *Session `json:"sessionPersistence,omitempty"`
}

// Target kinds, in resolution order.
const (
	TargetMapped        = "mapped"
	TargetEndpointSlice = "endpointslice"
	TargetExternalName  = "externalname"
	TargetEcho          = "echo"
)

// Target is what a backend resolved to.
type Target struct {
	// Kind is one of the Target* constants.
	Kind string `json:"kind"`
	// Addresses are host:port pairs (empty for echo).
	Addresses []string `json:"addresses,omitempty"`
	// Pods names the endpoints' target pods, if known (EndpointSlice). For
	// an echo target, one name is the Pod the echo answers as (in its JSON
	// "pod" field); otherwise the echo names a pod after the Service. For
	// a pods target (TargetPods), the selected Pods, one endpoint each.
	Pods []string `json:"pods,omitempty"`
	// Why explains the choice, for status messages, the TUI and traces.
	Why string `json:"why"`
	// EchoTLS is the certificate the echo backend serves over TLS, from the
	// Secret the Service's EchoTLSSecretAnnotation names (nil: none; the
	// echo backend then generates one).
	EchoTLS *Certificate `json:"echoTLS,omitempty"`
	// EchoAuthHeader, when set, makes the echo backend a demo auth server
	// that allows requests carrying this header (EchoAuthHeaderAnnotation).
	EchoAuthHeader string `json:"echoAuthHeader,omitempty"`
}

// BackendTLS is TLS from the gateway to a backend, from a BackendTLSPolicy.
type BackendTLS struct {
	// Policy is "<ns>/<name>" of the BackendTLSPolicy.
	Policy string `json:"policy"`
	// SNI is the hostname sent and verified.
	SNI string `json:"sni"`
	// CACertificates is the PEM bundle to trust (nil with System).
	CACertificates []byte `json:"-"`
	// CARefs names where CACertificates came from.
	CARefs []string `json:"caRefs,omitempty"`
	// System means the system trust store.
	System bool `json:"system,omitempty"`
	// SubjectAltNames, when set, replace SNI for verification.
	SubjectAltNames []SubjectAltName `json:"subjectAltNames,omitempty"`
	// ClientCertificate is the certificate the gateway presents when the
	// backend asks for one: the Gateway's
	// spec.tls.backend.clientCertificateRef (nil: none is configured or it is
	// invalid, and the gateway presents no certificate). Its key is never
	// serialised.
	ClientCertificate *Certificate `json:"clientCertificate,omitempty"`
	// Limits are the TLS versions and cipher suites the policy's options
	// allow (nil: gwdev's defaults).
	Limits *TLSLimits `json:"limits,omitempty"`
	// NoVerify accepts any certificate from the backend: ingress-nginx's
	// backend-protocol HTTPS and GRPCS with proxy-ssl-verify off, its
	// default (CACertificates and System are unused then).
	NoVerify bool `json:"noVerify,omitempty"`
}

// Validate checks the table's invariants: names unique and present, ports
// in range, one transport per port entry, listeners of a port share a
// protocol family, weights non-negative.
func (t *Table) Validate() error {
	if t == nil {
		return nil
	}
	seen := map[string]bool{}
	name := func(n string) error {
		if n == "" {
			return fmt.Errorf("element without a name")
		}
		if seen[n] {
			return fmt.Errorf("duplicate name %q", n)
		}
		seen[n] = true
		return nil
	}
	for _, g := range t.Gateways {
		if err := name(g.Name); err != nil {
			return err
		}
		if err := g.Tracing.validate(); err != nil {
			return fmt.Errorf("%s: %w", g.Name, err)
		}
		ports := map[string]bool{}
		for _, p := range g.Ports {
			if p.Port < 1 || p.Port > 65535 {
				return fmt.Errorf("%s: port %d out of range", g.Name, p.Port)
			}
			pk := p.Transport + "/" + strconv.Itoa(int(p.Port))
			if ports[pk] {
				return fmt.Errorf("%s: port %s listed twice", g.Name, pk)
			}
			ports[pk] = true
			for _, l := range p.Listeners {
				if err := name(l.Name); err != nil {
					return err
				}
				if Transport(l.Protocol) != p.Transport {
					return fmt.Errorf("%s: protocol %s on %s port", l.Name, l.Protocol, p.Transport)
				}
				if err := l.validate(name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (l *ListenerTable) validate(name func(string) error) error {
	if err := l.Policy.validate(); err != nil {
		return fmt.Errorf("%s: %w", l.Name, err)
	}
	if err := validateExternalAuth(l.PreRoutingAuth); err != nil {
		return fmt.Errorf("%s: pre-routing: %w", l.Name, err)
	}
	var backends []*Backend
	for _, vh := range l.VirtualHosts {
		if err := name(vh.Name); err != nil {
			return err
		}
		for _, r := range vh.Rules {
			if (r.HTTP == nil) == (r.GRPC == nil) {
				return fmt.Errorf("%s: rule %s needs exactly one of http/grpc match", vh.Name, r.Name)
			}
			backends = append(backends, r.Backends...)
			if r.ErrorPages != nil && r.ErrorPages.Backend != nil {
				backends = append(backends, r.ErrorPages.Backend)
			}
			if err := r.validateMatch(); err != nil {
				return err
			}
			if err := validateExternalAuth(r.ExternalAuth); err != nil {
				return err
			}
			if err := validateFilters(r.Name, r.Filters, len(r.Mirrors), len(r.ExternalAuth)); err != nil {
				return err
			}
			for _, b := range r.Backends {
				if err := validateExternalAuth(b.ExternalAuth); err != nil {
					return err
				}
				if err := validateFilters(b.Name, b.Filters, len(b.Mirrors), len(b.ExternalAuth)); err != nil {
					return err
				}
			}
		}
	}
	for _, r := range l.TLSRoutes {
		backends = append(backends, r.Backends...)
	}
	for _, r := range l.StreamRoutes {
		backends = append(backends, r.Backends...)
	}
	for _, b := range backends {
		if b.Weight < 0 {
			return fmt.Errorf("%s: negative weight", b.Name)
		}
		if b.Target == nil && b.Invalid == "" {
			return fmt.Errorf("%s: neither target nor reason", b.Name)
		}
	}
	return nil
}

// ProtocolType is a listener's protocol.
type ProtocolType string

// Listener protocols.
const (
	HTTPProtocolType  ProtocolType = "HTTP"
	HTTPSProtocolType ProtocolType = "HTTPS"
	TLSProtocolType   ProtocolType = "TLS"
	TCPProtocolType   ProtocolType = "TCP"
	UDPProtocolType   ProtocolType = "UDP"
)

// TLSModeType is what a TLS listener does with connections.
type TLSModeType string

// TLS modes.
const (
	// TLSModeTerminate ends TLS at the gateway.
	TLSModeTerminate TLSModeType = "Terminate"
	// TLSModePassthrough forwards the TLS stream as it is, by SNI.
	TLSModePassthrough TLSModeType = "Passthrough"
)

// SubjectAltName is a name a backend's certificate must carry: exactly one
// of Hostname (a DNS name, "*." wildcards as in certificates) and URI.
type SubjectAltName struct {
	Hostname string `json:"hostname,omitempty"`
	URI      string `json:"uri,omitempty"`
}

// Transport maps a listener protocol to "TCP" or "UDP".
func Transport(p ProtocolType) string {
	if p == UDPProtocolType {
		return "UDP"
	}
	return "TCP"
}
