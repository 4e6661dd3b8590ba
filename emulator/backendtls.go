package emulator

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// backendTLSFailure explains a failed TLS connection to the backend of a
// BackendTLSPolicy, for the trace: what the backend's certificate lacked,
// and the policy, SNI and trust anchors it was checked against. ok is false
// when err is not about TLS.
func backendTLSFailure(ex *exchange, err error) (reason string, ok bool) {
	return tlsFailure(ex.backend, ex.upstreamAddr, err)
}

// tlsFailure is backendTLSFailure for backend b reached at addr (a route's
// backend, or an ExternalAuth backend).
func tlsFailure(b *backendRoutes, addr string, err error) (reason string, ok bool) {
	if b == nil || b.b.TLS == nil {
		return "", false
	}
	p := b.b.TLS
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
	case strings.Contains(err.Error(), remoteTLSError):
		what = backendRefusal(p, err.Error()[strings.Index(err.Error(), remoteTLSError)+len(remoteTLSError):])
	case strings.Contains(err.Error(), "subjectAltNames"), strings.Contains(err.Error(), "tls:"):
		what = strings.TrimPrefix(err.Error(), "tls: ")
	default:
		return "", false
	}
	return fmt.Sprintf("TLS to backend %s (%s) failed: %s [BackendTLSPolicy %s, SNI %s%s]",
		addr, b.service, what, p.Policy, p.SNI, clientCertHint(p, err)), true
}

// remoteTLSError starts the error of an alert the backend sent.
const remoteTLSError = "remote error: tls: "

// backendRefusal explains an alert the backend sent during the handshake:
// one about a certificate, when the gateway presented its client
// certificate, is about that certificate (the backend checks no other).
func backendRefusal(p *table.BackendTLS, alert string) string {
	if p.ClientCertificate != nil && strings.Contains(alert, "certificate") {
		return "it refused the Gateway's client certificate (alert: " + alert + ")"
	}
	return "it refused the handshake (alert: " + alert + ")"
}

// clientCertHint adds the Gateway's client certificate to a failed backend
// handshake's explanation, or says that the backend asked for one the
// Gateway does not have.
func clientCertHint(p *table.BackendTLS, err error) string {
	if c := p.ClientCertificate; c != nil {
		return ", client certificate Secret " + c.Secret
	}
	// Without a client certificate sent, a backend's alert about a
	// certificate can only be about the missing one (TLS 1.3 says
	// "certificate required", TLS 1.2 "bad certificate").
	if msg := err.Error(); strings.Contains(msg, remoteTLSError+"certificate required") || strings.Contains(msg, remoteTLSError+"bad certificate") {
		return "; the backend requires a client certificate: the Gateway has none (spec.tls.backend.clientCertificateRef)"
	}
	return ""
}
