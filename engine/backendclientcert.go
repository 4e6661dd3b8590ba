package engine

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// The Gateway's client certificate to backends (spec.tls.backend,
// GatewayBackendTLS): resolved here into the Gateway's ResolvedRefs
// condition, and given in the routing table to every backend the Gateway
// reaches over TLS (a BackendTLSPolicy applies).

// backendClientCertificateRef is the Gateway's
// spec.tls.backend.clientCertificateRef (nil: not set).
func backendClientCertificateRef(gw *gwv1.Gateway) *gwv1.SecretObjectReference {
	if tc := gw.Spec.TLS; tc != nil && tc.Backend != nil {
		return tc.Backend.ClientCertificateRef
	}
	return nil
}

// resolveBackendClientCertificate resolves spec.tls.backend.clientCertificateRef
// as the spec asks: a cross-namespace reference without a ReferenceGrant is
// ResolvedRefs=False RefNotPermitted; a reference that cannot be resolved
// (missing Secret, a group or kind other than core Secret, a Secret without
// a valid tls.crt and tls.key) is ResolvedRefs=False
// InvalidClientCertificateRef. Neither changes Accepted or Programmed ("This
// condition does not directly impact the Gateway's Accepted or Programmed
// conditions"); the Gateway then presents no client certificate. An expired
// certificate, or one not meant for client authentication, is a valid
// reference with a warning.
func (t *translator) resolveBackendClientCertificate(g *gatewayState) {
	ref := backendClientCertificateRef(g.obj)
	if ref == nil || g.pending() {
		return
	}
	const scope = "spec.tls.backend.clientCertificateRef"
	cert, reason, msg := t.resolveCertificateRef(g.key, *ref, false)
	if cert == nil {
		r := gwv1.GatewayReasonInvalidClientCertificateRef
		if reason == gwv1.ListenerReasonRefNotPermitted {
			r = gwv1.GatewayReasonRefNotPermitted
		}
		g.cond.fail(string(gwv1.GatewayConditionResolvedRefs), string(r), scope+": "+msg+"; no client certificate is presented to backends")
		return
	}
	g.backendCert = cert
	if !t.opts.Now.IsZero() && cert.NotAfter.Before(t.opts.Now.Time) {
		t.noteKind(NoteCertificateExpired, SeverityWarning, g.key, scope,
			fmt.Sprintf("client certificate in Secret %s expired at %s; backends that verify it will refuse it", cert.Secret, cert.NotAfter.UTC().Format("2006-01-02T15:04:05Z")))
	}
	if !cert.ClientAuth {
		t.noteKind(NoteNotForClientAuth, SeverityWarning, g.key, scope,
			"certificate in Secret "+cert.Secret+" is not for client authentication (its extended key usage lacks clientAuth); backends that verify it will refuse it")
	}
}

// finishGatewayResolvedRefs sets the Gateway's ResolvedRefs condition, which
// gwdev writes only on a Gateway with a clientCertificateRef: the
// reference's own failure (set by resolveBackendClientCertificate) comes
// first, then the summary of the Gateway's own listeners
// (ListenersNotResolved), else True.
func (t *translator) finishGatewayResolvedRefs(g *gatewayState) {
	if backendClientCertificateRef(g.obj) == nil || g.pending() {
		return
	}
	typ := string(gwv1.GatewayConditionResolvedRefs)
	var bad []string
	for _, l := range g.own {
		if l.cond.isFalse(string(gwv1.ListenerConditionResolvedRefs)) {
			bad = append(bad, l.name)
		}
	}
	if len(bad) > 0 {
		g.cond.fail(typ, string(gwv1.GatewayReasonListenersNotResolved), "listeners "+joinQuoted(bad)+" have unresolved references")
	}
	g.cond.setDefault(typ, metav1.ConditionTrue, string(gwv1.GatewayReasonResolvedRefs), "all references are resolved")
}

// presentClientCertificate gives cert to every backend the Gateway reaches
// over TLS: the backends (and mirrors) with a BackendTLSPolicy of the rules
// of its HTTP and HTTPS listeners and of its TLS listeners that terminate.
// Passthrough and TCP/UDP listeners make no TLS connection of their own.
// Rules and backends may be shared with other Gateways, so the ones that
// change are copied.
func presentClientCertificate(gt *GatewayTable, cert *Certificate) {
	c := &clientCertCopier{cert: cert, tls: map[*BackendTLS]*BackendTLS{},
		backends: map[*Backend]*Backend{}, rules: map[*RouteRule]*RouteRule{}}
	for _, p := range gt.Ports {
		for _, l := range p.Listeners {
			if l.TLS != nil && l.TLS.Mode == table.TLSModePassthrough {
				continue
			}
			for _, vh := range l.VirtualHosts {
				for i, r := range vh.Rules {
					vh.Rules[i] = c.rule(r)
				}
			}
			for _, sr := range l.TLSRoutes {
				sr.Backends, _ = c.backendList(sr.Backends) // each listener has its own SNIRoute entries
			}
		}
	}
}

// clientCertCopier copies rules and backends of one Gateway's table that
// need its client certificate, each once.
type clientCertCopier struct {
	cert     *Certificate
	tls      map[*BackendTLS]*BackendTLS
	backends map[*Backend]*Backend
	rules    map[*RouteRule]*RouteRule
}

// rule returns r, or a copy whose backends present the certificate.
func (c *clientCertCopier) rule(r *RouteRule) *RouteRule {
	if r == nil {
		return nil
	}
	if out, ok := c.rules[r]; ok {
		return out
	}
	out := r
	backends, bChanged := c.backendList(r.Backends)
	mirrors, mChanged := c.backendList(r.Mirrors)
	if bChanged || mChanged {
		cp := *r
		cp.Backends, cp.Mirrors = backends, mirrors
		out = &cp
	}
	c.rules[r] = out
	return out
}

// backendList maps backends through backend; changed reports whether any
// differs (otherwise bs itself is returned).
func (c *clientCertCopier) backendList(bs []*Backend) (out []*Backend, changed bool) {
	for i, b := range bs {
		nb := c.backend(b)
		if nb != b && !changed {
			changed = true
			out = slices.Clone(bs[:i])
		}
		if changed {
			out = append(out, nb)
		}
	}
	if !changed {
		return bs, false
	}
	return out, true
}

// backend returns b, or a copy that presents the certificate when b (or
// one of its mirrors) speaks TLS.
func (c *clientCertCopier) backend(b *Backend) *Backend {
	if b == nil {
		return nil
	}
	if out, ok := c.backends[b]; ok {
		return out
	}
	out := b
	mirrors, changed := c.backendList(b.Mirrors)
	if b.TLS != nil || changed {
		cp := *b
		cp.Mirrors = mirrors
		if b.TLS != nil {
			cp.TLS = c.backendTLS(b.TLS)
		}
		out = &cp
	}
	c.backends[b] = out
	return out
}

// backendTLS returns a copy of a policy's settings with the certificate.
func (c *clientCertCopier) backendTLS(t *BackendTLS) *BackendTLS {
	if out, ok := c.tls[t]; ok {
		return out
	}
	if t.ClientCertificate != nil {
		return t // an XBackend's own (ClientAndServer)
	}
	cp := *t
	cp.ClientCertificate = c.cert
	c.tls[t] = &cp
	return &cp
}
