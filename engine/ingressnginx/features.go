package ingressnginx

import (
	"cmp"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file reads the ingress-nginx annotations that become rule settings
// of the table rather than matches or redirects: CORS, the request body
// limit, basic auth, rate limits, cookie affinity, proxy timeouts and
// custom response headers (ingress-nginx's annotations page, and the nginx
// directives each one writes: client_max_body_size, auth_basic,
// limit_req/limit_conn, proxy_*_timeout, more_set_headers).

// ingressFeatures are those settings of one Ingress, parsed.
type ingressFeatures struct {
	// cors is enable-cors with the cors-* settings (nil: off).
	cors *table.CORS
	// bodyLimit is proxy-body-size in bytes (default 1m, 0: no limit);
	// bodyLimitSet says the annotation set it.
	bodyLimit    int64
	bodyLimitSet bool
	// basicAuth is auth-type basic with its users (nil: none);
	// basicAuthDenied, when set, is why the auth configuration is unusable:
	// ingress-nginx then denies the locations with 503.
	basicAuth       *table.BasicAuth
	basicAuthDenied string
	// rateLimit is limit-rps, limit-rpm and limit-connections (nil: none).
	rateLimit *table.RateLimit
	// session is affinity cookie (nil: none); an empty Path is the
	// location's path.
	session *table.Session
	// timeouts are the proxy-*-timeout annotations folded into one attempt
	// timeout (nil: none set).
	timeouts *table.Timeouts
	// customHeaders are the custom-headers ConfigMap's entries, set on
	// responses (nil: none); headersDenied, when set, is why the
	// ConfigMap is unusable: ingress-nginx then denies the locations with
	// 503.
	customHeaders []table.Header
	headersDenied string
	// mirror is mirror-target without its "$request_uri" (nil: none).
	mirror *url.URL
	// defaultBackend is the default-backend annotation's Service, in the
	// Ingress's namespace ("": none).
	defaultBackend string
	// errorCodes are custom-http-errors's statuses (nil: none).
	errorCodes []int
	// from lists the annotations that set the rule policy's settings.
	from []string
}

// nginx's defaults for the settings above (ingress-nginx's ConfigMap
// defaults and annotation defaults).
const (
	nginxDefaultBodySize    = 1 << 20 // proxy-body-size 1m
	nginxCORSMethods        = "GET, PUT, POST, DELETE, PATCH, OPTIONS"
	nginxCORSHeaders        = "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization"
	nginxCORSMaxAge         = 1728000
	nginxBurstMultiplier    = 5
	nginxConnectTimeout     = 5 * time.Second
	nginxSendReadTimeout    = 60 * time.Second
	nginxAffinityCookieName = "INGRESSCOOKIE"
	nginxLimitStatus        = 503
)

// ingress-nginx's validation of the CORS annotations: a value that does not
// match is replaced by the default.
var (
	corsOriginRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://(\*\.)?[A-Za-z0-9.-]+(:[0-9]+)?$`)
	corsMethodsRE = regexp.MustCompile(`^([A-Za-z]+,?\s?)+$`)
	corsHeadersRE = regexp.MustCompile(`^([A-Za-z0-9\-\_]+,?\s?)+$`)
	corsExposeRE  = regexp.MustCompile(`^(([A-Za-z0-9\-\_]+|\*),?\s?)+$`)
)

// parseIngressFeatures reads the annotations of this file; str, boolean
// and warn are parseIngressAnnotations's accessors.
func (t *translator) parseIngressFeatures(st *ingressState, str func(string) string, boolean func(string, bool) bool, warn func(name, msg string)) ingressFeatures {
	f := ingressFeatures{bodyLimit: nginxDefaultBodySize}
	number := func(name string, def int) int {
		v := str(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			warn(name, "invalid number "+strconv.Quote(v)+"; ingress-nginx ignores it")
			return def
		}
		return n
	}
	if boolean("enable-cors", false) {
		f.cors = parseIngressCORS(str, boolean, number, warn)
	}
	if v := str("proxy-body-size"); v != "" {
		if n, ok := nginxSize(v); ok {
			f.bodyLimit, f.bodyLimitSet = n, true
			f.from = append(f.from, IngressNginxAnnotationPrefix+"proxy-body-size")
		} else {
			warn("proxy-body-size", "invalid size "+strconv.Quote(v)+" (want a number with k, m or g); ingress-nginx's default 1m applies")
		}
	}
	if strings.EqualFold(str("auth-type"), "basic") {
		t.parseIngressBasicAuth(st, &f, str)
	}
	f.rateLimit = parseIngressRateLimit(st, &f, str, number, warn)
	if v := str("affinity"); v != "" {
		if v == "cookie" {
			f.session = parseIngressAffinity(str, number, warn)
		} else {
			warn("affinity", "ingress-nginx knows only \"cookie\", not "+strconv.Quote(v)+"; it ignores it")
		}
	}
	f.timeouts = parseIngressTimeouts(str, number)
	if v := str("mirror-target"); v != "" {
		rest, whole := strings.CutSuffix(v, "$request_uri")
		u, err := url.Parse(rest)
		if whole && err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Path == "" {
			f.mirror = u
		} else {
			warn("mirror-target", "gwdev emulates targets of the form http(s)://<Service>[:port]$request_uri; it does not mirror "+strconv.Quote(v))
		}
	}
	f.defaultBackend = str("default-backend")
	if v := str("custom-http-errors"); v != "" {
		f.errorCodes = parseIngressErrorCodes(v, warn)
	}
	if boolean("service-upstream", false) && f.session != nil {
		warn("service-upstream", "with affinity cookie, ingress-nginx's cookie pins the Service's cluster IP, and kube-proxy still spreads connections over the Pods; gwdev pins the endpoint")
	}
	if v := str("custom-headers"); v != "" {
		f.customHeaders, f.headersDenied = t.ingressCustomHeaders(st, v, warn)
	}
	return f
}

// parseIngressCORS reads cors-* as ingress-nginx's CORS parser does:
// invalid values fall back to the defaults.
func parseIngressCORS(str func(string) string, boolean func(string, bool) bool, number func(string, int) int, warn func(name, msg string)) *table.CORS {
	c := &table.CORS{Nginx: &table.NginxCORS{PreflightStatus: 204}, AllowCredentials: boolean("cors-allow-credentials", true),
		MaxAge: int32(number("cors-max-age", nginxCORSMaxAge))}
	for _, o := range strings.Split(cmp.Or(str("cors-allow-origin"), "*"), ",") {
		o = strings.TrimSpace(o)
		switch {
		case o == "":
		case o == "*":
			c.AnyOrigin = true
		case !corsOriginRE.MatchString(o):
			warn("cors-allow-origin", "invalid origin "+strconv.Quote(o)+" (want protocol://host[:port], with *. for one level of subdomains); ingress-nginx drops it")
		default:
			if po, ok := table.ParseOrigin(strings.ToLower(o)); ok {
				c.AllowOrigins = append(c.AllowOrigins, po)
			}
		}
	}
	if !c.AnyOrigin && len(c.AllowOrigins) == 0 {
		c.AnyOrigin = true // no valid origin: ingress-nginx's default "*"
	}
	list := func(name, def string, re *regexp.Regexp) string {
		v := str(name)
		if v == "" {
			return def
		}
		if !re.MatchString(v) {
			warn(name, "invalid value "+strconv.Quote(v)+"; ingress-nginx uses "+cmp.Or(strconv.Quote(def), "none"))
			return def
		}
		return v
	}
	c.AllowMethods = []string{list("cors-allow-methods", nginxCORSMethods, corsMethodsRE)}
	c.AllowHeaders = []string{list("cors-allow-headers", nginxCORSHeaders, corsHeadersRE)}
	if e := list("cors-expose-headers", "", corsExposeRE); e != "" {
		c.ExposeHeaders = []string{e}
	}
	return c
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

// parseIngressBasicAuth reads auth-secret (an htpasswd file under the
// Secret's key "auth", or with auth-secret-type auth-map a user per key)
// and auth-realm. A missing Secret or key makes ingress-nginx deny the
// locations with 503; the Secret's contents are never written anywhere.
func (t *translator) parseIngressBasicAuth(st *ingressState, f *ingressFeatures, str func(string) string) {
	ref := str("auth-secret")
	ns, name, ok := t.ingressRef(st, "auth-secret", ref)
	if !ok {
		f.basicAuthDenied = IngressNginxAnnotationPrefix + "auth-secret: Secret " + ref + " is in another namespace: ingress-nginx denies the location (503)"
		return
	}
	deny := func(msg string) {
		f.basicAuthDenied = IngressNginxAnnotationPrefix + "auth-secret: " + msg + ": ingress-nginx denies the location (503)"
		t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(IngressNginxAnnotationPrefix+"auth-secret"), "", "annotation "+f.basicAuthDenied)
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
			t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(IngressNginxAnnotationPrefix+"auth-secret"), "", "annotation "+IngressNginxAnnotationPrefix+"auth-secret: Secret "+ns+"/"+name+
				", key auth, "+oneOrMany(len(noColon), "line", "lines")+" "+strings.Join(noColon, ", ")+": not user:hash (no colon); nginx finds no user there, and gwdev skips "+
				oneOrMany(len(noColon), "it", "them")+": write each user as name:hash (htpasswd -B)")
		}
		if noUser != nil {
			t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(IngressNginxAnnotationPrefix+"auth-secret"), "", "annotation "+IngressNginxAnnotationPrefix+"auth-secret: Secret "+ns+"/"+name+
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
		t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(IngressNginxAnnotationPrefix+"auth-secret"), "", "annotation "+IngressNginxAnnotationPrefix+"auth-secret: Secret "+ns+"/"+name+": the password hashes of "+
			strings.Join(refused, ", ")+" are in a format gwdev does not check (it knows bcrypt $2y$/$2a$/$2b$, Apache MD5 $apr1$, {SHA} and {PLAIN}; "+
			"crypt(3) DES, $1$, $5$, $6$ and {SSHA} are not): these users are refused")
	}
	if len(costly) > 0 {
		t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(IngressNginxAnnotationPrefix+"auth-secret"), "", "annotation "+IngressNginxAnnotationPrefix+"auth-secret: Secret "+ns+"/"+name+": the bcrypt hashes of "+
			strings.Join(costly, ", ")+" cost more than "+itoa(table.BasicAuthMaxBcryptCost)+", gwdev's cap (each step doubles the work of every request's check; "+
			"nginx checks any cost, cost 31 for days per request): gwdev refuses these users rather than let them in unchecked; rehash with htpasswd -B -C "+itoa(table.BasicAuthMaxBcryptCost))
	}
	ba.UserCount = len(ba.Users)
	f.basicAuth = ba
	f.from = append(f.from, IngressNginxAnnotationPrefix+"auth-type")
}

