package ingressnginx

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file converts what the ingress-nginx emulation serves into Gateway
// API objects (gwdev migrate). It reads the routing table the Ingress front
// end built, not the Ingresses again: a rule of the table becomes an
// HTTPRoute rule with the same match, filters and weighted backends, so the
// converted routes do what the emulation does wherever the Gateway API can
// say it, and each place it cannot is listed.

// Migration is the Gateway API version of a Result's Ingresses.
type Migration struct {
	// Objects are the Gateways, HTTPRoutes and ReferenceGrants, in output
	// order.
	Objects []MigratedObject
	// Dropped lists what was not carried over, by Ingress and source.
	Dropped []DroppedFeature
}

// MigratedObject is one object of a migration with the comment lines that
// go above it.
type MigratedObject struct {
	Object   metav1.Object
	Comments []string
	// IngressClass is the IngressClass a Gateway was made for ("" : the
	// object is no Gateway); gwdev migrate --compare pairs each class
	// with its Gateway by it.
	IngressClass string
}

// DroppedFeature is an annotation or behaviour of an Ingress that the
// converted routes do not reproduce.
type DroppedFeature struct {
	Ingress engine.ObjectKey
	Source  engine.Source
	// What names it: an annotation, or the behaviour ("rewrite-target").
	What string
	// Why says what ingress-nginx does and what to do instead.
	Why string
	// Security is true when What names an annotation the annotations
	// table marks Security: without it the converted route lets clients
	// in that ingress-nginx refused (gwdev migrate exits 1).
	Security bool
}

// securityFeature reports whether what (annotations joined by ", ", or a
// behaviour's name) names an annotation the annotations table marks
// Security.
func securityFeature(what string) bool {
	for _, name := range strings.Split(what, ", ") {
		short, ok := strings.CutPrefix(name, AnnotationPrefix)
		if !ok {
			continue
		}
		if an := ingressAnnotationNamed(short); an != nil && an.Security {
			return true
		}
	}
	return false
}

// MigrationOptions are choices gwdev migrate leaves to the user.
type MigrationOptions struct {
	// GatewayNamespace is where the Gateways go ("": default).
	GatewayNamespace string
	// GatewayClass is the Gateways' class ("": the IngressClass's name).
	GatewayClass string
}

// Migrate converts the ingress-nginx classes of res (one Gateway
// each) and their servers (an HTTPRoute per host, split in two when the
// HTTP side redirects to HTTPS) into Gateway API objects.
func Migrate(res *engine.Result, opts MigrationOptions) *Migration {
	m := &migrator{res: res, opts: opts, out: &Migration{}, grants: map[string]*gwv1.ReferenceGrant{}}
	m.opts.GatewayNamespace = cmp.Or(m.opts.GatewayNamespace, "default")
	m.reportAnnotations()
	for _, gt := range res.Table.Gateways {
		if gt.Gateway.Kind == "IngressClass" {
			m.class(gt)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.grants)) {
		m.out.Objects = append(m.out.Objects, MigratedObject{Object: m.grants[k],
			Comments: []string{"lets the routes and Gateway above refer across namespaces, as the Ingresses did"}})
	}
	slices.SortStableFunc(m.out.Dropped, func(a, b DroppedFeature) int {
		return cmp.Or(cmp.Compare(a.Ingress.String(), b.Ingress.String()), cmp.Compare(a.Source.Line, b.Source.Line), cmp.Compare(a.What, b.What))
	})
	return m.out
}

type migrator struct {
	res    *engine.Result
	opts   MigrationOptions
	out    *Migration
	grants map[string]*gwv1.ReferenceGrant
	// dropped holds the features noted per route being built; notes are
	// what was carried over with a difference, said next to the route.
	dropped []DroppedFeature
	notes   []string
}

