package ingressnginx

import (
	"cmp"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file is the access family of annotations: basic auth (auth-type,
// auth-secret, auth-realm), external auth (auth-url and the auth-* settings
// nginx's auth_request takes), and the client address lists
// (whitelist-source-range, denylist-source-range) nginx's allow/deny write.

// parseIngressBasicAuth reads auth-secret (an htpasswd file under the
// Secret's key "auth", or with auth-secret-type auth-map a user per key)
// and auth-realm. A missing Secret or key makes ingress-nginx deny the
// locations with 503; the Secret's contents are never written anywhere.
func (t *translator) parseIngressBasicAuth(st *ingressState, f *ingressFeatures, str func(string) string) {
	ref := str("auth-secret")
	ns, name, ok := t.ingressRef(st, "auth-secret", ref)
	if !ok {
		f.basicAuthDenied = AnnotationPrefix + "auth-secret: Secret " + ref + " is in another namespace: ingress-nginx denies the location (503)"
		return
	}
	deny := func(msg string) {
		f.basicAuthDenied = AnnotationPrefix + "auth-secret: " + msg + ": ingress-nginx denies the location (503)"
		t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(AnnotationPrefix+"auth-secret"), "", "annotation "+f.basicAuthDenied)
	}
	if name == "" {
		deny("missing")
		return
	}
	sec := t.tr.Secret(ns, name)
	if sec == nil {
		deny("Secret " + ns + "/" + name + " not found")
		return
	}
	ba := &table.BasicAuth{Name: "ingress/" + st.obj.Namespace + "/" + st.obj.Name + "/basic-auth", Realm: str("auth-realm"), Secret: ns + "/" + name}
	switch typ := cmp.Or(str("auth-secret-type"), "auth-file"); typ {
	case "auth-file":
		file, ok := sec.Data["auth"]
		if !ok {
			deny("Secret " + ns + "/" + name + " has no key \"auth\"")
			return
		}
		var noColon, noUser []string
		for i, line := range strings.Split(string(file), "\n") {
			line = strings.TrimSpace(line)
			user, hash, ok := strings.Cut(line, ":")
			switch {
			case line == "" || strings.HasPrefix(line, "#"):
			case !ok:
				noColon = append(noColon, itoa(i+1))
			case user == "":
				noUser = append(noUser, itoa(i+1))
			default:
				ba.Users = append(ba.Users, table.BasicAuthUser{Name: user, Hash: hash})
			}
		}
		// The lines are named by number only: their content may be a
		// password hash.
		if noColon != nil {
			t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(AnnotationPrefix+"auth-secret"), "", "annotation "+AnnotationPrefix+"auth-secret: Secret "+ns+"/"+name+
				", key auth, "+oneOrMany(len(noColon), "line", "lines")+" "+strings.Join(noColon, ", ")+": not user:hash (no colon); nginx finds no user there, and gwdev skips "+
				oneOrMany(len(noColon), "it", "them")+": write each user as name:hash (htpasswd -B)")
		}
		if noUser != nil {
			t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(AnnotationPrefix+"auth-secret"), "", "annotation "+AnnotationPrefix+"auth-secret: Secret "+ns+"/"+name+
				", key auth, "+oneOrMany(len(noUser), "line", "lines")+" "+strings.Join(noUser, ", ")+": the user name is empty; nginx refuses credentials without a user name, "+
				"so no one can use "+oneOrMany(len(noUser), "it", "them")+", and gwdev skips "+oneOrMany(len(noUser), "it", "them"))
		}
	case "auth-map":
		for _, user := range slices.Sorted(maps.Keys(sec.Data)) {
			ba.Users = append(ba.Users, table.BasicAuthUser{Name: user, Hash: strings.TrimSpace(string(sec.Data[user]))})
		}
	default:
		deny("auth-secret-type " + strconv.Quote(typ) + " is neither auth-file nor auth-map")
		return
	}
	var refused, costly []string
	for _, u := range ba.Users {
		switch cost, bcrypt := table.BcryptCost(u.Hash); {
		case bcrypt && cost > table.BasicAuthMaxBcryptCost:
			costly = append(costly, strconv.Quote(u.Name)+" (cost "+itoa(cost)+")")
		case !table.BasicAuthHashSupported(u.Hash):
			refused = append(refused, strconv.Quote(u.Name))
		}
	}
	if len(refused) > 0 {
		t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(AnnotationPrefix+"auth-secret"), "", "annotation "+AnnotationPrefix+"auth-secret: Secret "+ns+"/"+name+": the password hashes of "+
			strings.Join(refused, ", ")+" are in a format gwdev does not check (it knows bcrypt $2y$/$2a$/$2b$, Apache MD5 $apr1$, {SHA} and {PLAIN}; "+
			"crypt(3) DES, $1$, $5$, $6$ and {SSHA} are not): these users are refused")
	}
	if len(costly) > 0 {
		t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(AnnotationPrefix+"auth-secret"), "", "annotation "+AnnotationPrefix+"auth-secret: Secret "+ns+"/"+name+": the bcrypt hashes of "+
			strings.Join(costly, ", ")+" cost more than "+itoa(table.BasicAuthMaxBcryptCost)+", gwdev's cap (each step doubles the work of every request's check; "+
			"nginx checks any cost, cost 31 for days per request): gwdev refuses these users rather than let them in unchecked; rehash with htpasswd -B -C "+itoa(table.BasicAuthMaxBcryptCost))
	}
	ba.UserCount = len(ba.Users)
	f.basicAuth = ba
	f.from = append(f.from, AnnotationPrefix+"auth-type")
}

// cidrList parses a comma-separated list of CIDRs or addresses (an address
// is its own /32 or /128); a bad entry is noted and, since the list guards
// access, kept as a range that matches nothing rather than dropped.
func cidrList(v, name string, warn func(name, msg string)) []string {
	if v == "" {
		return nil
	}
	var out []string
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if !strings.Contains(e, "/") {
			if ip, err := netip.ParseAddr(e); err == nil {
				e = netip.PrefixFrom(ip, ip.BitLen()).String()
			}
		}
		if _, err := netip.ParsePrefix(e); err != nil {
			warn(name, "invalid range "+strconv.Quote(e)+"; ingress-nginx refuses the annotation")
			continue
		}
		out = append(out, e)
	}
	if out == nil {
		out = []string{} // every entry was bad: allow nobody / deny nobody, as written
	}
	return out
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
		r := &table.RBAC{Name: name + "/" + suffix, Action: action, From: []string{AnnotationPrefix + suffix}}
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
