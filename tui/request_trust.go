package tui

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// serverTrust is how a copied command treats the server's certificate:
// verified against a CA file gwdev knows (curl --cacert, grpcurl -cacert,
// openssl -CAfile), against the system's roots (no flag), or not verified
// (curl -k, grpcurl -insecure). The zero value is "not verified, reason
// unknown".
type serverTrust struct {
	// caFile is the CA bundle the certificate verifies against ("" : none).
	caFile string
	// system is set when the system's roots verify it (no flag needed).
	system bool
	// note says, for the status line, which CA verifies the certificate or
	// why the command does not verify it (see insecureNote).
	note string
}

// insecureNote is the status line's note for a command over TLS that does
// not verify the server: the flag that skips verification in its protocol
// (curl -k, grpcurl -insecure; openssl s_client reports a failed
// verification and goes on), and why.
func insecureNote(t emulator.Trace, st serverTrust) string {
	switch protocolOf(t) {
	case protoHTTPS:
		return "-k: " + st.note
	case protoGRPCS:
		return "-insecure: " + st.note
	}
	return "not verified: " + st.note
}

// verifies reports whether the command can verify the server.
func (st serverTrust) verifies() bool { return st.caFile != "" || st.system }

// trustChecker finds what verifies a listener's certificate.
type trustChecker struct {
	// caFiles are the CA bundles tried in order (Options.CAFiles).
	caFiles []string
	// systemRoots returns the system's roots (nil: not consulted).
	systemRoots func() (*x509.CertPool, error)
	// now is the time certificates are checked at: the client's, the real
	// clock's, whatever clock the dashboard shows.
	now func() time.Time
}

// trustFor decides how the command for t verifies the certificate the
// gateway presented (the Secret the trace names, as tab serves it) or, for
// a TLS passthrough to gwdev's echo backend, the echo backend's. The name
// checked is the one the command's client checks: the SNI, or the listener
// address when the client sent none. It reads the CA files: call it off the
// event loop.
func (tc trustChecker) trustFor(t emulator.Trace, tab *table.Table) serverTrust {
	chain, whose := servedChain(t, tab)
	if chain == nil {
		return serverTrust{note: whose}
	}
	certs, err := parseChain(chain)
	if err != nil {
		return serverTrust{note: fmt.Sprintf("the certificate of %s does not parse: %v", whose, err)}
	}
	name := t.SNI
	if name == "" {
		name, _, _ = net.SplitHostPort(t.Address)
	}
	v := emulator.VerifyWithCAFiles(certs, name, tc.now(), tc.caFiles) // the data plane's hints ask it too
	if v.File != "" {
		return serverTrust{caFile: v.File, note: fmt.Sprintf("--cacert: the certificate of %s verifies for %s against %s", whose, name, v.File)}
	}
	tried, firstErr := v.Tried, v.Err
	opts := x509.VerifyOptions{DNSName: name, Intermediates: x509.NewCertPool(), CurrentTime: tc.now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if tc.systemRoots != nil {
		if roots, err := tc.systemRoots(); err == nil && roots != nil {
			opts.Roots = roots
			if _, err := certs[0].Verify(opts); err == nil {
				return serverTrust{system: true, note: fmt.Sprintf("the certificate of %s verifies for %s against the system's roots", whose, name)}
			}
		}
	}
	switch {
	case len(tc.caFiles) == 0:
		return serverTrust{note: "no CA file is known to verify the certificate of " + whose}
	case len(tried) == 0:
		return serverTrust{note: fmt.Sprintf("none of the CA files gwdev knows exists (%s) to verify the certificate of %s",
			strings.Join(tc.caFiles, ", "), whose)}
	case t.SNI == "" && isNameError(firstErr):
		return serverTrust{note: fmt.Sprintf("the client sent no SNI and the certificate of %s does not name %s", whose, name)}
	}
	return serverTrust{note: fmt.Sprintf("the certificate of %s does not verify against %s: %v", whose, strings.Join(tried, ", "), firstErr)}
}

// isNameError reports whether err is a hostname mismatch.
func isNameError(err error) bool {
	var h x509.HostnameError
	return errors.As(err, &h)
}

// servedChain finds the PEM chain the client of t got: the listener's
// certificate from the Secret the trace names, or the echo backend's of a
// TLS passthrough. Without one, the second result says why the command
// cannot verify; with one, it names whose certificate it is.
func servedChain(t emulator.Trace, tab *table.Table) ([]byte, string) {
	if tab == nil {
		return nil, "no routing table yet"
	}
	if t.Certificate == "" {
		if t.Proto == "TLS Passthrough" {
			if c := passthroughEchoCert(t, tab); c != nil {
				return c.CertPEM, "the echo backend (Secret " + c.Secret + ")"
			}
			return nil, "the backend's own certificate (TLS passthrough): gwdev does not know what verifies it"
		}
		return nil, "the handshake ended before the gateway presented a certificate"
	}
	for _, g := range tab.Gateways {
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				if l.Name != t.Listener || l.TLS == nil {
					continue
				}
				for _, c := range l.TLS.Certificates {
					if c != nil && c.Secret == t.Certificate {
						return c.CertPEM, "Secret " + c.Secret
					}
				}
			}
		}
	}
	return nil, "listener " + t.Listener + " no longer serves the certificate of Secret " + t.Certificate
}

// passthroughEchoCert is the certificate the echo backend of a TLS
// passthrough trace serves from a Secret (nil: none, or it generates one
// that no CA file verifies).
func passthroughEchoCert(t emulator.Trace, tab *table.Table) *table.Certificate {
	for _, g := range tab.Gateways {
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				for _, r := range l.TLSRoutes {
					for _, b := range r.Backends {
						if b != nil && b.Name == t.Backend && b.Target != nil && b.Target.EchoTLS != nil {
							return b.Target.EchoTLS
						}
					}
				}
			}
		}
	}
	return nil
}

// parseChain parses the PEM certificates of a chain, leaf first.
func parseChain(chain []byte) ([]*x509.Certificate, error) {
	certs, err := engine.ParsePEMCertificates(chain)
	if err == nil && len(certs) == 0 {
		err = errors.New("no CERTIFICATE block")
	}
	return certs, err
}