// reportAnnotations lists every annotation of a served Ingress that the
// emulation does not reproduce either: the conversion cannot carry it.
func (m *migrator) reportAnnotations() {
	for _, ing := range m.res.Objects.Ingresses {
		if !ingressServed(ing) {
			continue
		}
		key := engine.ObjectKey{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
		for _, name := range slices.Sorted(maps.Keys(ing.Annotations)) {
			short, ok := strings.CutPrefix(name, AnnotationPrefix)
			if !ok {
				continue
			}
			an := ingressAnnotationNamed(short)
			why, unconvertible := ingressUnconvertible[short]
			switch {
			case an == nil:
				why = "not an annotation ingress-nginx documents"
			case unconvertible:
			case an.Test != "":
				continue // emulated: the rules say whether it was carried over
			default:
				why = "ingress-nginx: " + an.Nginx + "; gwdev emulates neither it nor its conversion: configure it with your Gateway implementation's policy or filter"
			}
			src := m.res.Objects.SourceOf(key).At("metadata.annotations[" + name + "]")
			m.out.Dropped = append(m.out.Dropped, DroppedFeature{Ingress: key, Source: src, What: name, Why: why, Security: securityFeature(name)})
		}
	}
	// A regex-mode path RE2 cannot compile is in no rule to convert.
	for _, f := range m.res.Findings {
		if f.Kind == engine.NoteRegexNotRE2 {
			m.out.Dropped = append(m.out.Dropped, DroppedFeature{Ingress: f.Object, Source: f.Source, What: "regular expression path",
				Why: f.Message + "; the converted route has no rule for it either, where a Gateway API implementation with PCRE-like regular expressions could serve it"})
		}
	}
}

// ingressUnconvertible are emulated annotations the rules cannot show as
// dropped (the table holds their effect, not them), with what to do.
var ingressUnconvertible = map[string]string{
	"default-backend": "ingress-nginx sends the location's requests to this Service while the location's Service has no endpoints; " +
		"the route names the Service the emulation chose now and the Gateway API has no fallback backend (it answers 503): use your implementation's policy, or keep the Service up",
}

// class converts one class: its Gateway, then a route per server.
func (m *migrator) class(gt *engine.GatewayTable) {
	className := gt.Gateway.Name
	gw := &gwv1.Gateway{TypeMeta: metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "Gateway"},
		ObjectMeta: metav1.ObjectMeta{Name: className, Namespace: m.opts.GatewayNamespace},
		Spec:       gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(cmp.Or(m.opts.GatewayClass, className))}}
	all := gwv1.NamespacesFromAll
	allowed := &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &all}}
	var httpL, httpsL *engine.ListenerTable
	for _, p := range gt.Ports {
		for _, l := range p.Listeners {
			lis := gwv1.Listener{Name: gwv1.SectionName(l.SectionName), Port: 80, Protocol: gwv1.HTTPProtocolType, AllowedRoutes: allowed}
			if l.Protocol == table.HTTPSProtocolType {
				httpsL = l
				lis.Port, lis.Protocol = 443, gwv1.HTTPSProtocolType
				lis.TLS = &gwv1.ListenerTLSConfig{}
				for _, c := range l.TLS.Certificates {
					ns, name, _ := strings.Cut(c.Secret, "/")
					ref := gwv1.SecretObjectReference{Name: gwv1.ObjectName(name)}
					if ns != m.opts.GatewayNamespace {
						n := gwv1.Namespace(ns)
						ref.Namespace = &n
						m.grant("Gateway", m.opts.GatewayNamespace, "", "Secret", ns)
					}
					lis.TLS.CertificateRefs = append(lis.TLS.CertificateRefs, ref)
				}
			} else {
				httpL = l
			}
			gw.Spec.Listeners = append(gw.Spec.Listeners, lis)
		}
	}
	m.out.Objects = append(m.out.Objects, MigratedObject{Object: gw, IngressClass: className, Comments: []string{
		"Gateway for IngressClass " + className + " (ingress-nginx): port 80 and, with the Ingresses' TLS certificates, 443"}})
	if httpL == nil {
		return
	}
	for i, vh := range httpL.VirtualHosts {
		var secure *engine.VirtualHost
		if httpsL != nil {
			secure = httpsL.VirtualHosts[i]
		}
		m.server(gw, vh, secure)
	}
}

