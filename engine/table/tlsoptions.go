package table

// TLSLimits are the TLS versions and cipher suites a connection may use,
// from gwdev's own keys in a listener's tls.options or a BackendTLSPolicy's
// spec.options (TLSOptionMinVersion and the others). Zero values mean
// gwdev's defaults: TLS 1.2 to 1.3 and Go's default cipher suites.
type TLSLimits struct {
	// MinVersion and MaxVersion are "1.2" or "1.3" ("" : the default).
	MinVersion string `json:"minVersion,omitempty"`
	MaxVersion string `json:"maxVersion,omitempty"`
	// CipherSuites are the TLS 1.2 cipher suites allowed, by their IANA
	// names, in order of preference (nil: Go's defaults). TLS 1.3 suites
	// cannot be restricted.
	CipherSuites []string `json:"cipherSuites,omitempty"`
}
