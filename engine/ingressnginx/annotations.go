package ingressnginx

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
)

// AnnotationPrefix is the prefix of ingress-nginx's annotations
// (its --annotations-prefix default).
const AnnotationPrefix = "nginx.ingress.kubernetes.io/"

// Annotation is one annotation ingress-nginx documents and what gwdev
// does with it.
type Annotation struct {
	// Name is the annotation without AnnotationPrefix.
	Name string
	// Test names the test that proves the emulation (emulated ones only).
	Test string
	// Nginx says what ingress-nginx does with it, for the warning a
	// reported annotation gets.
	Nginx string
	// Ref is the kind of object the annotation's value names ("Secret" or
	// "ConfigMap", as "namespace/name" or a name in the Ingress's
	// namespace; "": none). ingress-nginx refuses one in another namespace
	// (ingressRef).
	Ref string
	// Security is true for an annotation that restricts which clients
	// reach the backend, or how often (authentication, client
	// certificates, address lists, rate limits, a WAF): a conversion that
	// drops it lets more clients in, and gwdev migrate exits 1.
	Security bool
	// Deny is true for a Security annotation that turns a check on by
	// itself: where gwdev does not emulate it, the Ingress's locations
	// answer 403 rather than let clients through unchecked. The other
	// Security annotations only tune a check another annotation turns on
	// (auth-tls-verify-depth, auth-tls-match-cn: auth-tls-secret denies),
	// or act only with controller-wide ConfigMap settings an Ingress cannot
	// carry (enable-global-auth, global-rate-limit: without them
	// ingress-nginx ignores the annotation too), so denying on them would
	// refuse what ingress-nginx serves.
	Deny bool
}

// AnnotationsEmulated are the annotations gwdev reproduces on the
// data plane, each with the test that proves it.
func AnnotationsEmulated() []Annotation { return ingressEmulated }

// AnnotationsReported are the annotations gwdev does not reproduce:
// an Ingress carrying one gets a warning naming it and what ingress-nginx
// would have done.
func AnnotationsReported() []Annotation { return ingressReported }