// server converts one nginx server: the rules of its HTTP virtual host and,
// when they differ (HTTPS redirects), those of its HTTPS one.
func (m *migrator) server(gw *gwv1.Gateway, plain, secure *engine.VirtualHost) {
	m.dropped, m.notes = nil, nil
	plainRules, plainFrom := m.rules(plain)
	var secureRules []gwv1.HTTPRouteRule
	var secureFrom []engine.Source
	if secure != nil {
		secureRules, secureFrom = m.rules(secure)
	}
	name := "catch-all"
	if plain.Hostname != "" {
		name = strings.NewReplacer(".", "-", "*", "wildcard").Replace(plain.Hostname)
	}
	ns := m.routeNamespace(plain)
	switch {
	case secure == nil || reflect.DeepEqual(plainRules, secureRules):
		sections := []string{"http"}
		if secure != nil {
			sections = append(sections, "https")
		}
		m.route(gw, name, ns, plain.Hostname, sections, plainRules, plainFrom)
	default:
		m.route(gw, name+"-http", ns, plain.Hostname, []string{"http"}, plainRules, plainFrom)
		m.route(gw, name, ns, plain.Hostname, []string{"https"}, secureRules, secureFrom)
	}
	m.out.Dropped = append(m.out.Dropped, m.dropped...)
}

// routeNamespace is the namespace of the first Ingress serving the host.
func (m *migrator) routeNamespace(vh *engine.VirtualHost) string {
	for _, r := range vh.Rules {
		if r.Route.Kind == "Ingress" {
			return r.Route.Namespace
		}
	}
	return m.opts.GatewayNamespace
}

