package engine

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	certificatesv1 "k8s.io/api/certificates/v1"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// resolveListenerTLS resolves a terminating or passthrough listener's TLS
// configuration. Terminate needs at least one valid certificate: every
// invalid reference sets ResolvedRefs=False (RefNotPermitted for a
// cross-namespace reference without ReferenceGrant, InvalidCertificateRef
// otherwise), and with no valid certificate the listener is not programmed.
func (t *translator) resolveListenerTLS(l *listenerState, mode gwv1.TLSModeType) {
	lt := &ListenerTLS{Mode: table.TLSModeType(mode)}
	l.tlsTable = lt
	if l.tls == nil {
		l.cond.fail("ResolvedRefs", string(gwv1.ListenerReasonInvalidCertificateRef), "tls is required for protocol "+string(l.protocol))
		l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), "no TLS configuration")
		return
	}
	if len(l.tls.Options) > 0 {
		lt.Options = map[string]string{}
		for k, v := range l.tls.Options {
			lt.Options[string(k)] = string(v)
		}
		t.listenerTLSOptions(l, lt) // tlsoptions.go
	}
	if mode == gwv1.TLSModePassthrough {
		if len(l.tls.CertificateRefs) > 0 {
			t.noteKind(NoteCertificateRefsPassthrough, SeverityWarning, l.ownerKey(), "listener "+quote(l.name),
				"tls.certificateRefs are ignored in Passthrough mode: the backend terminates TLS")
		}
		return
	}
	if len(l.tls.CertificateRefs) == 0 {
		l.cond.fail("ResolvedRefs", string(gwv1.ListenerReasonInvalidCertificateRef),
			"tls.certificateRefs is empty: a terminating listener needs a certificate")
		l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), "no valid certificate")
		return
	}
	owner := l.ownerKey()
	for i, ref := range l.tls.CertificateRefs {
		cert, reason, msg := t.resolveCertificateRef(owner, ref, true)
		if cert == nil {
			l.cond.fail("ResolvedRefs", string(reason), fmt.Sprintf("tls.certificateRefs[%d]: %s", i, msg))
			continue
		}
		if !t.opts.Now.IsZero() && cert.NotAfter.Before(t.opts.Now.Time) {
			t.noteKind(NoteCertificateExpired, SeverityWarning, owner, "listener "+quote(l.name),
				fmt.Sprintf("certificate in Secret %s expired at %s; clients will refuse it", cert.Secret, cert.NotAfter.UTC().Format("2006-01-02T15:04:05Z")))
		}
		lt.Certificates = append(lt.Certificates, cert)
	}
	if len(lt.Certificates) == 0 {
		l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), "no valid certificate")
	}
}

// resolveCertificateRef loads and checks one reference to a certificate
// and its key: a listener's certificateRef, or the Gateway's backend client
// certificate. With profileKinds the owner's implementation profile may
// resolve kinds other than Secret; otherwise only core Secrets are
// supported. The reason is RefNotPermitted or InvalidCertificateRef.
func (t *translator) resolveCertificateRef(owner ObjectKey, ref gwv1.SecretObjectReference, profileKinds bool) (*Certificate, gwv1.ListenerConditionReason, string) {
	group, kind := "", "Secret"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	ns := owner.Namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	name := ns + "/" + string(ref.Name)
	// Permission comes first: InvalidCertificateRef "must be used only when
	// the reference is allowed ... If the reference is not allowed, the
	// reason RefNotPermitted must be used instead."
	if !t.refPermitted(reference{Group, owner.Kind, owner.Namespace, group, kind, ns, string(ref.Name)}) {
		return nil, gwv1.ListenerReasonRefNotPermitted,
			fmt.Sprintf("%s %s is in another namespace and no ReferenceGrant in %s allows %s %s/%s to use it", groupKind(group, kind), name, ns, owner.Kind, owner.Namespace, owner.Name)
	}
	if profileKinds {
		if cert, reason, msg, ok := t.profileCertificate(owner, group, kind, ns, string(ref.Name)); ok {
			return cert, reason, msg
		}
	}
	if group != "" || kind != "Secret" {
		return nil, gwv1.ListenerReasonInvalidCertificateRef, fmt.Sprintf("%s %s: only core Secrets are supported", groupKind(group, kind), name)
	}
	sec := t.secrets[nsName{ns, string(ref.Name)}]
	if sec == nil {
		return nil, gwv1.ListenerReasonInvalidCertificateRef, "Secret " + name + " not found"
	}
	cert, err := parseTLSSecret(sec)
	if err != nil {
		return nil, gwv1.ListenerReasonInvalidCertificateRef, "Secret " + name + ": " + err.Error()
	}
	return cert, "", ""
}