// parseIngressRateLimit reads limit-rps, limit-rpm, limit-connections,
// limit-burst-multiplier and limit-allowlist (or its old name
// limit-whitelist); nil when no limit is set.
func parseIngressRateLimit(st *ingressState, f *ingressFeatures, str func(string) string, number func(string, int) int, warn func(name, msg string)) *table.RateLimit {
	rl := &table.RateLimit{Name: "ingress/" + st.obj.Namespace + "/" + st.obj.Name + "/rate-limit",
		PerSecond: number("limit-rps", 0), PerMinute: number("limit-rpm", 0), Connections: number("limit-connections", 0), Status: nginxLimitStatus}
	if rl.PerSecond == 0 && rl.PerMinute == 0 && rl.Connections == 0 {
		return nil
	}
	mult := number("limit-burst-multiplier", nginxBurstMultiplier)
	if mult < 1 {
		mult = nginxBurstMultiplier
	}
	rl.BurstPerSecond, rl.BurstPerMinute = rl.PerSecond*mult, rl.PerMinute*mult
	for _, name := range []string{"limit-allowlist", "limit-whitelist"} {
		if v := str(name); v != "" {
			rl.Exempt = cidrList(v, name, warn)
			break
		}
	}
	for _, name := range []string{"limit-rps", "limit-rpm", "limit-connections"} {
		if str(name) != "" {
			f.from = append(f.from, IngressNginxAnnotationPrefix+name)
		}
	}
	return rl
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

// ingressCustomHeaders reads the ConfigMap custom-headers names
// ("namespace/name", or a name in the Ingress's namespace): its entries are
// set on every response (more_set_headers). A ConfigMap that is missing or
// in another namespace makes ingress-nginx deny the location (503): denied
// says why.
func (t *translator) ingressCustomHeaders(st *ingressState, ref string, warn func(name, msg string)) (hs []table.Header, denied string) {
	ns, name, ok := t.ingressRef(st, "custom-headers", ref)
	if !ok {
		return nil, IngressNginxAnnotationPrefix + "custom-headers: ConfigMap " + ref + " is in another namespace"
	}
	cm := t.tr.ConfigMap(ns, name)
	if cm == nil {
		warn("custom-headers", "ConfigMap "+ns+"/"+name+" not found: ingress-nginx denies the location with 503, and so does gwdev")
		return nil, IngressNginxAnnotationPrefix + "custom-headers: ConfigMap " + ns + "/" + name + " not found"
	}
	hs = []table.Header{}
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		hs = append(hs, table.Header{Name: textprotoCanonical(k), Value: cm.Data[k]})
	}
	return hs, ""
}