var ingressEmulated = []Annotation{
	{Name: "use-regex", Test: "TestIngressNginxBehaviour/use-regex", Nginx: "matches every path of the host as a case-insensitive regular expression prefix (PCRE; gwdev matches with RE2 and leaves out, with a warning, a path RE2 cannot compile)"},
	{Name: "rewrite-target", Test: "TestIngressNginxBehaviour/rewrite-target", Nginx: "rewrites the path with the path's capture groups, and turns on regex matching for the host"},
	{Name: "ssl-redirect", Test: "TestIngressNginxBehaviour/ssl-redirect", Nginx: "redirects HTTP to HTTPS with 308 when the host has TLS (default true)"},
	{Name: "force-ssl-redirect", Test: "TestIngressNginxBehaviour/force-ssl-redirect", Nginx: "redirects HTTP to HTTPS with 308 even without TLS"},
	{Name: "preserve-trailing-slash", Test: "TestIngressNginxBehaviour/ssl-redirect", Nginx: "keeps the trailing slash in the HTTPS redirect"},
	{Name: "permanent-redirect", Test: "TestIngressNginxBehaviour/permanent-redirect", Nginx: "answers every request with a 301 to the URL"},
	{Name: "permanent-redirect-code", Test: "TestIngressNginxBehaviour/permanent-redirect", Nginx: "the status of permanent-redirect"},
	{Name: "temporal-redirect", Test: "TestIngressNginxBehaviour/temporal-redirect", Nginx: "answers every request with a 302 to the URL"},
	{Name: "temporal-redirect-code", Test: "TestIngressNginxBehaviour/temporal-redirect", Nginx: "the status of temporal-redirect"},
	{Name: "app-root", Test: "TestIngressNginxBehaviour/app-root", Nginx: "redirects / to the application root with 302"},
	{Name: "upstream-vhost", Test: "TestIngressNginxBehaviour/upstream-vhost", Nginx: "sends this Host header to the backend"},
	{Name: "canary", Test: "TestIngressNginxBehaviour/canary", Nginx: "makes the Ingress a canary of the Ingress with the same host and path"},
	{Name: "canary-by-header", Test: "TestIngressNginxBehaviour/canary", Nginx: "sends requests whose header is always to the canary (never: never)"},
	{Name: "canary-by-header-value", Test: "TestIngressNginxBehaviour/canary", Nginx: "sends requests whose canary header has this value to the canary"},
	{Name: "canary-by-header-pattern", Test: "TestIngressNginxBehaviour/canary", Nginx: "sends requests whose canary header matches this regex to the canary"},
	{Name: "canary-by-cookie", Test: "TestIngressNginxBehaviour/canary", Nginx: "sends requests whose cookie is always to the canary (never: never)"},
	{Name: "canary-weight", Test: "TestIngressNginxBehaviour/canary", Nginx: "sends this share of requests to the canary"},
	{Name: "canary-weight-total", Test: "TestIngressNginxBehaviour/canary", Nginx: "the total canary-weight is out of (default 100)"},
	{Name: "whitelist-source-range", Test: "TestIngressNginxBehaviour/source-range", Nginx: "refuses clients outside these ranges with 403", Security: true},
	{Name: "denylist-source-range", Test: "TestIngressNginxBehaviour/source-range", Nginx: "refuses clients inside these ranges with 403", Security: true},
	{Name: "from-to-www-redirect", Test: "TestIngressNginxBehaviour/from-to-www-redirect", Nginx: "redirects www.host to host or the reverse"},
	{Name: "backend-protocol", Test: "TestIngressNginxFeatures/backend-protocol", Nginx: "speaks HTTP, HTTPS, GRPC, GRPCS, AJP or FCGI to the backend (gwdev: HTTP, HTTPS and GRPCS with TLS not verified and no SNI, as proxy-ssl-verify and proxy-ssl-server-name default to off, GRPC)"},
	{Name: "auth-url", Test: "TestIngressNginxBehaviour/auth-url", Nginx: "asks the URL whether to let each request through (external auth)", Security: true, Deny: true},
	{Name: "auth-response-headers", Test: "TestIngressNginxBehaviour/auth-url", Nginx: "copies these headers of the auth response to the backend request"},
	{Name: "x-forwarded-prefix", Test: "TestIngressNginxBehaviour/x-forwarded-prefix", Nginx: "adds an X-Forwarded-Prefix header to the request"},
	{Name: "affinity", Test: "TestIngressNginxFeatures/affinity", Nginx: "pins clients to an endpoint with a cookie (gwdev's session persistence)"},
	{Name: "affinity-mode", Test: "TestIngressNginxFeatures/affinity", Nginx: "balanced or persistent cookie affinity: the same on gwdev's fixed endpoints, where balanced never moves a session"},
	{Name: "auth-realm", Test: "TestIngressNginxFeatures/basic-auth", Nginx: "the realm of the 401's WWW-Authenticate: Basic challenge"},
	{Name: "auth-secret", Test: "TestIngressNginxFeatures/basic-auth", Nginx: "checks basic auth credentials against the Secret's htpasswd file (bcrypt up to cost 12, $apr1$, {SHA} and {PLAIN} hashes; crypt(3) DES, $1$, $5$, $6$, {SSHA} and costlier bcrypt users are refused); a missing Secret, or one in another namespace, denies with 503", Ref: "Secret", Security: true, Deny: true},
	{Name: "auth-secret-type", Test: "TestIngressNginxFeatures/basic-auth", Nginx: "reads the auth Secret as an htpasswd file (auth-file, key auth) or a user per key (auth-map)"},
	{Name: "auth-type", Test: "TestIngressNginxFeatures/basic-auth", Nginx: "requires basic or digest authentication (gwdev emulates basic; digest denies with 403)", Security: true, Deny: true},
	{Name: "default-backend", Test: "TestIngressNginxFeatures/default-backend", Nginx: "serves requests whose Service has no endpoints (or is missing) from this Service's first port; with custom-http-errors also the listed error answers"},
	{Name: "custom-http-errors", Test: "TestIngressNginxFeatures/custom-http-errors", Nginx: "replaces the backend's answers of these statuses with the default-backend Service's answer (else its own default backend's 404), sending it X-Code, X-Format, X-Original-URI and the location's names"},
	{Name: "service-upstream", Test: "TestIngressNginxFeatures/service-upstream", Nginx: "proxies to the Service's cluster IP instead of its endpoints, so kube-proxy spreads connections over the Pods; on loopback gwdev sends each request to one of the Service's endpoints in turn, which is observably the same except that an affinity cookie would pin only the cluster IP (gwdev warns and keeps pinning the endpoint)"},
	{Name: "mirror-target", Test: "TestIngressNginxFeatures/mirror-target", Nginx: "sends a copy of each request (its body too) to this URL and ignores the answer; gwdev emulates http(s)://<Service>[:port]$request_uri and sends the copy as the backend gets it: the path after rewrite-target and the request's Host, where nginx sends $request_uri with mirror-host or the target's host name"},
	{Name: "custom-headers", Test: "TestIngressNginxFeatures/custom-headers", Nginx: "sets the ConfigMap's (namespace/name) entries as response headers (more_set_headers; ingress-nginx also wants them in the controller's global-allowed-response-headers, which gwdev assumes); a missing ConfigMap, or one in another namespace, denies with 503", Ref: "ConfigMap"},
	{Name: "enable-cors", Test: "TestIngressNginxFeatures/cors", Nginx: "answers OPTIONS from allowed origins with 204 and adds CORS headers to every answer (Access-Control-Allow-Origin is the request's origin, or * for any)"},
	{Name: "cors-allow-origin", Test: "TestIngressNginxFeatures/cors", Nginx: "the origins CORS allows (default *; protocol://host[:port], *. for one level of subdomains). gwdev gives an origin without a port the scheme's, where nginx's regex wants it written the same"},
	{Name: "cors-allow-methods", Test: "TestIngressNginxFeatures/cors", Nginx: "the methods CORS allows (default GET, PUT, POST, DELETE, PATCH, OPTIONS)"},
	{Name: "cors-allow-headers", Test: "TestIngressNginxFeatures/cors", Nginx: "the headers CORS allows (default DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization)"},
	{Name: "cors-expose-headers", Test: "TestIngressNginxFeatures/cors", Nginx: "the headers CORS exposes (default none)"},
	{Name: "cors-allow-credentials", Test: "TestIngressNginxFeatures/cors", Nginx: "whether CORS allows credentials (default true)"},
	{Name: "cors-max-age", Test: "TestIngressNginxFeatures/cors", Nginx: "how long preflights are cached (default 1728000)"},
	{Name: "limit-connections", Test: "TestIngressNginxFeatures/limit-connections", Nginx: "limits the requests in progress per client IP (503 beyond)", Security: true},
	{Name: "limit-rps", Test: "TestIngressNginxFeatures/limit-rps", Nginx: "limits requests per second per client IP, burst admitted at once (limit_req nodelay), 503 beyond", Security: true},
	{Name: "limit-rpm", Test: "TestIngressNginxFeatures/limit-rps", Nginx: "limits requests per minute per client IP, burst admitted at once, 503 beyond", Security: true},
	{Name: "limit-burst-multiplier", Test: "TestIngressNginxFeatures/limit-rps", Nginx: "the burst of limit-rps and limit-rpm, as a multiple of the rate (default 5)"},
	{Name: "limit-whitelist", Test: "TestIngressNginxFeatures/limit-rps", Nginx: "exempts these client ranges from rate limits"},
	{Name: "limit-allowlist", Test: "TestIngressNginxFeatures/limit-rps", Nginx: "exempts these client ranges from rate limits"},
	{Name: "proxy-body-size", Test: "TestIngressNginxFeatures/proxy-body-size", Nginx: "refuses request bodies larger than this with 413 (default 1m, 0: no limit): by Content-Length before anything else, a chunked body while it is read"},
	{Name: "proxy-connect-timeout", Test: "TestIngressNginxFeatures/proxy-timeouts", Nginx: "the timeout to connect to the backend (default 5s). gwdev bounds each backend attempt by the sum of the three proxy timeouts (504 beyond), where nginx bounds each connect, write and read separately: a response streaming longer than the sum is cut by gwdev only"},
	{Name: "proxy-send-timeout", Test: "TestIngressNginxFeatures/proxy-timeouts", Nginx: "the timeout between two writes to the backend (default 60s); part of gwdev's attempt timeout, the sum of the three"},
	{Name: "proxy-read-timeout", Test: "TestIngressNginxFeatures/proxy-timeouts", Nginx: "the timeout between two reads from the backend (default 60s); part of gwdev's attempt timeout, the sum of the three (not a timeout between two reads)"},
	{Name: "session-cookie-name", Test: "TestIngressNginxFeatures/affinity", Nginx: "the affinity cookie's name (default INGRESSCOOKIE)"},
	{Name: "session-cookie-path", Test: "TestIngressNginxFeatures/affinity", Nginx: "the affinity cookie's path (default the Ingress path)"},
	{Name: "session-cookie-expires", Test: "TestIngressNginxFeatures/affinity", Nginx: "the affinity cookie's lifetime in seconds (gwdev sends it as Max-Age, and the session ends then)"},
	{Name: "session-cookie-max-age", Test: "TestIngressNginxFeatures/affinity", Nginx: "the affinity cookie's Max-Age in seconds (the session ends then)"},
}

