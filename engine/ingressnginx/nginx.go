package ingressnginx

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file compiles the Ingresses of a class into the routing table the
// way ingress-nginx configures nginx (its documentation: "Ingress Path
// Matching", the annotations page). One nginx server per host, holding the
// locations of every Ingress that names the host (oldest Ingress first; a
// path an older Ingress already defines is dropped). nginx then picks a
// location per request; the table reproduces that choice with rules in
// precedence order, which the data plane takes as "first match wins":
//
//   - A Prefix path /foo is two locations, "/foo/" and "= /foo"; a Prefix
//     path ending in / (and "/") is one; Exact is "= path";
//     ImplementationSpecific is an nginx prefix location (a string prefix:
//     /foo takes /foobar).
//   - Without regex mode an exact location wins, then the longest prefix.
//     A request for a prefix location's path without its trailing slash
//     gets a 301 to the path with it (nginx's auto redirect), unless a
//     location of that name exists.
//   - When any Ingress of the host uses use-regex or rewrite-target, every
//     location of the host, Exact ones included, becomes a case-insensitive
//     regular expression anchored at the start only ("~* ^path"), tried in
//     order of descending path length.
//   - A host without a "/" location gets one that goes to the Ingress's
//     spec.defaultBackend, else to the default backend, which answers 404.

// nginxServer is one server block: a host (or "" for the catch-all
// server) with its locations.
type nginxServer struct {
	host      string
	tls       bool
	regex     bool
	locations []*nginxLocation
	// wwwRedirect, when set, makes the server only redirect every request
	// to the same URL on its host (from-to-www-redirect; nil: none).
	wwwRedirect *nginxLocation
}

// nginxLocation is one location block.
type nginxLocation struct {
	// exact is an "= path" location; otherwise a prefix (or, in regex
	// mode, a regular expression).
	exact bool
	path  string
	// ing is the Ingress the path comes from (nil: the server's default
	// root location, served by backend or a 404).
	ing *ingressState
	// field is the path's field in ing ("spec.rules[0].http.paths[1]").
	field string
	// ingPath is the Ingress path as written ("": none), the default path
	// of the affinity cookie.
	ingPath string
	// name is the table name of the location's rule.
	name    string
	backend *networkingv1.IngressBackend
	// ns is the namespace backend is in.
	ns string
	// key is the object the location's rules belong to: its Ingress, or
	// the IngressClass for the default backend's location.
	key engine.ObjectKey
	// canary is the canary Ingress's path for the same host and path (nil:
	// none).
	canary *nginxLocation
	// notRE2, in regex mode, is why Go's RE2 cannot compile the location's
	// expression: nginx (PCRE) may serve it, the table leaves it out
	// (nil: it compiles).
	notRE2 error
}

// ingressTables builds one table entry per ingress-nginx class, on its own
// loopback address, after assigning addresses and writing status.
func (t *translator) ingressTables() []*engine.GatewayTable {
	if len(t.ingressClasses) == 0 {
		return nil
	}
	t.assignIngressAddresses()
	t.writeIngressStatus()
	out := make([]*engine.GatewayTable, 0, len(t.ingressClasses))
	for _, c := range t.ingressClasses {
		out = append(out, t.ingressTable(c))
	}
	return out
}

// ingressClassKey names the IngressClass an entry serves.
func ingressClassKey(c *ingressClass) engine.ObjectKey {
	return engine.ObjectKey{Kind: "IngressClass", Name: c.name}
}

