package gwin

import (
	"strings"
	"testing"
)

// TestOptionsOf: the profile's entry is a gwin.Options, a pointer to one,
// or nothing; any other type is a caller's mistake and panics by name.
func TestOptionsOf(t *testing.T) {
	certs := map[string]PEMCertificate{"default/c": {CertPEM: []byte("c"), KeyPEM: []byte("k")}}
	for _, v := range []any{Options{YCCertificates: certs}, &Options{YCCertificates: certs}} {
		if got := optionsOf(v); len(got.YCCertificates) != 1 {
			t.Errorf("optionsOf(%T) = %+v", v, got)
		}
	}
	for _, v := range []any{nil, (*Options)(nil)} {
		if got := optionsOf(v); got.YCCertificates != nil {
			t.Errorf("optionsOf(%T) = %+v, want the zero Options", v, got)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "is a map[string]string, want a gwin.Options") {
			t.Errorf("recover() = %v", r)
		}
	}()
	optionsOf(map[string]string{})
}