var ingressReported = []Annotation{
	{Name: "affinity-canary-behavior", Nginx: "keeps canary clients on the canary (sticky) or not (legacy)"},
	{Name: "auth-tls-secret", Nginx: "requires client certificates signed by the Secret's CA", Ref: "Secret", Security: true, Deny: true},
	{Name: "auth-tls-verify-depth", Nginx: "limits the client certificate chain depth", Security: true},
	{Name: "auth-tls-verify-client", Nginx: "turns client certificate verification on, off or optional", Security: true, Deny: true},
	{Name: "auth-tls-error-page", Nginx: "redirects clients whose certificate fails to this page"},
	{Name: "auth-tls-pass-certificate-to-upstream", Nginx: "passes the client certificate to the backend in ssl-client-cert"},
	{Name: "auth-tls-match-cn", Nginx: "requires the client certificate's CN to match", Security: true},
	{Name: "auth-method", Nginx: "the method of the external auth request"},
	{Name: "auth-signin", Nginx: "redirects requests the external auth refuses to this sign-in page"},
	{Name: "auth-signin-redirect-param", Nginx: "names the sign-in page's parameter holding the original URL"},
	{Name: "auth-proxy-set-headers", Nginx: "sends the ConfigMap's headers to the auth service", Ref: "ConfigMap"},
	{Name: "auth-request-redirect", Nginx: "sets X-Auth-Request-Redirect on the auth request"},
	{Name: "auth-cache-key", Nginx: "caches auth responses by this key"},
	{Name: "auth-cache-duration", Nginx: "how long auth responses are cached"},
	{Name: "auth-keepalive", Nginx: "keeps connections to the auth service open"},
	{Name: "auth-keepalive-share-vars", Nginx: "shares variables with keepalive auth requests"},
	{Name: "auth-keepalive-requests", Nginx: "requests per keepalive auth connection"},
	{Name: "auth-keepalive-timeout", Nginx: "idle timeout of keepalive auth connections"},
	{Name: "auth-always-set-cookie", Nginx: "sets the auth response's cookies on every response"},
	{Name: "auth-snippet", Nginx: "adds nginx configuration to the auth location", Security: true, Deny: true},
	{Name: "enable-global-auth", Nginx: "applies (or not) the ConfigMap's global-auth-url", Security: true},
	{Name: "client-body-buffer-size", Nginx: "buffers request bodies in memory up to this size"},
	{Name: "configuration-snippet", Nginx: "adds raw nginx configuration to the location"},
	{Name: "http2-push-preload", Nginx: "turns Link preload headers into HTTP/2 pushes"},
	{Name: "limit-rate", Nginx: "limits response bytes per second per connection"},
	{Name: "limit-rate-after", Nginx: "starts limit-rate after this many bytes"},
	{Name: "global-rate-limit", Nginx: "limits requests per window across controllers (memcached)", Security: true},
	{Name: "global-rate-limit-window", Nginx: "the window of global-rate-limit"},
	{Name: "global-rate-limit-key", Nginx: "the key global-rate-limit counts by"},
	{Name: "global-rate-limit-ignored-cidrs", Nginx: "exempts these ranges from global-rate-limit"},
	{Name: "proxy-cookie-domain", Nginx: "rewrites the domain of backend cookies"},
	{Name: "proxy-cookie-path", Nginx: "rewrites the path of backend cookies"},
	{Name: "proxy-next-upstream", Nginx: "on which errors a request is retried on the next endpoint"},
	{Name: "proxy-next-upstream-timeout", Nginx: "how long retries on the next endpoint may take"},
	{Name: "proxy-next-upstream-tries", Nginx: "how many endpoints a request is tried on"},
	{Name: "proxy-request-buffering", Nginx: "buffers request bodies before forwarding"},
	{Name: "proxy-redirect-from", Nginx: "rewrites backend Location headers from this text"},
	{Name: "proxy-redirect-to", Nginx: "rewrites backend Location headers to this text"},
	{Name: "proxy-http-version", Nginx: "the HTTP version spoken to the backend"},
	{Name: "proxy-ssl-secret", Nginx: "presents this client certificate to HTTPS backends", Ref: "Secret"},
	{Name: "proxy-ssl-ciphers", Nginx: "the ciphers offered to HTTPS backends"},
	{Name: "proxy-ssl-name", Nginx: "the name verified and sent as SNI to HTTPS backends"},
	{Name: "proxy-ssl-protocols", Nginx: "the TLS versions offered to HTTPS backends"},
	{Name: "proxy-ssl-verify", Nginx: "verifies HTTPS backends' certificates"},
	{Name: "proxy-ssl-verify-depth", Nginx: "the chain depth verified for HTTPS backends"},
	{Name: "proxy-ssl-server-name", Nginx: "sends SNI to HTTPS backends"},
	{Name: "proxy-buffering", Nginx: "buffers backend responses"},
	{Name: "proxy-buffers-number", Nginx: "the number of response buffers"},
	{Name: "proxy-buffer-size", Nginx: "the size of the response header buffer"},
	{Name: "proxy-busy-buffers-size", Nginx: "the size of busy response buffers"},
	{Name: "proxy-max-temp-file-size", Nginx: "the temp file size for buffered responses"},
	{Name: "enable-rewrite-log", Nginx: "logs rewrites at notice level"},
	{Name: "satisfy", Nginx: "lets a request through when any (not all) auth passes", Security: true, Deny: true},
	{Name: "server-alias", Nginx: "serves the host under these other names too"},
	{Name: "server-snippet", Nginx: "adds raw nginx configuration to the server"},
	{Name: "session-cookie-domain", Nginx: "the affinity cookie's domain"},
	{Name: "session-cookie-secure", Nginx: "sets Secure on the affinity cookie"},
	{Name: "session-cookie-change-on-failure", Nginx: "moves the affinity cookie when its endpoint fails"},
	{Name: "session-cookie-samesite", Nginx: "the affinity cookie's SameSite"},
	{Name: "session-cookie-conditional-samesite-none", Nginx: "omits SameSite=None for browsers that reject it"},
	{Name: "ssl-passthrough", Nginx: "passes TLS through to the backend by SNI (with --enable-ssl-passthrough)"},
	{Name: "stream-snippet", Nginx: "adds raw nginx stream configuration"},
	{Name: "upstream-hash-by", Nginx: "balances by a consistent hash of this key"},
	{Name: "upstream-hash-by-subset", Nginx: "hashes to subsets of endpoints"},
	{Name: "upstream-hash-by-subset-size", Nginx: "the size of hash subsets (default 3)"},
	{Name: "load-balance", Nginx: "the load balancing algorithm (round_robin, ewma)"},
	{Name: "ssl-ciphers", Nginx: "the TLS ciphers of the server"},
	{Name: "ssl-prefer-server-ciphers", Nginx: "prefers the server's cipher order"},
	{Name: "connection-proxy-header", Nginx: "the Connection header sent to the backend"},
	{Name: "enable-access-log", Nginx: "turns the access log off for the Ingress"},
	{Name: "enable-opentracing", Nginx: "turns OpenTracing on or off"},
	{Name: "opentracing-trust-incoming-span", Nginx: "trusts incoming OpenTracing spans"},
	{Name: "enable-opentelemetry", Nginx: "turns OpenTelemetry on or off"},
	{Name: "opentelemetry-trust-incoming-span", Nginx: "trusts incoming OpenTelemetry spans"},
	{Name: "opentelemetry-operation-name", Nginx: "names the OpenTelemetry span"},
	{Name: "enable-influxdb", Nginx: "reports requests to InfluxDB"},
	{Name: "influxdb-measurement", Nginx: "the InfluxDB measurement"},
	{Name: "influxdb-port", Nginx: "the InfluxDB port"},
	{Name: "influxdb-host", Nginx: "the InfluxDB host"},
	{Name: "influxdb-server-name", Nginx: "the InfluxDB server name"},
	{Name: "enable-modsecurity", Nginx: "runs ModSecurity on the location", Security: true, Deny: true},
	{Name: "enable-owasp-core-rules", Nginx: "runs the OWASP core rule set", Security: true, Deny: true},
	{Name: "modsecurity-transaction-id", Nginx: "the ModSecurity transaction id"},
	{Name: "modsecurity-snippet", Nginx: "adds ModSecurity rules", Security: true, Deny: true},
	{Name: "mirror-request-body", Nginx: "sends the body to the mirror (default on)"},
	{Name: "mirror-host", Nginx: "the Host header of mirrored requests"},
	{Name: "disable-proxy-intercept-errors", Nginx: "does not intercept backend errors for custom-http-errors"},
}

