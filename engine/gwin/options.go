package gwin

import "fmt"

// Options are the gwin profile's own options, handed to the engine as
// engine.Options.ProfileOptions[Name] (gwdev reads them from gwdev.yaml's
// ycCertificates:). The zero value is the default: no local certificates.
type Options struct {
	// YCCertificates gives the local PEM of YCCertificate certificateRefs,
	// keyed by "namespace/name" (nil: none, so such references do not
	// resolve).
	YCCertificates map[string]PEMCertificate
}

// PEMCertificate is a certificate chain and its private key, PEM encoded.
type PEMCertificate struct {
	// CertPEM is the chain, leaf first.
	CertPEM []byte
	// KeyPEM is the leaf's private key.
	KeyPEM []byte
}

// optionsOf reads the profile's entry of engine.Options.ProfileOptions:
// an Options, or nothing. Another type is a caller's mistake, not an input
// to report, so it panics (like a second RegisterProfile).
func optionsOf(v any) Options {
	switch o := v.(type) {
	case nil:
		return Options{}
	case Options:
		return o
	case *Options:
		if o == nil {
			return Options{}
		}
		return *o
	}
	panic(fmt.Sprintf("gwin: engine.Options.ProfileOptions[%q] is a %T, want a gwin.Options", Name, v))
}
