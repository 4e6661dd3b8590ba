package watch

import (
	"net/netip"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gwdev/gwdev/engine/ingressnginx"
)

// This file holds the apiserver's rules for networking.k8s.io/v1 Ingress and
// IngressClass (k8s.io/kubernetes pkg/apis/networking/validation, which is
// not importable), written from its documented behaviour. Wording follows
// the apiserver's.

// ingressClassAnnotation is the deprecated annotation naming an Ingress's
// class (the ingress-nginx front end's constant).
const ingressClassAnnotation = ingressnginx.ClassAnnotation

// Path types of an Ingress path, as the apiserver lists them.
var supportedPathTypes = []string{
	string(networkingv1.PathTypeExact), string(networkingv1.PathTypePrefix), string(networkingv1.PathTypeImplementationSpecific),
}

// Sequences and suffixes the apiserver refuses in Exact and Prefix paths.
var (
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

// validateIngress checks an Ingress as the apiserver does on create: a
// default backend or rules, hosts, paths per pathType, backends, TLS and the
// class (field or annotation, not both).
func validateIngress(ing *networkingv1.Ingress) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if ing.Spec.IngressClassName != nil {
		if _, ok := ing.Annotations[ingressClassAnnotation]; ok {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(ingressClassAnnotation), ing.Annotations[ingressClassAnnotation],
				"can not be set when the class field is also set"))
		}
		for _, msg := range validation.IsDNS1123Subdomain(*ing.Spec.IngressClassName) {
			errs = append(errs, field.Invalid(spec.Child("ingressClassName"), *ing.Spec.IngressClassName, msg))
		}
	}
	if ing.Spec.DefaultBackend == nil && len(ing.Spec.Rules) == 0 {
		errs = append(errs, field.Invalid(spec, ing.Spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if ing.Spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(ing.Spec.DefaultBackend, spec.Child("defaultBackend"))...)
	}
	for i, r := range ing.Spec.Rules {
		path := spec.Child("rules").Index(i)
		if r.Host != "" {
			errs = append(errs, validateIngressHost(r.Host, path.Child("host"))...)
		}
		if r.HTTP != nil {
			errs = append(errs, validateHTTPIngressRule(r.HTTP, path.Child("http"))...)
		}
	}
	for i, tls := range ing.Spec.TLS {
		path := spec.Child("tls").Index(i)
		for j, h := range tls.Hosts {
			errs = append(errs, validateIngressHost(h, path.Child("hosts").Index(j))...)
		}
		if tls.SecretName != "" {
			for _, msg := range validation.IsDNS1123Subdomain(tls.SecretName) {
				errs = append(errs, field.Invalid(path.Child("secretName"), tls.SecretName, msg))
			}
		}
	}
	return errs
}

// validateIngressHost checks a rule or TLS host: a DNS subdomain, "*." and a
// subdomain for a wildcard, never an IP address.
func validateIngressHost(host string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := netip.ParseAddr(host); err == nil {
		return field.ErrorList{field.Invalid(path, host, "must be a DNS name, not an IP address")}
	}
	var msgs []string
	if strings.Contains(host, "*") {
		msgs = validation.IsWildcardDNS1123Subdomain(host)
	} else {
		msgs = validation.IsDNS1123Subdomain(host)
	}
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, host, msg))
	}
	return errs
}

// validateHTTPIngressRule checks the paths of a rule: at least one, each with
// a known pathType, a path valid for it and a backend.
func validateHTTPIngressRule(r *networkingv1.HTTPIngressRuleValue, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Paths) == 0 {
		errs = append(errs, field.Required(path.Child("paths"), ""))
	}
	for i, p := range r.Paths {
		pp := path.Child("paths").Index(i)
		errs = append(errs, validateIngressPath(p, pp)...)
		errs = append(errs, validateIngressBackend(&p.Backend, pp.Child("backend"))...)
	}
	return errs
}