// ingressRuleSettings gives a location's rule the settings of this file:
// CORS and custom headers as filters (before the backend is chosen, so
// gwdev's own answers carry them too), affinity, timeouts.
func (t *translator) ingressRuleSettings(r *engine.RouteRule, l *nginxLocation, a *ingressAnnotations) {
	if a.cors != nil {
		r.Filters = append(r.Filters, table.Filter{Type: table.FilterCORS, CORS: a.cors})
	}
	if a.customHeaders != nil {
		r.Filters = append(r.Filters, table.Filter{Type: table.FilterResponseHeaderModifier, ResponseHeaderModifier: &table.HeaderModifier{Set: a.customHeaders}})
	}
	if a.session != nil {
		s := *a.session
		if s.Path == "" {
			s.Path = cmp.Or(l.ingPath, "/")
		}
		r.SessionPersistence = &s
	}
	r.Timeouts = a.timeouts
	if a.mirror != nil {
		b := t.ingressURLBackend(r.Name+"/mirror/0", "mirror-target", a.mirror, l.ns)
		if a.mirror.Scheme == "https" && b.Invalid == "" {
			b.TLS = &table.BackendTLS{Policy: "annotation " + IngressNginxAnnotationPrefix + "mirror-target", NoVerify: true}
		}
		r.Filters = append(r.Filters, table.Filter{Type: table.FilterRequestMirror, RequestMirror: &table.Mirror{Index: len(r.Mirrors), Fraction: 1}})
		r.Mirrors = append(r.Mirrors, b)
	}
}

// ingressPolicy completes a location's rule policy with the body limit,
// basic auth and rate limit (nil when there is nothing to check).
func ingressPolicy(p *table.RulePolicy, a *ingressAnnotations, redirects bool) *table.RulePolicy {
	if a.bodyLimit == 0 && (redirects || a.basicAuth == nil && a.rateLimit == nil) {
		return p
	}
	if p == nil {
		p = &table.RulePolicy{Profile: "ingress-nginx"}
	}
	p.MaxRequestBody = a.bodyLimit
	if !redirects {
		p.BasicAuth, p.RateLimit = a.basicAuth, a.rateLimit
	}
	p.From = a.from
	return p
}

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
	ep := &table.ErrorPages{Codes: a.errorCodes, From: "annotation " + IngressNginxAnnotationPrefix + "custom-http-errors"}
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
		t.noteAt("", engine.SeverityWarning, l.ing.key, engine.AnnotationField(IngressNginxAnnotationPrefix+"default-backend"), "", "annotation "+IngressNginxAnnotationPrefix+"default-backend: Service "+l.ns+"/"+a.defaultBackend+
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

// oneOrMany is one when n is 1, else many.
func oneOrMany(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
