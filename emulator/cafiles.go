package emulator

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"time"
)

// CAVerdict is what the CA bundles gwdev knows say of a certificate.
type CAVerdict struct {
	// File is the first bundle that verifies the certificate ("" : none).
	File string
	// Tried lists the bundles that exist and hold certificates.
	Tried []string
	// Err is the first verification error (nil when File is set or no
	// bundle was tried).
	Err error
}

// VerifyWithCAFiles checks certs[0] (certs[1:] are intermediates) for the
// server name name at now against each CA bundle of files in order, read
// now: a bundle that does not exist (yet) is skipped. The dashboard's
// copied commands and the data plane's hints (--cacert FILE instead of
// curl -k) both ask it.
func VerifyWithCAFiles(certs []*x509.Certificate, name string, now time.Time, files []string) CAVerdict {
	var v CAVerdict
	if len(certs) == 0 {
		return v
	}
	opts := x509.VerifyOptions{DNSName: name, Intermediates: x509.NewCertPool(), CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	for _, f := range files {
		pemBytes, err := os.ReadFile(f)
		if err != nil {
			continue // not created (yet): gwdev certs makes it
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pemBytes) {
			continue
		}
		v.Tried = append(v.Tried, f)
		opts.Roots = roots
		if _, err := certs[0].Verify(opts); err != nil {
			if v.Err == nil {
				v.Err = err
			}
			continue
		}
		v.File, v.Err = f, nil
		return v
	}
	return v
}

// caTrust names the CA bundle that verifies, for the server name name, the
// certificate a listener presents ("" : none gwdev knows); a hint's curl
// line then trusts it with --cacert instead of skipping verification (-k).
// A nil caTrust knows none.
type caTrust func(cert *tls.Certificate, name string) string

// trustCAFiles is the caTrust of CA bundles tried in order (nil: none).
func trustCAFiles(files []string) caTrust {
	if len(files) == 0 {
		return nil
	}
	return func(cert *tls.Certificate, name string) string {
		if cert == nil || len(cert.Certificate) == 0 {
			return ""
		}
		certs := make([]*x509.Certificate, 0, len(cert.Certificate))
		for _, der := range cert.Certificate {
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return ""
			}
			certs = append(certs, c)
		}
		return VerifyWithCAFiles(certs, name, time.Now(), files).File
	}
}

// caFileFor is the CA bundle that verifies the certificate listener i of
// the TLS port pr presents for name ("" : none, or trust is nil).
func (trust caTrust) caFileFor(pr *portRoutes, i int, name string) string {
	if trust == nil || pr == nil || pr.tls == nil || i < 0 || i >= len(pr.tls.listeners) {
		return ""
	}
	tl := pr.tls.listeners[i]
	if tl.conf == nil || len(tl.conf.Certificates) == 0 {
		return ""
	}
	for k := range tl.conf.Certificates { // only the one served for name can verify for it
		if f := trust(&tl.conf.Certificates[k], name); f != "" {
			return f
		}
	}
	return ""
}