// validateIngressPath checks a path against its pathType: Exact and Prefix
// paths are absolute and free of dot segments, double slashes and encoded
// slashes; an ImplementationSpecific path, when set, is absolute.
func validateIngressPath(p networkingv1.HTTPIngressPath, path *field.Path) field.ErrorList {
	if p.PathType == nil {
		return field.ErrorList{field.Required(path.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	switch *p.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(p.Path, "/") {
			return field.ErrorList{field.Invalid(path.Child("path"), p.Path, "must be an absolute path")}
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(p.Path, seq) {
				errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must not contain '"+seq+"'"))
			}
		}
		for _, suf := range invalidPathSuffixes {
			if strings.HasSuffix(p.Path, suf) {
				errs = append(errs, field.Invalid(path.Child("path"), p.Path, "cannot end with '"+suf+"'"))
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), p.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("pathType"), *p.PathType, supportedPathTypes))
	}
	return errs
}

// validateIngressBackend checks that a backend is a Service or a resource,
// not both, and the Service's name and port (a name or a number).
func validateIngressBackend(b *networkingv1.IngressBackend, path *field.Path) field.ErrorList {
	switch {
	case b.Service != nil && b.Resource != nil:
		return field.ErrorList{field.Invalid(path, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		var errs field.ErrorList
		if b.Resource.Kind == "" {
			errs = append(errs, field.Required(path.Child("resource", "kind"), ""))
		}
		if b.Resource.Name == "" {
			errs = append(errs, field.Required(path.Child("resource", "name"), ""))
		}
		return errs
	case b.Service == nil:
		return field.ErrorList{field.Invalid(path, "", "resource or service backend is required")}
	}
	var errs field.ErrorList
	svc := path.Child("service")
	if b.Service.Name == "" {
		errs = append(errs, field.Required(svc.Child("name"), ""))
	}
	for _, msg := range validation.IsDNS1035Label(b.Service.Name) {
		if b.Service.Name != "" {
			errs = append(errs, field.Invalid(svc.Child("name"), b.Service.Name, msg))
		}
	}
	port := b.Service.Port
	switch {
	case port.Name != "" && port.Number != 0:
		errs = append(errs, field.Invalid(svc.Child("port"), port, "cannot set both port name & port number"))
	case port.Name != "":
		for _, msg := range validation.IsValidPortName(port.Name) {
			errs = append(errs, field.Invalid(svc.Child("port", "name"), port.Name, msg))
		}
	case port.Number != 0:
		for _, msg := range validation.IsValidPortNum(int(port.Number)) {
			errs = append(errs, field.Invalid(svc.Child("port", "number"), port.Number, msg))
		}
	default:
		errs = append(errs, field.Required(svc.Child("port"), "port name or number is required"))
	}
	return errs
}

// validateIngressClass checks the controller (a domain-prefixed path of at
// most 250 characters) and the parameters reference.
func validateIngressClass(c *networkingv1.IngressClass) field.ErrorList {
	var errs field.ErrorList
	ctl := field.NewPath("spec", "controller")
	switch {
	case c.Spec.Controller == "":
		errs = append(errs, field.Required(ctl, ""))
	case len(c.Spec.Controller) > 250:
		errs = append(errs, field.TooLong(ctl, "", 250))
	default:
		errs = append(errs, validation.IsDomainPrefixedPath(ctl, c.Spec.Controller)...)
	}
	if p := c.Spec.Parameters; p != nil {
		pp := field.NewPath("spec", "parameters")
		if p.Kind == "" {
			errs = append(errs, field.Required(pp.Child("kind"), "kind is required"))
		}
		if p.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), "name is required"))
		}
		scope := networkingv1.IngressClassParametersReferenceScopeCluster
		if p.Scope != nil {
			scope = *p.Scope
		}
		switch scope {
		case networkingv1.IngressClassParametersReferenceScopeCluster:
			if p.Namespace != nil {
				errs = append(errs, field.Forbidden(pp.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
			}
		case networkingv1.IngressClassParametersReferenceScopeNamespace:
			if p.Namespace == nil {
				errs = append(errs, field.Required(pp.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
			}
		default:
			errs = append(errs, field.NotSupported(pp.Child("scope"), scope, []string{
				networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}))
		}
	}
	return errs
}
