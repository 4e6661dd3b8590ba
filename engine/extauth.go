package engine

import (
	"fmt"
	"net/textproto"
	"net/url"
	"path"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// resolveExternalAuth resolves filter i of a filter list (an ExternalAuth
// filter, GEP-1494): its backendRef like any backendRef of the route (kind,
// ReferenceGrant, Service and port; failures go to the route's ResolvedRefs),
// its HTTP/GRPC settings with defaults applied. unresolved is set when the
// backend is invalid: the filter MUST NOT be skipped, so the requests that
// reach it get an error instead of being forwarded unchecked.
func (t *translator) resolveExternalAuth(r *routeState, where string, i int, f *gwv1.HTTPExternalAuthFilter) (a *ExternalAuth, unresolved string) {
	name := fmt.Sprintf("%s/filter/%d/externalauth", where, i)
	b, fail := t.resolveBackendRef(r, name+"/backend", f.BackendRef, nil)
	a = &ExternalAuth{Name: name, Protocol: string(f.ExternalAuthProtocol), Backend: b}
	if f.ExternalAuthProtocol == gwv1.HTTPRouteExternalAuthGRPCProtocol && fail == nil {
		b.HTTP2 = true // Envoy's ext_authz gRPC service
	}
	if f.ForwardBody != nil {
		a.MaxBodySize = int(f.ForwardBody.MaxSize)
	}
	switch {
	case f.HTTPAuthConfig != nil:
		a.PathPrefix = sanitizeAuthPath(f.HTTPAuthConfig.Path)
		a.AllowedHeaders = canonicalHeaders(f.HTTPAuthConfig.AllowedRequestHeaders)
		a.AllowedResponseHeaders = canonicalHeaders(f.HTTPAuthConfig.AllowedResponseHeaders)
	case f.GRPCAuthConfig != nil:
		a.AllowedHeaders = canonicalHeaders(f.GRPCAuthConfig.AllowedRequestHeaders)
	}
	if fail != nil {
		fail.msg = fmt.Sprintf("%s: filters[%d]: ExternalAuth %s; matching requests get 500", where, i, fail.msg)
		r.refFailures = append(r.refFailures, *fail)
		return a, fail.msg
	}
	if b.Target != nil && b.Target.Kind == TargetEcho && b.Target.EchoAuthHeader == "" {
		t.noteKind(NoteEchoAuthAllowsAll, SeverityWarning, r.key, fmt.Sprintf("%s: filters[%d]", where, i), fmt.Sprintf(
			"the ExternalAuth backend %s is gwdev's echo backend, which allows every request; annotate the Service with %s: <header> to allow only requests carrying that header, or map it to a real auth server",
			serviceDisplay(b), EchoAuthHeaderAnnotation))
	}
	return a, ""
}

// serviceDisplay renders a backend's Service port for messages.
func serviceDisplay(b *Backend) string {
	return b.Service.Namespace + "/" + b.Service.Name + ":" + itoa(int(b.Port))
}

// sanitizeAuthPath makes http.path safe to put before a request path: it
// starts with "/", "." and ".." segments are resolved (never above "/"),
// and a trailing "/" is dropped so that "/auth/" + "/x" is "/auth/x".
// Percent escapes are kept as written.
func sanitizeAuthPath(p string) string {
	if p == "" {
		return ""
	}
	if u, err := url.PathUnescape(p); err == nil && strings.Contains(u, "..") {
		p = u // resolve escaped dot segments too
	}
	p = path.Clean("/" + p)
	return strings.TrimSuffix(p, "/")
}

// canonicalHeaders returns header names in canonical MIME form (nil for
// none).
func canonicalHeaders(in []string) []string {
	var out []string
	for _, h := range in {
		out = append(out, textproto.CanonicalMIMEHeaderKey(h))
	}
	return out
}

// authBackends lists the backends of ExternalAuth filters.
func authBackends(as []*ExternalAuth) []*Backend {
	var out []*Backend
	for _, a := range as {
		out = append(out, a.Backend)
	}
	return out
}