// ingressAnnotations are the emulated annotations of one Ingress, parsed.
type ingressAnnotations struct {
	useRegex bool
	// rewriteTarget is nginx's rewrite replacement ("": none), with $n
	// written as ${n} for the data plane; nginxRewrite is it as written.
	rewriteTarget, nginxRewrite string
	// sslRedirect (default true) and forceSSLRedirect redirect HTTP to
	// HTTPS; preserveSlash keeps a trailing slash in that redirect.
	sslRedirect, forceSSLRedirect, preserveSlash bool
	// redirect is permanent-redirect or temporal-redirect (nil: none).
	redirect *ingressRedirect
	// appRoot is where "/" is redirected with 302 ("": nowhere).
	appRoot string
	// upstreamVhost is the Host sent to the backend ("": the request's).
	upstreamVhost string
	// forwardedPrefix is the X-Forwarded-Prefix value ("": none).
	forwardedPrefix string
	// grpc is backend-protocol GRPC or GRPCS: HTTP/2 to the backend;
	// backendTLS is HTTPS or GRPCS: TLS to the backend, unverified.
	grpc, backendTLS bool
	// fromToWWW redirects www.host to host, or host to www.host.
	fromToWWW bool
	// canary is set on a canary Ingress (nil: not one).
	canary *ingressCanary
	// allow and deny are whitelist-source-range and denylist-source-range
	// (nil: none).
	allow, deny []string
	// authURL is auth-url (nil: none); authHeaders are
	// auth-response-headers, canonical.
	authURL     *url.URL
	authHeaders []string
	// unemulatedSecurity names a security annotation gwdev does not
	// emulate: the Ingress's locations answer 403 ("": none).
	unemulatedSecurity string
	// denied is why ingress-nginx denies the Ingress's locations: they
	// answer 503, its "location denied" ("": none). Basic auth keeps its
	// own (ingressFeatures.basicAuthDenied).
	denied string
	// ingressFeatures are the rule settings of features.go.
	ingressFeatures
}

