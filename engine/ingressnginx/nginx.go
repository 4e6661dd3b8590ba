package ingressnginx

import (
	"cmp"
	"errors"
	"net/textproto"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
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

// attachCanaries gives each location the canary Ingress path of the same
// host, kind and path (one per location, as ingress-nginx allows); a canary
// path without a main one is noted and not served.
func (t *translator) attachCanaries(c *ingressClass, byHost map[string]*nginxServer) {
	for _, st := range c.ingresses {
		if st.ann.canary == nil {
			continue
		}
		for i, r := range st.obj.Spec.Rules {
			if r.HTTP == nil {
				continue
			}
			for j, p := range r.HTTP.Paths {
				field := "spec.rules[" + itoa(i) + "].http.paths[" + itoa(j) + "]"
				attached := false
				for _, lp := range nginxLocationPaths(p) {
					s := byHost[r.Host]
					if s == nil {
						continue
					}
					for _, l := range s.locations {
						if l.exact != lp.exact || l.path != lp.path || l.ing == nil {
							continue
						}
						if l.canary != nil && l.canary.ing != st {
							t.note(engine.SeverityWarning, st.key, field, "canary: the path already has the canary "+l.canary.ing.key.Namespace+"/"+
								l.canary.ing.key.Name+"; ingress-nginx applies one canary per path")
							continue
						}
						l.canary = &nginxLocation{ing: st, key: st.key, field: field, backend: &r.HTTP.Paths[j].Backend, ns: st.obj.Namespace,
							name: "ingress/" + st.obj.Namespace + "/" + st.obj.Name + "/rule/" + itoa(i) + "/path/" + itoa(j)}
						attached = true
					}
				}
				if !attached {
					t.note(engine.SeverityWarning, st.key, field, "canary: no main Ingress has host "+engine.Quote(r.Host)+" path "+engine.Quote(p.Path)+"; ingress-nginx ignores the canary")
				}
			}
		}
	}
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

// checkRE2 finds the locations of regex-mode servers whose expression Go's
// RE2 cannot compile (a lookaround, a backreference, a repeat count over
// 1000), which nginx's PCRE may well serve: each Ingress path is noted once,
// at its path (the item of http.paths), and the table leaves its locations
// out.
func (t *translator) checkRE2(servers []*nginxServer) {
	noted := map[string]bool{}
	for _, s := range servers {
		if !s.regex {
			continue
		}
		for _, l := range s.locations {
			if l.ing == nil {
				continue
			}
			_, err := regexp.Compile(regexLocationMatch(l.path).Value)
			if err == nil {
				continue
			}
			l.notRE2 = err
			if k := l.key.String() + "\x00" + l.field; !noted[k] {
				noted[k] = true
				t.noteAt(engine.NoteRegexNotRE2, engine.SeverityWarning, l.key, l.field, l.field, "path "+engine.Quote(cmp.Or(l.ingPath, l.path))+": "+notRE2Message(s.host, l.path, err))
			}
		}
	}
}

// notRE2Message says what ingress-nginx and gwdev do with a regex-mode
// location whose expression RE2 refused with err (the error of the path
// itself when it has one: the table's expression wraps it).
func notRE2Message(host, path string, err error) string {
	if _, perr := regexp.Compile(path); perr != nil {
		err = perr
	}
	msg := "host " + engine.Quote(host) + " is in regex mode (use-regex or rewrite-target on one of its Ingresses), so ingress-nginx writes the location ~* " +
		engine.Quote("^"+path) + "; gwdev matches with Go's RE2, which cannot compile it (" + err.Error() + ")"
	fix := "Write the path without PCRE-only syntax to have gwdev serve it"
	var se *syntax.Error
	if errors.As(err, &se) {
		switch se.Code {
		case syntax.ErrInvalidPerlOp, syntax.ErrInvalidRepeatSize, syntax.ErrInvalidEscape, syntax.ErrInvalidNamedCapture:
			msg += ", where nginx's PCRE does (lookarounds, backreferences, repeat counts over 1000) and serves the location"
		default:
			msg += ", and nginx's PCRE refuses it too: nginx -t fails, so ingress-nginx's admission webhook refuses the Ingress (without it, the controller keeps its previous configuration)"
			fix = "Correct the expression"
		}
	}
	return msg + ". gwdev leaves the location out: its requests go to the next location that matches (else the default backend's 404). " + fix
}

// sortByPathLength orders locations by descending path length, keeping the
// order of equal lengths (ingress-nginx's documented order for regexes).
func sortByPathLength(locs []*nginxLocation) {
	slices.SortStableFunc(locs, func(a, b *nginxLocation) int { return len(b.path) - len(a.path) })
}

// anyRest matches the rest of a path after a prefix, newlines included.
const anyRest = "(?s:.*)"

// regexLocationMatch is the path match of "location ~* ^path": the path as
// a case-insensitive expression, anchored at the start only.
func regexLocationMatch(path string) table.PathMatch {
	return table.PathMatch{Type: table.MatchRegularExpression, Value: "(?i:" + path + ")" + anyRest}
}

// slashRedirect is nginx's answer to a request for a prefix location's path
// without its trailing slash: 301 to the path with it (query kept).
func (t *translator) slashRedirect(l *nginxLocation, bare string) *engine.RouteRule {
	return &engine.RouteRule{Name: l.name + "/slash", Route: l.key, Source: t.locationSource(l),
		HTTP: &table.HTTPMatch{Path: table.PathMatch{Type: table.MatchExact, Value: bare}},
		Filters: []table.Filter{{Type: table.FilterRequestRedirect, RequestRedirect: &table.Redirect{
			Path: &table.PathRewrite{Type: table.ReplaceFullPath, Value: l.path}, StatusCode: 301}}}}
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
		out = append(out, &engine.RouteRule{Name: l.name + "/app-root", Route: key, Source: t.sourceAt(key, "metadata.annotations["+IngressNginxAnnotationPrefix+"app-root]"),
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

// canaryRules are the rules that send a location's requests to its canary,
// placed before the location's own rule r and sharing its match and
// filters: the header's never (to r's backend) and always (or the
// header value or pattern), the cookie's never and always, then, with a
// weight, r itself becomes a weighted split.
func (t *translator) canaryRules(r *engine.RouteRule, canary *nginxLocation) []*engine.RouteRule {
	c := canary.ing.ann.canary
	probe := &engine.RouteRule{Name: canary.name}
	t.nginxBackend(probe, canary)
	if probe.DirectStatus != 0 || r.DirectStatus != 0 {
		return nil // the note says why; the location keeps its own answer
	}
	var out []*engine.RouteRule
	with := func(suffix string, vm table.ValueMatch, toCanary bool) {
		m := *r.HTTP
		m.Headers = append(slices.Clone(m.Headers), vm)
		rr := &engine.RouteRule{Name: canary.name + "/canary/" + suffix, Route: canary.key, Source: t.locationSource(canary), HTTP: &m,
			Filters: r.Filters, ExternalAuth: r.ExternalAuth, Policy: r.Policy, Backends: r.Backends,
			SessionPersistence: r.SessionPersistence, Timeouts: r.Timeouts, Mirrors: r.Mirrors, ErrorPages: r.ErrorPages}
		if toCanary {
			rr.Backends = probe.Backends
		} else {
			rr.Name, rr.Route, rr.Source = r.Name+"/canary-never/"+suffix, r.Route, r.Source
		}
		out = append(out, rr)
	}
	if c.header != "" {
		name := textprotoCanonical(c.header)
		switch {
		case c.headerValue != "":
			with("header", table.ValueMatch{Name: name, Type: table.MatchExact, Value: c.headerValue}, true)
		case c.headerPattern != "":
			with("header", table.ValueMatch{Name: name, Type: table.MatchRegularExpression, Value: anyRest + "(?:" + c.headerPattern + ")" + anyRest}, true)
		default:
			with("header", table.ValueMatch{Name: name, Type: table.MatchExact, Value: "never"}, false)
			with("header", table.ValueMatch{Name: name, Type: table.MatchExact, Value: "always"}, true)
		}
	}
	if c.cookie != "" {
		cookie := func(v string) table.ValueMatch {
			return table.ValueMatch{Name: "Cookie", Type: table.MatchRegularExpression,
				Value: "(?:|.*;)[ \\t]*" + regexp.QuoteMeta(c.cookie) + "=" + v + "[ \\t]*(?:;.*)?"}
		}
		with("cookie", cookie("never"), false)
		with("cookie", cookie("always"), true)
	}
	if c.weight > 0 {
		main := *r.Backends[0]
		main.Weight = max(c.total-c.weight, 0)
		can := *probe.Backends[0]
		can.Weight = min(c.weight, c.total)
		r.Backends = []*engine.Backend{&main, &can}
	}
	return out
}

// textprotoCanonical is a header name as the table keeps it.
func textprotoCanonical(name string) string { return textproto.CanonicalMIMEHeaderKey(name) }

// locationSource is where a location comes from: its Ingress path, or the
// IngressClass for the default backend.
func (t *translator) locationSource(l *nginxLocation) engine.Source {
	if l.ing == nil {
		return t.source(l.key)
	}
	return t.sourceAt(l.key, l.field)
}

// ingressExternalAuth is auth-url as an HTTP ExternalAuth filter: the
// URL's host names a Service ("name", "name.ns", "name.ns.svc[.cluster.local]")
// and port; the auth request's path starts with the URL's path;
// auth-response-headers are copied to the backend request. A Service that
// is not in the manifests makes the filter refuse every request, as an
// auth request that fails makes ingress-nginx answer 500.
func (t *translator) ingressExternalAuth(r *engine.RouteRule, l *nginxLocation, a *ingressAnnotations) {
	u := a.authURL
	ea := &table.ExternalAuth{Name: r.Name + "/filter/" + itoa(len(r.Filters)) + "/externalauth", Protocol: "HTTP",
		PathPrefix: strings.TrimSuffix(u.Path, "/"), AllowedResponseHeaders: a.authHeaders}
	ea.Backend = t.ingressURLBackend(ea.Name, "auth-url", u, l.ns)
	idx := len(r.ExternalAuth)
	r.ExternalAuth = append(r.ExternalAuth, ea)
	r.Filters = append(r.Filters, table.Filter{Type: table.FilterExternalAuth, ExternalAuth: &idx})
}

// ingressURLBackend resolves an annotation's http(s) URL whose host names a
// Service ("name", "name.ns", "name.ns.svc[.cluster.local]", in ns by
// default) and port (the scheme's by default) to that Service port; a
// Service or port not in the manifests is an invalid backend.
func (t *translator) ingressURLBackend(name, annotation string, u *url.URL, ns string) *engine.Backend {
	parts := strings.Split(strings.TrimSuffix(u.Hostname(), ".cluster.local"), ".")
	svcName := parts[0]
	if len(parts) > 1 {
		ns = parts[1]
	}
	port := int32(80)
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		port = int32(n)
	}
	svc := t.tr.Service(ns, svcName)
	if svc != nil {
		for i := range svc.Spec.Ports {
			if svc.Spec.Ports[i].Port == port {
				return t.tr.ServiceBackend(name, svc, svc.Spec.Ports[i])
			}
		}
	}
	return &engine.Backend{Name: name + "/backend", Service: engine.ObjectKey{Kind: "Service", Namespace: ns, Name: svcName}, Port: port, Weight: 1,
		Invalid: annotation + " " + u.String() + ": no Service " + ns + "/" + svcName + " with port " + itoa(int(port)) + " in the manifests"}
}

// ingressRulePolicy is whitelist-source-range (only these clients) and
// denylist-source-range (not these), checked before anything else as
// ingress-nginx's allow/deny directives are; nil when neither is set.
func ingressRulePolicy(name string, a *ingressAnnotations) *table.RulePolicy {
	rbac := func(suffix, action string, cidrs []string) *table.RBAC {
		r := &table.RBAC{Name: name + "/" + suffix, Action: action, From: []string{IngressNginxAnnotationPrefix + suffix}}
		for i, c := range cidrs {
			g := table.RBACGroup{Name: "range-" + itoa(i), Principals: []table.RBACPrincipal{{Name: c, RemoteIP: c}}}
			r.Groups = append(r.Groups, g)
		}
		return r
	}
	var p *table.RulePolicy
	if a.deny != nil {
		p = &table.RulePolicy{Profile: "ingress-nginx", HostRBAC: rbac("denylist-source-range", table.RBACDeny, a.deny)}
	}
	if a.allow != nil {
		if p == nil {
			p = &table.RulePolicy{Profile: "ingress-nginx"}
		}
		p.RBAC = rbac("whitelist-source-range", table.RBACAllow, a.allow)
	}
	return p
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

// ingressRedirectFilter is permanent-redirect or temporal-redirect: nginx's
// "return <code> <url>", which sends the URL as written, without the
// request's query.
func ingressRedirectFilter(r *ingressRedirect) table.Filter {
	port := int32(0)
	if p := r.url.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		port = int32(n)
	} else if r.url.Scheme == "https" {
		port = 443
	} else {
		port = 80
	}
	path := r.url.Path
	return table.Filter{Type: table.FilterRequestRedirect, RequestRedirect: &table.Redirect{Scheme: r.url.Scheme, Hostname: r.url.Hostname(), Port: port,
		Path: &table.PathRewrite{Type: table.ReplaceFullPath, Value: path}, StatusCode: r.code, NoQuery: true}}
}

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
		b.TLS = &table.BackendTLS{Policy: "annotation " + IngressNginxAnnotationPrefix + "backend-protocol", NoVerify: true}
	}
	r.Backends = []*engine.Backend{b}
}
