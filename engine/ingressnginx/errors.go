package ingressnginx

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file is the error family: custom-http-errors (answers of the
// listed codes replaced by the default backend's) and default-backend (the
// Service that answers when a location's own has no endpoints).

// parseIngressErrorCodes reads custom-http-errors: statuses separated by
// commas. A value that is not a status is ignored with a warning.
func parseIngressErrorCodes(v string, warn func(name, msg string)) []int {
	var codes []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 || n > 599 {
			warn("custom-http-errors", "invalid status "+strconv.Quote(strings.TrimSpace(f))+"; ignored")
			continue
		}
		if !slices.Contains(codes, n) {
			codes = append(codes, n)
		}
	}
	return codes
}

// ingressErrorPages is custom-http-errors (nginx's proxy_intercept_errors
// and error_page): the location's answers of the listed statuses are
// replaced by the default-backend annotation's Service's answer, or, with
// none, by the answer of ingress-nginx's own default backend (404).
func (t *translator) ingressErrorPages(r *engine.RouteRule, l *nginxLocation, a *ingressAnnotations) {
	if len(a.errorCodes) == 0 || l.ing == nil {
		return
	}
	ep := &table.ErrorPages{Codes: a.errorCodes, From: "annotation " + AnnotationPrefix + "custom-http-errors"}
	if svc := t.tr.Service(l.ns, a.defaultBackend); a.defaultBackend != "" && svc != nil && len(svc.Spec.Ports) > 0 {
		ep.Backend = t.tr.ServiceBackend(r.Name+"/error-pages", svc, svc.Spec.Ports[0])
		ep.Backend.Target.Why = "custom-http-errors: default-backend " + svc.Namespace + "/" + svc.Name + " answers (" + ep.Backend.Target.Why + ")"
	}
	r.ErrorPages = ep
}

// ingressDefaultBackend is default-backend: its Service (first port)
// serves the location when the location's Service is missing or has no
// active endpoint (EndpointSlices without a ready one). gwdev decides this
// from the manifests, as it resolves every backend; without the annotation
// a Service whose slices have no ready endpoint is served by gwdev's echo
// backend (its rule for every front end). With custom-http-errors it also
// answers the listed statuses (ingressErrorPages).
func (t *translator) ingressDefaultBackend(r *engine.RouteRule, l *nginxLocation, a *ingressAnnotations) {
	if a.defaultBackend == "" || l.ing == nil {
		return
	}
	svc := t.tr.Service(l.ns, a.defaultBackend)
	if svc == nil || len(svc.Spec.Ports) == 0 {
		t.noteAt("", engine.SeverityWarning, l.ing.key, engine.AnnotationField(AnnotationPrefix+"default-backend"), "", "annotation "+AnnotationPrefix+"default-backend: Service "+l.ns+"/"+a.defaultBackend+
			" not found or without ports; ingress-nginx ignores it")
		return
	}
	down := r.DirectStatus == 503 && r.Backends == nil
	if !down && len(r.Backends) == 1 {
		b := r.Backends[0]
		slices := t.tr.EndpointSlices(b.Service.Namespace, b.Service.Name)
		down = b.Target != nil && b.Target.Kind == engine.TargetEcho && len(slices) > 0
	}
	if !down {
		return
	}
	fb := t.tr.ServiceBackend(r.Name, svc, svc.Spec.Ports[0])
	fb.Target.Why = "the location's Service has no active endpoint: default-backend " + svc.Namespace + "/" + svc.Name + " serves (" + fb.Target.Why + ")"
	r.DirectStatus, r.DirectReason = 0, ""
	r.Backends = []*engine.Backend{fb}
}