// ingressTable is a class's entry: port 80 and, when any Ingress has a TLS
// certificate, port 443, each with a virtual host per server.
func (t *translator) ingressTable(c *ingressClass) *engine.GatewayTable {
	key := ingressClassKey(c)
	name := "ingress/" + c.name
	// nginx matches locations against its normalised $uri (slashes merged,
	// dot segments resolved, escapes decoded) and proxies $request_uri, the
	// path as sent.
	gt := &engine.GatewayTable{Name: name, Gateway: key, Source: t.source(key), Address: c.addr, Ports: []*engine.PortTable{},
		Paths: table.PathPolicy{EscapedSlashes: table.EscapedSlashesForward, MatchOnly: true}}
	servers := t.nginxServers(c)
	httpL := &engine.ListenerTable{Name: name + "/listener/http", Owner: key, SectionName: "http", Source: gt.Source, Protocol: table.HTTPProtocolType}
	for _, s := range servers {
		httpL.VirtualHosts = append(httpL.VirtualHosts, t.nginxVirtualHost(httpL.Name, s, false))
	}
	gt.Ports = append(gt.Ports, &engine.PortTable{Port: cmp.Or(t.tr.Options().IngressHTTPPort, 80), Transport: "TCP", Listeners: []*engine.ListenerTable{httpL}})
	if certs := t.ingressCertificates(c); len(certs) > 0 {
		httpsL := &engine.ListenerTable{Name: name + "/listener/https", Owner: key, SectionName: "https", Source: gt.Source,
			Protocol: table.HTTPSProtocolType, TLS: &engine.ListenerTLS{Mode: table.TLSModeTerminate, Certificates: certs}}
		for _, s := range servers {
			httpsL.VirtualHosts = append(httpsL.VirtualHosts, t.nginxVirtualHost(httpsL.Name, s, true))
		}
		gt.Ports = append(gt.Ports, &engine.PortTable{Port: t.ingressHTTPSPort(), Transport: "TCP", Listeners: []*engine.ListenerTable{httpsL}})
	}
	return gt
}

// ingressHTTPSPort is the port of the classes' HTTPS listeners.
func (t *translator) ingressHTTPSPort() int32 { return cmp.Or(t.tr.Options().IngressHTTPSPort, 443) }

// ingressCertificates are the valid certificates of the class's TLS
// sections, each Secret once; a missing or invalid one is noted (nginx then
// serves its default certificate for the host).
func (t *translator) ingressCertificates(c *ingressClass) []*engine.Certificate {
	var certs []*engine.Certificate
	seen := map[nsName]bool{}
	for _, st := range c.ingresses {
		for i, tls := range st.obj.Spec.TLS {
			k := nsName{st.obj.Namespace, tls.SecretName}
			if tls.SecretName == "" || seen[k] {
				continue
			}
			seen[k] = true
			field := "spec.tls[" + itoa(i) + "]"
			sec := t.tr.Secret(k.ns, k.name)
			if sec == nil {
				t.noteKind(engine.NoteRefNotFound, engine.SeverityWarning, st.key, field, "TLS Secret "+k.ns+"/"+k.name+" not found: ingress-nginx serves its self-signed default certificate for these hosts")
				continue
			}
			cert, err := engine.CertificateFromSecret(sec)
			if err != nil {
				t.note(engine.SeverityWarning, st.key, field, "TLS Secret "+k.ns+"/"+k.name+": "+err.Error()+": ingress-nginx serves its self-signed default certificate for these hosts")
				continue
			}
			certs = append(certs, cert)
		}
	}
	return certs
}