// ingressDenies reports whether gwdev denies an Ingress carrying the
// annotation when it does not emulate it (Annotation.Deny).
func ingressDenies(name string) bool {
	an := ingressAnnotationNamed(name)
	return an != nil && an.Deny
}

// parseIngressAnnotations reads the ingress-nginx annotations of an
// Ingress: emulated ones are parsed (a bad value is noted, and ingress-nginx
// ignores it, so gwdev does too); reported ones and unknown ones are noted.
func (t *translator) parseIngressAnnotations(st *ingressState) ingressAnnotations {
	a := ingressAnnotations{sslRedirect: true}
	ann := st.obj.Annotations
	warn := func(name, msg string) {
		t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(AnnotationPrefix+name), "", "annotation "+AnnotationPrefix+name+": "+msg)
	}
	boolean := func(name string, def bool) bool {
		v, ok := ann[AnnotationPrefix+name]
		if !ok {
			return def
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			warn(name, "invalid value "+strconv.Quote(v)+" (want \"true\" or \"false\"); ingress-nginx ignores it")
			return def
		}
		return b
	}
	str := func(name string) string { return ann[AnnotationPrefix+name] }
	a.useRegex = boolean("use-regex", false)
	a.sslRedirect = boolean("ssl-redirect", true)
	a.forceSSLRedirect = boolean("force-ssl-redirect", false)
	a.preserveSlash = boolean("preserve-trailing-slash", false)
	a.fromToWWW = boolean("from-to-www-redirect", false)
	switch v := strings.ToUpper(str("backend-protocol")); v {
	case "", "HTTP":
	case "GRPC":
		a.grpc = true
	case "HTTPS":
		a.backendTLS = true
	case "GRPCS":
		a.grpc, a.backendTLS = true, true
	default:
		warn("backend-protocol", "gwdev emulates HTTP, HTTPS, GRPC and GRPCS, not "+strconv.Quote(v)+": it speaks HTTP/1.1 without TLS to the backend, where ingress-nginx would speak "+v)
	}
	if v := str("rewrite-target"); v != "" {
		a.rewriteTarget, a.nginxRewrite = nginxCaptureRef.ReplaceAllString(v, "$${$1}"), v
	}
	a.appRoot = str("app-root")
	if a.appRoot != "" && !strings.HasPrefix(a.appRoot, "/") {
		warn("app-root", "must be a path starting with /; ingress-nginx ignores it")
		a.appRoot = ""
	}
	a.upstreamVhost = str("upstream-vhost")
	a.forwardedPrefix = str("x-forwarded-prefix")
	a.redirect = t.parseIngressRedirect(ann, warn)
	a.allow = cidrList(str("whitelist-source-range"), "whitelist-source-range", warn)
	a.deny = cidrList(str("denylist-source-range"), "denylist-source-range", warn)
	if v := str("auth-url"); v != "" {
		u, err := url.Parse(v)
		if err == nil && u.Scheme == "http" && u.Hostname() != "" {
			a.authURL = u
			t.noteAt("", engine.SeverityInfo, st.key, engine.AnnotationField(AnnotationPrefix+"auth-url"), "", "annotation "+AnnotationPrefix+"auth-url: emulated as an HTTP ExternalAuth filter, whose "+
				"request carries the URL's path followed by the request's, and Host, method, Content-Length and Authorization only "+
				"(ingress-nginx sends the URL's path and every request header)")
		} else {
			warn("auth-url", "gwdev emulates http:// auth URLs of a Service of the manifests; it denies this Ingress's requests with 403")
		}
		for _, h := range strings.Split(str("auth-response-headers"), ",") {
			if h = strings.TrimSpace(h); h != "" {
				a.authHeaders = append(a.authHeaders, textprotoCanonical(h))
			}
		}
	}
	a.ingressFeatures = t.parseIngressFeatures(st, str, boolean, warn)
	for _, an := range ingressReported {
		if v := str(an.Name); an.Ref != "" && v != "" {
			if _, _, ok := t.ingressRef(st, an.Name, v); !ok && a.denied == "" {
				a.denied = AnnotationPrefix + an.Name + " names a " + an.Ref + " in another namespace"
			}
		}
	}
	if a.denied == "" {
		a.denied = a.headersDenied
	}
	if v := str("auth-type"); v != "" && a.basicAuth == nil && a.basicAuthDenied == "" {
		warn("auth-type", "gwdev emulates basic authentication, not "+strconv.Quote(v)+"; it is a security filter, so gwdev denies the Ingress's requests with 403")
	}
	for _, name := range slices.Sorted(maps.Keys(ann)) {
		if name == AnnotationPrefix+"auth-url" && a.authURL != nil {
			continue
		}
		if (name == AnnotationPrefix+"auth-type" || name == AnnotationPrefix+"auth-secret") && (a.basicAuth != nil || a.basicAuthDenied != "") {
			continue
		}
		if short, ok := strings.CutPrefix(name, AnnotationPrefix); ok && ingressDenies(short) && a.unemulatedSecurity == "" {
			a.unemulatedSecurity = name
		}
	}
	if boolean("canary", false) {
		a.canary = parseIngressCanary(str, warn)
	}
	for _, name := range slices.Sorted(maps.Keys(ann)) {
		short, ok := strings.CutPrefix(name, AnnotationPrefix)
		if !ok {
			continue
		}
		switch an := ingressAnnotationNamed(short); {
		case an == nil:
			warn(short, "not an annotation ingress-nginx documents; it ignores it")
		case an.Test == "":
			msg := "gwdev does not emulate it (ingress-nginx: " + an.Nginx + ")"
			if ingressDenies(short) {
				msg += "; it is a security filter, so gwdev denies the Ingress's requests with 403 rather than let them through unchecked"
			}
			warn(short, msg)
		case a.canary != nil && !strings.HasPrefix(short, "canary"):
			warn(short, "ingress-nginx ignores it on a canary Ingress (the main Ingress's annotations apply), and so does gwdev")
		}
	}
	return a
}