// route writes an HTTPRoute with the comments naming where its rules come
// from and what was not carried over.
func (m *migrator) route(gw *gwv1.Gateway, name, ns, host string, sections []string, rules []gwv1.HTTPRouteRule, from []engine.Source) {
	if len(rules) == 0 {
		return
	}
	hr := &gwv1.HTTPRoute{TypeMeta: metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	gns := gwv1.Namespace(gw.Namespace)
	for _, s := range sections {
		sn := gwv1.SectionName(s)
		ref := gwv1.ParentReference{Name: gwv1.ObjectName(gw.Name), SectionName: &sn}
		if gw.Namespace != ns {
			ref.Namespace = &gns
		}
		hr.Spec.ParentRefs = append(hr.Spec.ParentRefs, ref)
	}
	if host != "" {
		hr.Spec.Hostnames = []gwv1.Hostname{gwv1.Hostname(host)}
	}
	hr.Spec.Rules = rules
	for i := range hr.Spec.Rules {
		for j := range hr.Spec.Rules[i].Filters {
			if rm := hr.Spec.Rules[i].Filters[j].RequestMirror; rm != nil {
				if string(*rm.BackendRef.Namespace) != ns {
					m.grant("HTTPRoute", ns, "", "Service", string(*rm.BackendRef.Namespace))
				} else {
					rm.BackendRef.Namespace = nil
				}
			}
			if ea := hr.Spec.Rules[i].Filters[j].ExternalAuth; ea != nil {
				if string(*ea.BackendRef.Namespace) != ns {
					m.grant("HTTPRoute", ns, "", "Service", string(*ea.BackendRef.Namespace))
				} else {
					ea.BackendRef.Namespace = nil
				}
			}
		}
		for j := range hr.Spec.Rules[i].BackendRefs {
			br := &hr.Spec.Rules[i].BackendRefs[j]
			if br.Namespace != nil && string(*br.Namespace) != ns {
				m.grant("HTTPRoute", ns, "", "Service", string(*br.Namespace))
			} else {
				br.Namespace = nil
			}
		}
	}
	comments := []string{"HTTPRoute for host " + cmp.Or(host, "(any)") + " on " + strings.Join(sections, ", ") + "; rules in ingress-nginx's order, from:"}
	for i, s := range from {
		comments = append(comments, fmt.Sprintf("  rule %d: %s", i, s))
	}
	seen := map[string]bool{}
	for _, n := range m.notes {
		if !seen[n] {
			seen[n] = true
			comments = append(comments, "note: "+n)
		}
	}
	for _, d := range m.dropped {
		line := "not carried over: " + d.What + " (" + d.Ingress.String() + " " + d.Source.String() + "): " + d.Why
		if !seen[line] {
			seen[line] = true
			comments = append(comments, line)
		}
	}
	m.out.Objects = append(m.out.Objects, MigratedObject{Object: hr, Comments: comments})
}

// grant records a ReferenceGrant in toNS letting kind in fromNS refer to
// toKind objects.
func (m *migrator) grant(kind, fromNS, _ string, toKind, toNS string) {
	k := toNS + "/" + kind + "/" + fromNS + "/" + toKind
	if m.grants[k] != nil {
		return
	}
	m.grants[k] = &gwv1.ReferenceGrant{TypeMeta: metav1.TypeMeta{APIVersion: gwv1.GroupVersion.String(), Kind: "ReferenceGrant"},
		ObjectMeta: metav1.ObjectMeta{Name: strings.ToLower("from-" + kind + "-" + fromNS + "-to-" + toKind), Namespace: toNS},
		Spec: gwv1.ReferenceGrantSpec{
			From: []gwv1.ReferenceGrantFrom{{Group: gwv1.GroupName, Kind: gwv1.Kind(kind), Namespace: gwv1.Namespace(fromNS)}},
			To:   []gwv1.ReferenceGrantTo{{Group: "", Kind: gwv1.Kind(toKind)}},
		}}
}

// rules converts a virtual host's rules, in order; a rule the Gateway API
// answers by itself (the default backend's 404) is left out.
func (m *migrator) rules(vh *engine.VirtualHost) ([]gwv1.HTTPRouteRule, []engine.Source) {
	var out []gwv1.HTTPRouteRule
	var from []engine.Source
	for _, r := range vh.Rules {
		if r.DirectStatus == 404 {
			continue
		}
		if r.DirectStatus != 0 {
			m.drop(r, "backend", fmt.Sprintf("ingress-nginx answers %d (%s); the route has no backend for it", r.DirectStatus, r.DirectReason))
			continue
		}
		if r.Policy != nil {
			for _, rb := range []*table.RBAC{r.Policy.HostRBAC, r.Policy.RBAC} {
				if rb != nil {
					m.drop(r, strings.Join(rb.From, ", "), "ingress-nginx refuses clients by address with 403; the Gateway API has no client address filter: use your implementation's policy (the route lets every client in)")
				}
			}
			m.dropPolicy(r, r.Policy)
		}
		rule := gwv1.HTTPRouteRule{Matches: []gwv1.HTTPRouteMatch{migrateMatch(r.HTTP)}}
		m.ruleSettings(r, &rule)
		for _, f := range r.Filters {
			if prefix, ok := prefixRewrite(f); ok {
				pt, v, repl := gwv1.PathMatchPathPrefix, prefix, "/"
				rule.Matches[0].Path = &gwv1.HTTPPathMatch{Type: &pt, Value: &v}
				rule.Filters = append(rule.Filters, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{
					Path: &gwv1.HTTPPathModifier{Type: gwv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: &repl}}})
				path := ingressPath(r.HTTP.Path)
				m.notes = append(m.notes, "rewrite-target of path "+path+" became a PathPrefix "+prefix+
					" match with a ReplacePrefixMatch / URLRewrite: "+prefix+"/x reaches the backend as /x and "+prefix+" as /, as with ingress-nginx")
				m.dropAt(r, "", "case-insensitive match of path "+path, "ingress-nginx matches the regex ignoring case; the PathPrefix "+prefix+
					" it became matches case-sensitively, so a request for "+strings.ToUpper(prefix)+"/x gets another rule's answer (or 404)")
				continue
			}
			rule.Filters = append(rule.Filters, m.filters(r, f)...)
		}
		redirects := slices.ContainsFunc(rule.Filters, func(f gwv1.HTTPRouteFilter) bool { return f.RequestRedirect != nil })
		if redirects {
			rule.Filters = slices.DeleteFunc(rule.Filters, func(f gwv1.HTTPRouteFilter) bool { return f.RequestRedirect == nil })
		}
		for _, b := range r.Backends {
			if redirects {
				break // a redirect answers: the spec forbids backendRefs next to it
			}
			if b.HTTP2 && b.TLS == nil && !engine.SpeaksH2C(b.AppProtocol) {
				m.drop(r, AnnotationPrefix+"backend-protocol", "ingress-nginx speaks HTTP/2 without TLS (gRPC) to "+b.Service.String()+
					"; a route cannot say so: set appProtocol kubernetes.io/h2c on the Service's port")
			}
			if b.TLS != nil && b.TLS.NoVerify {
				m.drop(r, AnnotationPrefix+"backend-protocol", "ingress-nginx speaks TLS to "+b.Service.String()+
					" without verifying its certificate; the Gateway API always verifies: write a BackendTLSPolicy for the Service with its CA and hostname")
			}
			port := gwv1.PortNumber(b.Port)
			ns := gwv1.Namespace(b.Service.Namespace)
			w := b.Weight
			rule.BackendRefs = append(rule.BackendRefs, gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{
				BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(b.Service.Name), Namespace: &ns, Port: &port},
				Weight:                 &w}})
		}
		out = append(out, rule)
		from = append(from, r.Source)
	}
	return out, from
}