// nginxServers collects the servers of a class, most specific host first,
// the catch-all server last.
func (t *translator) nginxServers(c *ingressClass) []*nginxServer {
	byHost := map[string]*nginxServer{}
	var servers []*nginxServer
	server := func(host string) *nginxServer {
		s := byHost[host]
		if s == nil {
			s = &nginxServer{host: host}
			byHost[host] = s
			servers = append(servers, s)
		}
		return s
	}
	server("") // nginx's default server "_" always exists
	seen := map[string]*ingressState{}
	written := map[string]bool{} // host, kind and path of locations an Ingress writes as such
	for _, st := range c.ingresses {
		for _, r := range st.obj.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for _, p := range r.HTTP.Paths {
				for _, lp := range nginxLocationPaths(p) {
					if !lp.derived {
						written[locationKey(r.Host, lp)] = true
					}
				}
			}
		}
	}
	defaults := map[string]*nginxLocation{}
	for _, st := range c.ingresses {
		ns := st.obj.Namespace
		for _, tls := range st.obj.Spec.TLS {
			for _, h := range tls.Hosts {
				server(h).tls = true
			}
		}
		if db := st.obj.Spec.DefaultBackend; db != nil {
			loc := &nginxLocation{path: "/", ing: st, key: st.key, field: "spec.defaultBackend", backend: db, ns: ns,
				name: "ingress/" + ns + "/" + st.obj.Name + "/defaultBackend"}
			hosts := []string{""}
			if len(st.obj.Spec.Rules) > 0 {
				hosts = hosts[:0]
				for _, r := range st.obj.Spec.Rules {
					hosts = append(hosts, r.Host)
				}
			}
			for _, h := range hosts {
				if defaults[h] == nil {
					defaults[h] = loc
				}
			}
		}
		if st.ann.canary != nil {
			continue // attached below, to the main Ingress's locations
		}
		for i, r := range st.obj.Spec.Rules {
			s := server(r.Host)
			if r.HTTP == nil {
				continue
			}
			if st.ann.useRegex || st.ann.rewriteTarget != "" {
				s.regex = true
			}
			for j, p := range r.HTTP.Paths {
				field := "spec.rules[" + itoa(i) + "].http.paths[" + itoa(j) + "]"
				name := "ingress/" + ns + "/" + st.obj.Name + "/rule/" + itoa(i) + "/path/" + itoa(j)
				for k, lp := range nginxLocationPaths(p) {
					loc := &nginxLocation{exact: lp.exact, path: lp.path, ing: st, key: st.key, field: field, name: name, backend: &r.HTTP.Paths[j].Backend, ns: ns, ingPath: p.Path}
					if k > 0 {
						loc.name += "/exact"
					}
					dup := locationKey(r.Host, lp)
					if lp.derived && written[dup] {
						continue
					}
					if older := seen[dup]; older != nil {
						if older != st {
							t.note(engine.SeverityWarning, st.key, field, "host "+engine.Quote(r.Host)+" path "+engine.Quote(lp.path)+" is already defined by the older Ingress "+
								older.key.Namespace+"/"+older.key.Name+": ingress-nginx keeps that one")
						}
						continue
					}
					seen[dup] = st
					s.locations = append(s.locations, loc)
				}
			}
		}
	}
	t.attachCanaries(c, byHost)
	for _, st := range c.ingresses {
		if !st.ann.fromToWWW {
			continue
		}
		for i, r := range st.obj.Spec.Rules {
			other, ok := strings.CutPrefix(r.Host, "www.")
			if !ok {
				other = "www." + r.Host
			}
			if r.Host == "" || byHost[other] != nil {
				continue // ingress-nginx leaves a host an Ingress defines alone
			}
			server(other).wwwRedirect = &nginxLocation{path: r.Host, ing: st, key: st.key, field: "spec.rules[" + itoa(i) + "]",
				name: "ingress/" + st.obj.Namespace + "/" + st.obj.Name + "/rule/" + itoa(i) + "/from-to-www"}
		}
	}
	for _, s := range servers {
		if s.wwwRedirect != nil {
			continue
		}
		if !slices.ContainsFunc(s.locations, func(l *nginxLocation) bool { return !l.exact && l.path == "/" }) {
			root := defaults[s.host]
			if root == nil {
				root = &nginxLocation{path: "/", key: ingressClassKey(c), name: "ingress/" + c.name + "/server/" + serverName(s.host) + "/default"}
			}
			s.locations = append(s.locations, root)
		}
	}
	t.checkRE2(servers)
	slices.SortStableFunc(servers, func(a, b *nginxServer) int {
		switch {
		case a.host == b.host:
			return 0
		case a.host == "":
			return 1
		case b.host == "":
			return -1
		case engine.HostnameLess(a.host, b.host):
			return -1
		}
		return 1
	})
	return servers
}

// locationKey identifies a location of a server.
func locationKey(host string, lp locationPath) string {
	return host + "\x00" + strconv.FormatBool(lp.exact) + "\x00" + lp.path
}

// serverName is nginx's name of a server ("_" for the catch-all one).
func serverName(host string) string {
	if host == "" {
		return "_"
	}
	return host
}

// locationPath is one location an Ingress path becomes.
type locationPath struct {
	exact bool
	path  string
	// derived is the "/foo/" location of a Prefix path "/foo": a location
	// written with that path takes precedence over it.
	derived bool
}