// ingressAllowCrossNamespace is ingress-nginx's ConfigMap option that lets
// annotations name a Secret or ConfigMap of another namespace; false by
// default since controller v1.12.0, and gwdev keeps that default.
const ingressAllowCrossNamespace = "allow-cross-namespace-resources"

// ingressRef resolves the value of annotation name (without the prefix),
// which names a Secret or ConfigMap as "namespace/name" or as a name in
// the Ingress's namespace. A reference to another namespace is refused as
// ingress-nginx refuses it by default, with a warning, and ok is false:
// the object is not read, and the location is denied (503), never served
// without what the annotation asks for.
func (t *translator) ingressRef(st *ingressState, name, ref string) (ns, obj string, ok bool) {
	ns, obj, found := strings.Cut(ref, "/")
	if !found {
		return st.obj.Namespace, ref, true
	}
	if ns == st.obj.Namespace {
		return ns, obj, true
	}
	an := ingressAnnotationNamed(name)
	rule := "its ConfigMap option " + ingressAllowCrossNamespace + " is \"true\" (false by default since controller v1.12.0)"
	said := "ingress-nginx refuses it (\"cross namespace usage of secrets is not allowed\") unless " + rule
	switch name {
	case "auth-tls-secret", "proxy-ssl-secret":
		said = "ingress-nginx refuses it (\"cross namespace secrets are not supported\") unless " + rule
	case "custom-headers":
		said = "ingress-nginx documents the annotation as taking ConfigMaps of the Ingress's namespace only, and gwdev refuses it as ingress-nginx refuses " +
			"the Secret annotations unless " + rule
	}
	t.noteAt("", engine.SeverityWarning, st.key, engine.AnnotationField(AnnotationPrefix+name), "", "annotation "+AnnotationPrefix+name+": "+
		an.Ref+" "+ref+" is in another namespace than the Ingress ("+st.obj.Namespace+"): "+said+". The location answers 503, as ingress-nginx denies "+
		"a location whose annotation it refuses, and gwdev does not read the "+an.Ref+"; put the "+an.Ref+" in namespace "+st.obj.Namespace)
	return ns, obj, false
}

// ingressAnnotationNamed returns the documented annotation (without the
// prefix), or nil.
func ingressAnnotationNamed(name string) *Annotation {
	for _, l := range [][]Annotation{ingressEmulated, ingressReported} {
		for i := range l {
			if l[i].Name == name {
				return &l[i]
			}
		}
	}
	return nil
}
