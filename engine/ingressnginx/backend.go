package ingressnginx

import (
	"cmp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file is the backend family: the location's Service port
// (backend-protocol, service ports by name or number), cookie affinity
// (affinity, session-cookie-*), proxy timeouts (proxy-*-timeout) and the
// request body limit (proxy-body-size, in nginx's size units).

// nginxBackend sets the location's backend: the Ingress backend's Service
// port, or a direct answer. The default backend answers 404 and a backend
// whose Service or port is missing 503, as ingress-nginx does.
func (t *translator) nginxBackend(r *engine.RouteRule, l *nginxLocation) {
	if l.backend == nil {
		r.DirectStatus, r.DirectReason = 404, "no Ingress path matches: ingress-nginx's default backend answers 404"
		return
	}
	svcRef := l.backend.Service
	if svcRef == nil {
		r.DirectStatus, r.DirectReason = 503, "the backend is a resource, which ingress-nginx does not serve: 503"
		t.note(engine.SeverityWarning, l.ing.key, l.field, "backend: a resource backend is not served by ingress-nginx (503)")
		return
	}
	svc := t.tr.Service(l.ns, svcRef.Name)
	if svc == nil {
		r.DirectStatus, r.DirectReason = 503, "Service "+l.ns+"/"+svcRef.Name+" not found: ingress-nginx answers 503"
		t.noteKind(engine.NoteRefNotFound, engine.SeverityWarning, l.ing.key, l.field, "backend Service "+l.ns+"/"+svcRef.Name+" not found: ingress-nginx answers 503")
		return
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if svcRef.Port.Name != "" && p.Name == svcRef.Port.Name || svcRef.Port.Name == "" && p.Port == svcRef.Port.Number {
			sp = p
			break
		}
	}
	if sp == nil {
		port := svcRef.Port.Name
		if port == "" {
			port = itoa(int(svcRef.Port.Number))
		}
		r.DirectStatus, r.DirectReason = 503, "Service "+l.ns+"/"+svcRef.Name+" has no port "+port+": ingress-nginx answers 503"
		t.note(engine.SeverityWarning, l.ing.key, l.field, "backend Service "+l.ns+"/"+svcRef.Name+" has no port "+port+": ingress-nginx answers 503")
		return
	}
	b := t.tr.ServiceBackend(r.Name, svc, *sp)
	b.HTTP2 = b.HTTP2 || l.ing.ann.grpc || engine.SpeaksH2C(b.AppProtocol)
	if l.ing.ann.backendTLS {
		b.TLS = &table.BackendTLS{Policy: "annotation " + AnnotationPrefix + "backend-protocol", NoVerify: true}
	}
	r.Backends = []*engine.Backend{b}
}

// nginxSize parses an nginx size: bytes, or a number with k, m or g
// (either case).
func nginxSize(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	if v != "" {
		switch v[len(v)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * mult, true
}

// parseIngressAffinity reads affinity cookie's session-cookie-*
// annotations: the cookie is a session cookie unless max-age or expires
// (seconds) is set.
func parseIngressAffinity(str func(string) string, number func(string, int) int, warn func(name, msg string)) *table.Session {
	s := &table.Session{Type: table.SessionCookie, Name: cmp.Or(str("session-cookie-name"), nginxAffinityCookieName),
		Path: str("session-cookie-path"), Lifetime: table.LifetimeSession}
	if d := cmp.Or(number("session-cookie-max-age", 0), number("session-cookie-expires", 0)); d > 0 {
		s.AbsoluteTimeout, s.Lifetime = time.Duration(d)*time.Second, table.LifetimePermanent
	}
	switch m := str("affinity-mode"); m {
	case "", "balanced", "persistent":
	default:
		warn("affinity-mode", "neither balanced nor persistent: "+strconv.Quote(m)+"; ingress-nginx uses balanced")
	}
	return s
}

// parseIngressTimeouts folds proxy-connect-timeout, proxy-send-timeout and
// proxy-read-timeout (seconds; nginx's defaults 5, 60, 60 for the ones not
// set) into one backend attempt timeout, their sum; nil when none is set.
func parseIngressTimeouts(str func(string) string, number func(string, int) int) *table.Timeouts {
	if str("proxy-connect-timeout") == "" && str("proxy-send-timeout") == "" && str("proxy-read-timeout") == "" {
		return nil
	}
	sec := func(name string, def time.Duration) time.Duration {
		return time.Duration(number(name, int(def/time.Second))) * time.Second
	}
	return &table.Timeouts{BackendRequest: sec("proxy-connect-timeout", nginxConnectTimeout) +
		sec("proxy-send-timeout", nginxSendReadTimeout) + sec("proxy-read-timeout", nginxSendReadTimeout)}
}
