package emulator

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// backendTLSFailure explains a failed TLS connection to the backend of a
// BackendTLSPolicy, for the trace: what the backend's certificate lacked,
// and the policy, SNI and trust anchors it was checked against. ok is false
// when err is not about TLS.
func backendTLSFailure(ex *exchange, err error) (reason string, ok bool) {
	if ex.backend == nil || ex.backend.b.TLS == nil {
		return "", false
	}
	p := ex.backend.b.TLS
	trust := "the system trust store"
	if !p.System {
		trust = "the CA certificates of " + strings.Join(p.CARefs, ", ")
	}
	var (
		herr x509.HostnameError
		uerr x509.UnknownAuthorityError
		ierr x509.CertificateInvalidError
		verr *tls.CertificateVerificationError
		rerr tls.RecordHeaderError
	)
	var what string
	switch {
	case errors.As(err, &herr):
		what = "its certificate is not valid for " + herr.Host + " (" + herr.Error() + ")"
	case errors.As(err, &uerr):
		what = "its certificate is not signed by " + trust + " (" + uerr.Error() + ")"
	case errors.As(err, &ierr):
		what = "its certificate is not valid: " + ierr.Error()
	case errors.As(err, &verr):
		what = "its certificate was refused: " + verr.Err.Error()
	case errors.As(err, &rerr):
		what = "it does not speak TLS (" + rerr.Msg + ")"
	case strings.Contains(err.Error(), "subjectAltNames"), strings.Contains(err.Error(), "tls:"):
		what = strings.TrimPrefix(err.Error(), "tls: ")
	default:
		return "", false
	}
	return fmt.Sprintf("TLS to backend %s (%s) failed: %s [BackendTLSPolicy %s, SNI %s]",
		ex.upstreamAddr, ex.backend.service, what, p.Policy, p.SNI), true
}