// parseTLSSecret checks a kubernetes.io/tls Secret: PEM certificate chain,
// PEM private key (RSA, ECDSA or Ed25519), and that they belong together.
func parseTLSSecret(sec *corev1.Secret) (*Certificate, error) {
	crt, key := sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey]
	if len(crt) == 0 || len(key) == 0 {
		return nil, fmt.Errorf("must have non-empty %s and %s", corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	}
	if b, _ := pem.Decode(crt); b == nil {
		return nil, fmt.Errorf("%s is not PEM encoded", corev1.TLSCertKey)
	}
	if b, _ := pem.Decode(key); b == nil {
		return nil, fmt.Errorf("%s is not PEM encoded", corev1.TLSPrivateKeyKey)
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return nil, fmt.Errorf("invalid certificate or key: %s", strings.TrimPrefix(err.Error(), "tls: "))
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("invalid certificate: %w", err)
	}
	names := leaf.DNSNames
	if len(names) == 0 && leaf.Subject.CommonName != "" {
		names = []string{leaf.Subject.CommonName}
	}
	clientAuth := len(leaf.ExtKeyUsage) == 0 || slices.ContainsFunc(leaf.ExtKeyUsage, func(u x509.ExtKeyUsage) bool {
		return u == x509.ExtKeyUsageClientAuth || u == x509.ExtKeyUsageAny
	})
	return &Certificate{Secret: sec.Namespace + "/" + sec.Name, DNSNames: names, NotAfter: leaf.NotAfter, CertPEM: crt, KeyPEM: key,
		ClientAuth: clientAuth}, nil
}

// applyFrontendValidation resolves spec.tls.frontend client certificate
// validation for the Gateway's terminating listeners (default, then perPort).
func (t *translator) applyFrontendValidation(g *gatewayState) {
	tlsCfg := g.obj.Spec.TLS
	if tlsCfg == nil || tlsCfg.Frontend == nil {
		return
	}
	for _, l := range g.merged {
		if !terminatesTLS(l) || l.tlsTable == nil {
			continue
		}
		v := tlsCfg.Frontend.Default.Validation
		for _, pp := range tlsCfg.Frontend.PerPort {
			if int32(pp.Port) == l.port {
				v = pp.TLS.Validation
			}
		}
		if v == nil {
			continue
		}
		mode := gwv1.AllowValidOnly
		if v.Mode != "" {
			mode = v.Mode
		}
		l.tlsTable.ClientValidationMode = string(mode)
		valid := 0
		for i, ref := range v.CACertificateRefs {
			pemData, name, reason, msg := t.resolveCARef(g.key, ref)
			if pemData == nil {
				l.cond.fail("ResolvedRefs", reason, fmt.Sprintf("spec.tls.frontend caCertificateRefs[%d]: %s", i, msg))
				continue
			}
			valid++
			l.tlsTable.ClientCAs = append(l.tlsTable.ClientCAs, pemData...)
			l.tlsTable.ClientCARefs = append(l.tlsTable.ClientCARefs, name)
		}
		if valid == 0 {
			l.cond.fail("Accepted", string(gwv1.ListenerReasonNoValidCACertificate), "no valid CA certificate for client validation")
			l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), "no valid CA certificate for client validation")
		}
	}
	if where := insecureFallbackAt(tlsCfg.Frontend); where != "" {
		g.cond.set(string(gwv1.GatewayConditionInsecureFrontendValidationMode), metav1.ConditionTrue,
			string(gwv1.GatewayReasonConfigurationChanged), "client certificate validation allows insecure fallback ("+where+")")
	}
}

// insecureFallbackAt names where frontend validation is set to
// AllowInsecureFallback ("" when nowhere). The spec raises the condition
// when the mode is "changed ... to AllowInsecureFallback, either at the
// Gateway level or via a per-port override".
func insecureFallbackAt(f *gwv1.FrontendTLSConfig) string {
	var where []string
	if v := f.Default.Validation; v != nil && v.Mode == gwv1.AllowInsecureFallback {
		where = append(where, "spec.tls.frontend.default")
	}
	for _, pp := range f.PerPort {
		if v := pp.TLS.Validation; v != nil && v.Mode == gwv1.AllowInsecureFallback {
			where = append(where, fmt.Sprintf("spec.tls.frontend.perPort port %d", pp.Port))
		}
	}
	return strings.Join(where, ", ")
}