// nginxLocationPaths are the locations of an Ingress path, as ingress-nginx
// writes them: a Prefix path not ending in / is the prefix with a slash plus
// the exact path.
func nginxLocationPaths(p networkingv1.HTTPIngressPath) []locationPath {
	path := p.Path
	if path == "" {
		path = "/"
	}
	switch *p.PathType {
	case networkingv1.PathTypeExact:
		return []locationPath{{exact: true, path: path}}
	case networkingv1.PathTypePrefix:
		if path[len(path)-1] != '/' {
			return []locationPath{{path: path + "/", derived: true}, {exact: true, path: path}}
		}
	}
	return []locationPath{{path: path}}
}

// nginxVirtualHost compiles a server for the HTTP (https false) or HTTPS
// listener.
func (t *translator) nginxVirtualHost(listener string, s *nginxServer, https bool) *engine.VirtualHost {
	vh := &engine.VirtualHost{Name: listener + "/vhost/" + serverName(s.host), Hostname: s.host}
	if s.host == "" {
		vh.Name = listener + "/vhost/*"
	}
	if w := s.wwwRedirect; w != nil {
		port := cmp.Or(t.tr.Options().IngressHTTPPort, 80)
		if https {
			port = t.ingressHTTPSPort()
		}
		vh.Rules = []*engine.RouteRule{{Name: w.name, Route: w.key, Source: t.locationSource(w),
			HTTP:    &table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix}},
			Filters: []table.Filter{{Type: table.FilterRequestRedirect, RequestRedirect: &table.Redirect{Hostname: w.path, Port: port, StatusCode: 308}}}}}
		return vh
	}
	locs := slices.Clone(s.locations)
	if s.regex {
		sortByPathLength(locs)
		for _, l := range locs {
			if l.notRE2 == nil { // checkRE2 said why
				vh.Rules = append(vh.Rules, t.nginxRules(s, l, https, regexLocationMatch(l.path))...)
			}
		}
		return vh
	}
	var exact, prefix []*nginxLocation
	names := map[string]bool{}
	for _, l := range locs {
		names[l.path] = true
		if l.exact {
			exact = append(exact, l)
		} else {
			prefix = append(prefix, l)
		}
	}
	sortByPathLength(prefix)
	for _, l := range exact {
		vh.Rules = append(vh.Rules, t.nginxRules(s, l, https, table.PathMatch{Type: table.MatchExact, Value: l.path})...)
	}
	for _, l := range prefix {
		bare := l.path[:len(l.path)-1]
		if len(l.path) > 1 && l.path[len(l.path)-1] == '/' && !names[bare] {
			vh.Rules = append(vh.Rules, t.slashRedirect(l, bare))
		}
	}
	for _, l := range prefix {
		pm := table.PathMatch{Type: table.MatchPathPrefix}
		if l.path != "/" {
			pm = table.PathMatch{Type: table.MatchRegularExpression, Value: regexp.QuoteMeta(l.path) + anyRest}
		}
		vh.Rules = append(vh.Rules, t.nginxRules(s, l, https, pm)...)
	}
	return vh
}

// sortByPathLength orders locations by descending path length, keeping the
// order of equal lengths (ingress-nginx's documented order for regexes).
func sortByPathLength(locs []*nginxLocation) {
	slices.SortStableFunc(locs, func(a, b *nginxLocation) int { return len(b.path) - len(a.path) })
}

