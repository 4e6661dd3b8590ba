package ingressnginx

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// This file is the CORS and rate-limit family: enable-cors and the
// cors-* settings (validated as ingress-nginx validates them), and
// limit-rps, limit-rpm, limit-connections, limit-burst-multiplier and
// limit-whitelist (nginx's limit_req and limit_conn).

// ingress-nginx's validation of the CORS annotations: a value that does not
// match is replaced by the default.
var (
	corsOriginRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://(\*\.)?[A-Za-z0-9.-]+(:[0-9]+)?$`)
	corsMethodsRE = regexp.MustCompile(`^([A-Za-z]+,?\s?)+$`)
	corsHeadersRE = regexp.MustCompile(`^([A-Za-z0-9\-\_]+,?\s?)+$`)
	corsExposeRE  = regexp.MustCompile(`^(([A-Za-z0-9\-\_]+|\*),?\s?)+$`)
)

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
			f.from = append(f.from, AnnotationPrefix+name)
		}
	}
	return rl
}