// resolveCARef loads the CA bundle of a frontend caCertificateRef: ca.crt
// of a ConfigMap or Secret (in another namespace only with a ReferenceGrant),
// or a ClusterTrustBundle, which is cluster-scoped: "the namespace field MUST
// be unset", and no ReferenceGrant applies.
func (t *translator) resolveCARef(owner ObjectKey, ref gwv1.ObjectReference) ([]byte, string, string, string) {
	ns := owner.Namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	name := ns + "/" + string(ref.Name)
	group, kind := string(ref.Group), string(ref.Kind)
	if isTrustBundle(group, kind) {
		name = string(ref.Name)
		if ref.Namespace != nil && *ref.Namespace != "" {
			return nil, name, string(gwv1.ListenerReasonInvalidCACertificateRef),
				"ClusterTrustBundle " + name + " is cluster-scoped: namespace must be unset"
		}
	}
	data, known, what, msg := t.caBundle(group, kind, ns, string(ref.Name))
	if !known {
		return nil, name, string(gwv1.ListenerReasonInvalidCACertificateKind),
			fmt.Sprintf("%s %s: only %s are supported", groupKind(group, kind), name, caKinds)
	}
	if !isTrustBundle(group, kind) && !t.refPermitted(reference{Group, owner.Kind, owner.Namespace, "", kind, ns, string(ref.Name)}) {
		return nil, name, string(gwv1.ListenerReasonRefNotPermitted),
			fmt.Sprintf("%s %s is in another namespace and no ReferenceGrant allows it", kind, name)
	}
	if data == nil {
		return nil, name, string(gwv1.ListenerReasonInvalidCACertificateRef), msg
	}
	return data, what, "", ""
}

// caKinds names the kinds caBundle loads, for messages.
const caKinds = "ConfigMap, Secret and certificates.k8s.io/ClusterTrustBundle"

// isTrustBundle reports whether group and kind name a ClusterTrustBundle.
func isTrustBundle(group, kind string) bool {
	return group == certificatesv1.GroupName && kind == "ClusterTrustBundle"
}

// caBundle loads the CA bundle a caCertificateRef names, the one path of
// frontend validation, BackendTLSPolicy and XBackend: key ca.crt of a
// ConfigMap or Secret in ns, or spec.trustBundle of a ClusterTrustBundle
// (cluster-scoped: ns is not used). known is false for any other kind. When
// the object is missing or holds no valid certificate, data is nil and msg
// says why; what names the object ("ConfigMap ns/name") for CARefs.
func (t *translator) caBundle(group, kind, ns, name string) (data []byte, known bool, what, msg string) {
	var field string
	switch {
	case group == "" && kind == "ConfigMap":
		what, field = "ConfigMap "+ns+"/"+name, "ca.crt"
		cm := t.configMaps[nsName{ns, name}]
		if cm == nil {
			return nil, true, what, what + " not found"
		}
		data = []byte(cm.Data["ca.crt"])
	case group == "" && kind == "Secret":
		what, field = "Secret "+ns+"/"+name, "ca.crt"
		sec := t.secrets[nsName{ns, name}]
		if sec == nil {
			return nil, true, what, what + " not found"
		}
		data = sec.Data["ca.crt"]
	case isTrustBundle(group, kind):
		what, field = "ClusterTrustBundle "+name, "spec.trustBundle"
		b := t.trustBundles[name]
		if b == nil {
			return nil, true, what, what + " not found"
		}
		data = []byte(b.Spec.TrustBundle)
	default:
		return nil, false, "", ""
	}
	if err := checkCABundle(data, field); err != nil {
		return nil, true, what, what + ": " + err.Error()
	}
	return data, true, what, ""
}

// checkCABundle requires at least one parseable PEM certificate in field
// ("ca.crt", "spec.trustBundle").
func checkCABundle(data []byte, field string) error {
	if len(data) == 0 {
		if field == "ca.crt" {
			return fmt.Errorf("key ca.crt is missing or empty")
		}
		return fmt.Errorf("%s is empty", field)
	}
	certs, err := ParsePEMCertificates(data)
	if err != nil {
		return fmt.Errorf("%s holds an invalid certificate: %w", field, err)
	}
	if len(certs) == 0 {
		return fmt.Errorf("%s holds no PEM certificate", field)
	}
	return nil
}

// ParsePEMCertificates parses every CERTIFICATE block of data in order
// (other blocks are skipped): a chain leaf first, or a CA bundle. It fails
// on the first block that does not parse, and returns none without error
// when data holds no certificate.
func ParsePEMCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return certs, nil
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
}

func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