// rewritePattern is the regex location of the rewrite example of
// ingress-nginx's documentation, "<prefix>(/|$)(.*)" with "/$2".
var rewritePattern = regexp.MustCompile(`^\(\?i:((?:/[A-Za-z0-9._~-]+)+)\(/\|\$\)\(\.\*\)\)\(\?s:\.\*\)$`)

// prefixRewrite reports whether f is that rewrite, which a PathPrefix
// match with ReplacePrefixMatch "/" says in the Gateway API, and its prefix.
func prefixRewrite(f table.Filter) (string, bool) {
	if f.URLRewrite == nil || f.URLRewrite.Path == nil || f.URLRewrite.Path.Type != table.ReplaceRegexMatch || f.URLRewrite.Path.Value != "/${2}" {
		return "", false
	}
	m := rewritePattern.FindStringSubmatch(f.URLRewrite.Path.Pattern)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// ingressPath is the Ingress path a rule's match was compiled from: a
// regex location's pattern without the case-insensitive group and the
// rest-of-path suffix regexLocationMatch adds, else the match's value.
func ingressPath(pm table.PathMatch) string {
	if pm.Type == table.MatchRegularExpression {
		if inner, ok := strings.CutPrefix(pm.Value, "(?i:"); ok {
			if inner, ok := strings.CutSuffix(inner, ")"+anyRest); ok {
				return inner
			}
		}
	}
	return pm.Value
}

// migrateMatch is a table match as an HTTPRouteMatch.
func migrateMatch(h *table.HTTPMatch) gwv1.HTTPRouteMatch {
	pt, v := gwv1.PathMatchType(h.Path.Type), h.Path.Value
	if h.Path.Type == table.MatchPathPrefix {
		v = cmp.Or(v, "/")
	}
	if h.Path == regexLocationMatch("/") { // every path: said plainly
		pt, v = gwv1.PathMatchPathPrefix, "/"
	}
	m := gwv1.HTTPRouteMatch{Path: &gwv1.HTTPPathMatch{Type: &pt, Value: &v}}
	for _, hm := range h.Headers {
		t := gwv1.HeaderMatchType(hm.Type)
		m.Headers = append(m.Headers, gwv1.HTTPHeaderMatch{Type: &t, Name: gwv1.HTTPHeaderName(hm.Name), Value: hm.Value})
	}
	return m
}

// filters converts a table filter; what the Gateway API cannot say is
// dropped and noted.
func (m *migrator) filters(r *engine.RouteRule, f table.Filter) []gwv1.HTTPRouteFilter {
	switch {
	case f.RequestRedirect != nil:
		red := f.RequestRedirect
		out := &gwv1.HTTPRequestRedirectFilter{StatusCode: &red.StatusCode}
		if red.Scheme != "" {
			out.Scheme = &red.Scheme
		}
		if red.Hostname != "" {
			h := gwv1.PreciseHostname(red.Hostname)
			out.Hostname = &h
		}
		if red.Port != 0 && !(red.Scheme == "https" && red.Port == 443) && !(red.Scheme == "http" && red.Port == 80) {
			p := gwv1.PortNumber(red.Port)
			out.Port = &p
		}
		if p := red.Path; p != nil {
			switch p.Type {
			case table.ReplaceFullPath:
				v := p.Value
				out.Path = &gwv1.HTTPPathModifier{Type: gwv1.FullPathHTTPPathModifier, ReplaceFullPath: &v}
			case table.TrimTrailingSlash:
				m.dropAt(r, "spec.tls", "ssl-redirect trailing slash", "ingress-nginx drops a trailing slash in its HTTPS redirect (unless preserve-trailing-slash); the RequestRedirect keeps the path as it is")
			}
		}
		if red.NoQuery {
			m.drop(r, "redirect query", "ingress-nginx's redirect leaves the request's query out; a RequestRedirect keeps it")
		}
		return []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterRequestRedirect, RequestRedirect: out}}
	case f.URLRewrite != nil:
		if p := f.URLRewrite.Path; p != nil && p.Type == table.ReplaceRegexMatch {
			m.drop(r, AnnotationPrefix+"rewrite-target", "ingress-nginx rewrites path "+ingressPath(r.HTTP.Path)+" to "+engine.Quote(p.Value)+" with the regex's groups; the Gateway API has no regex rewrite: use a PathPrefix match with a ReplacePrefixMatch URLRewrite where the rewrite drops a prefix")
		}
		return nil
	case f.RequestHeaderModifier != nil:
		var out []gwv1.HTTPRouteFilter
		hm := &gwv1.HTTPHeaderFilter{}
		for _, h := range f.RequestHeaderModifier.Set {
			if h.Name == "Host" {
				host := gwv1.PreciseHostname(h.Value)
				out = append(out, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterURLRewrite, URLRewrite: &gwv1.HTTPURLRewriteFilter{Hostname: &host}})
				continue
			}
			hm.Set = append(hm.Set, gwv1.HTTPHeader{Name: gwv1.HTTPHeaderName(h.Name), Value: h.Value})
		}
		if len(hm.Set) > 0 {
			out = append(out, gwv1.HTTPRouteFilter{Type: gwv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: hm})
		}
		return out
	}
	if f.CORS != nil {
		return []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterCORS, CORS: m.migrateCORS(f.CORS)}}
	}
	if f.RequestMirror != nil && f.RequestMirror.Index < len(r.Mirrors) {
		return m.migrateMirror(r, r.Mirrors[f.RequestMirror.Index])
	}
	if f.ResponseHeaderModifier != nil {
		hm := &gwv1.HTTPHeaderFilter{}
		for _, h := range f.ResponseHeaderModifier.Set {
			hm.Set = append(hm.Set, gwv1.HTTPHeader{Name: gwv1.HTTPHeaderName(h.Name), Value: h.Value})
		}
		return []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: hm}}
	}
	if f.ExternalAuth != nil && *f.ExternalAuth < len(r.ExternalAuth) {
		ea := r.ExternalAuth[*f.ExternalAuth]
		ns := gwv1.Namespace(ea.Backend.Service.Namespace)
		port := gwv1.PortNumber(ea.Backend.Port)
		out := &gwv1.HTTPExternalAuthFilter{ExternalAuthProtocol: gwv1.HTTPRouteExternalAuthHTTPProtocol,
			BackendRef:     gwv1.BackendObjectReference{Name: gwv1.ObjectName(ea.Backend.Service.Name), Namespace: &ns, Port: &port},
			HTTPAuthConfig: &gwv1.HTTPAuthConfig{Path: ea.PathPrefix, AllowedResponseHeaders: ea.AllowedResponseHeaders}}
		return []gwv1.HTTPRouteFilter{{Type: gwv1.HTTPRouteFilterExternalAuth, ExternalAuth: out}}
	}
	m.drop(r, string(f.Type), "a filter gwdev cannot convert")
	return nil
}