// nginxRules compiles one location: its rule, preceded by an app-root
// redirect of "/" when the location's Ingress has one and the location
// takes "/".
func (t *translator) nginxRules(s *nginxServer, l *nginxLocation, https bool, pm table.PathMatch) []*engine.RouteRule {
	key := l.key
	r := &engine.RouteRule{Name: l.name, Route: key, Source: t.locationSource(l), HTTP: &table.HTTPMatch{Path: pm}}
	var out []*engine.RouteRule
	var a *ingressAnnotations
	if l.ing != nil {
		a = &l.ing.ann
	}
	if a != nil && a.appRoot != "" && locationTakesRoot(pm) {
		out = append(out, &engine.RouteRule{Name: l.name + "/app-root", Route: key, Source: t.sourceAt(key, "metadata.annotations["+AnnotationPrefix+"app-root]"),
			HTTP: &table.HTTPMatch{Path: table.PathMatch{Type: table.MatchExact, Value: "/"}},
			Filters: []table.Filter{{Type: table.FilterRequestRedirect, RequestRedirect: &table.Redirect{
				Path: &table.PathRewrite{Type: table.ReplaceFullPath, Value: a.appRoot}, StatusCode: 302, NoQuery: true}}}})
	}
	if a != nil && a.redirect != nil {
		r.Filters = append(r.Filters, ingressRedirectFilter(a.redirect))
	}
	if a != nil && a.authURL != nil {
		t.ingressExternalAuth(r, l, a)
	}
	if !https && (a == nil && s.tls || a != nil && (a.forceSSLRedirect || s.tls && a.sslRedirect)) {
		red := &table.Redirect{Scheme: "https", Port: t.ingressHTTPSPort(), StatusCode: 308}
		if a == nil || !a.preserveSlash {
			red.Path = &table.PathRewrite{Type: table.TrimTrailingSlash}
		}
		r.Filters = append(r.Filters, table.Filter{Type: table.FilterRequestRedirect, RequestRedirect: red})
	}
	if a != nil && a.rewriteTarget != "" && s.regex {
		rm := regexLocationMatch(l.path)
		r.Filters = append(r.Filters, table.Filter{Type: table.FilterURLRewrite, URLRewrite: &table.URLRewrite{
			Path: &table.PathRewrite{Type: table.ReplaceRegexMatch, Pattern: rm.Value, Value: a.rewriteTarget}}})
	}
	if a != nil && (a.upstreamVhost != "" || a.forwardedPrefix != "") {
		hm := &table.HeaderModifier{}
		if a.upstreamVhost != "" {
			hm.Set = append(hm.Set, table.Header{Name: "Host", Value: a.upstreamVhost})
		}
		if a.forwardedPrefix != "" {
			hm.Set = append(hm.Set, table.Header{Name: "X-Forwarded-Prefix", Value: a.forwardedPrefix})
		}
		r.Filters = append(r.Filters, table.Filter{Type: table.FilterRequestHeaderModifier, RequestHeaderModifier: hm})
	}
	if a != nil {
		t.ingressRuleSettings(r, l, a)
	}
	t.nginxBackend(r, l)
	if a != nil {
		t.ingressDefaultBackend(r, l, a)
		t.ingressErrorPages(r, l, a)
	}
	// nginx's rewrite phase (return, the HTTPS redirect) runs before its
	// access phase: a redirecting location never checks clients. The body
	// limit comes before both (nginx checks Content-Length when it picks
	// the location).
	redirects := slices.ContainsFunc(r.Filters, func(f table.Filter) bool { return f.RequestRedirect != nil })
	if a != nil {
		var p *table.RulePolicy
		if !redirects {
			p = ingressRulePolicy(r.Name, a)
		}
		r.Policy = ingressPolicy(p, a, redirects)
	}
	if a != nil && a.denied != "" && !redirects {
		r.Backends, r.Filters = nil, nil
		r.DirectStatus, r.DirectReason = 503, "annotation "+a.denied+": ingress-nginx denies the location (503)"
		return append(out, r)
	}
	if a != nil && a.unemulatedSecurity != "" && !redirects {
		r.Backends, r.Filters = nil, nil
		r.DirectStatus, r.DirectReason = 403, "annotation "+a.unemulatedSecurity+" is a security filter gwdev does not emulate: denied"
		return append(out, r)
	}
	if a != nil && a.basicAuthDenied != "" && !redirects {
		r.Backends, r.Filters = nil, nil
		r.DirectStatus, r.DirectReason = 503, "annotation "+a.basicAuthDenied
		return append(out, r)
	}
	if l.canary != nil {
		out = append(out, t.canaryRules(r, l.canary)...)
	}
	return append(out, r)
}

// locationSource is where a location comes from: its Ingress path, or the
// IngressClass for the default backend.
func (t *translator) locationSource(l *nginxLocation) engine.Source {
	if l.ing == nil {
		return t.source(l.key)
	}
	return t.sourceAt(l.key, l.field)
}

// locationTakesRoot reports whether a location's match takes the path "/".
func locationTakesRoot(pm table.PathMatch) bool {
	switch pm.Type {
	case table.MatchExact:
		return pm.Value == "/"
	case table.MatchPathPrefix:
		return pm.Value == ""
	}
	re, err := regexp.Compile("^(?:" + pm.Value + ")$")
	return err == nil && re.MatchString("/")
}
