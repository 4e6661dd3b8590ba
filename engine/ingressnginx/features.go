package ingressnginx

import (
	"cmp"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file holds the ingress-nginx annotations that become rule settings
// of the table rather than matches or redirects: CORS, the request body
// limit, basic auth, rate limits, cookie affinity, proxy timeouts and
// custom response headers (ingress-nginx's annotations page, and the nginx
// directives each one writes: client_max_body_size, auth_basic,
// limit_req/limit_conn, proxy_*_timeout, more_set_headers). Each family is
// parsed in its own file (auth.go, cors_ratelimit.go, backend.go,
// headers.go, errors.go); this one gathers them and applies them to a rule.

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
			f.from = append(f.from, AnnotationPrefix+"proxy-body-size")
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
			b.TLS = &table.BackendTLS{Policy: "annotation " + AnnotationPrefix + "mirror-target", NoVerify: true}
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

// oneOrMany is one when n is 1, else many.
func oneOrMany(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