// drop notes a feature of rule r's Ingress that the route does not carry.
// A feature named by its annotations points at the first of them, so an
// annotation that applies to every path of its Ingress is listed once, at
// its own line, rather than once per path.
func (m *migrator) drop(r *engine.RouteRule, what, why string) {
	path := ""
	if first, _, _ := strings.Cut(what, ", "); strings.HasPrefix(first, AnnotationPrefix) {
		path = "metadata.annotations[" + first + "]"
	}
	m.dropAt(r, path, what, why)
}

// dropAt is drop for a feature that comes from the Ingress's field at path:
// it points at that field when the loader recorded where it is written, at
// the Ingress's first line otherwise (once per Ingress, not once per path),
// and at the rule when the Ingress's source is unknown.
func (m *migrator) dropAt(r *engine.RouteRule, path, what, why string) {
	src := r.Source
	if path != "" && r.Route.Kind == "Ingress" {
		if at := m.res.Objects.SourceOf(r.Route).At(path); at.File != "" {
			src = at
		}
	}
	m.dropped = append(m.dropped, DroppedFeature{Ingress: r.Route, Source: src, What: what, Why: why, Security: securityFeature(what)})
}

// ingressServed reports whether an Ingress got status (its class is served).
func ingressServed(ing *networkingv1.Ingress) bool { return len(ing.Status.LoadBalancer.Ingress) > 0 }
