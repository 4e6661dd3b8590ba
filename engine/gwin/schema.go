package gwin

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/gwdev/gwdev/engine/table"
)

// The gwin settings schema: every setting the gwin reference defines, as a
// dotted path. Annotations write a path after the "gwin.yandex.cloud/"
// prefix ("listeners.http.protocolSettings.allowHTTP10"); policy resources
// write the same path as nested fields of spec.policy. {name} segments are
// user-chosen (a listener name, a principal group); listener, rule and host
// names may contain dots.

// gwinAnnotationPrefix starts every gwin annotation.
const gwinAnnotationPrefix = "gwin.yandex.cloud/"

// valueKind is the type of a setting's value.
type valueKind int

const (
	vBool       valueKind = iota // true or false
	vInt                         // an integer in [min, max]
	vDuration                    // a Go duration such as 300s, not negative
	vString                      // any text
	vStringList                  // comma-separated texts (a list in policies)
	vIntList                     // comma-separated integers in [min, max]
	vEnum                        // one of enum
	vEnumList                    // comma-separated values of enum
	vCIDRList                    // comma-separated CIDR blocks
	vIPOrCIDR                    // an IP address or CIDR block
	vRegex                       // an RE2 regular expression
	vPEM                         // a PEM certificate
	vHeaderName                  // an HTTP header name
)

// settingSpec is one setting of the schema.
type settingSpec struct {
	// pattern is the dotted path with {name} placeholders.
	pattern string
	// re compiles the pattern on first use: most runs never read a gwin
	// setting, and compiling them all cost every gwdev start 8 ms.
	re   func() *regexp.Regexp
	kind valueKind
	// min and max bound vInt and vIntList values.
	min, max int64
	// enum lists the values of vEnum and vEnumList.
	enum []string
	// emulated is true when gwdev's data plane does what the setting asks;
	// the others are validated and listed as not emulated locally.
	emulated bool
	// scope is "listener", "rule" or "host" for settings that exist once
	// for all (listeners.…) and once per name (listener.{listener}.…);
	// named says which form this spec is.
	scope string
	named bool
}

// settingDef is a schema entry before it is expanded and compiled.
type settingDef struct {
	path     string
	kind     valueKind
	min, max int64
	enum     []string
	emulated bool
}

// gwinSchema is the settings of one kind of object (and its policy kind).
type gwinSchema struct {
	// object names the kind in messages ("Gateway", "route").
	object string
	specs  []*settingSpec
}

const maxInt32 = math.MaxInt32

var (
	rbacDefs = []settingDef{
		{path: "rbac.action", kind: vEnum, enum: []string{table.RBACAllow, table.RBACDeny}, emulated: true},
		{path: "rbac.principals.{group}.{principal}.header.name", kind: vHeaderName, emulated: true},
		{path: "rbac.principals.{group}.{principal}.header.exact", kind: vString, emulated: true},
		{path: "rbac.principals.{group}.{principal}.header.prefix", kind: vString, emulated: true},
		{path: "rbac.principals.{group}.{principal}.header.regex", kind: vRegex, emulated: true},
		{path: "rbac.principals.{group}.{principal}.ip.remoteIp", kind: vIPOrCIDR, emulated: true},
		{path: "rbac.principals.{group}.{principal}.any", kind: vBool, emulated: true},
	}
	rateLimitDefs = []settingDef{
		{path: "rateLimit.allRequests.perSecond", kind: vInt, min: 0, max: maxInt32},
		{path: "rateLimit.allRequests.perMinute", kind: vInt, min: 0, max: maxInt32},
		{path: "rateLimit.requestsPerIP.perSecond", kind: vInt, min: 0, max: maxInt32},
		{path: "rateLimit.requestsPerIP.perMinute", kind: vInt, min: 0, max: maxInt32},
	}
	// listenerDefs are the per-listener settings of Gateways and
	// ListenerSets.
	listenerDefs = []settingDef{
		{path: "http.protocolSettings.allowHTTP10", kind: vBool, emulated: true},
		{path: "http.protocolSettings.http2Options.maxConcurrentStreams", kind: vInt, min: 1, max: maxInt32, emulated: true},
		{path: "stream.idleTimeout", kind: vDuration, emulated: true},
		{path: "albListenerName", kind: vString},
		{path: "albHTTPRouterName", kind: vString},
		{path: "attach.virtualHosts.httpRouterID", kind: vString},
	}
	// routerDefs are the HTTP router settings of a Gateway's listeners.
	routerDefs = append([]settingDef{{path: "securityProfileID", kind: vString}}, rbacDefs...)

	tlsDefs = func(prefix string) []settingDef {
		return []settingDef{
			{path: prefix + "tls.sni", kind: vString},
			{path: prefix + "tls.trustedCA.id", kind: vString},
			{path: prefix + "tls.trustedCA.bytes", kind: vPEM},
		}
	}
	// ruleDefs are the settings of route rules (rules.… and
	// rule.{rule}.…).
	ruleDefs = concatDefs([]settingDef{
		{path: "backends.http.useHTTP2", kind: vBool},
		{path: "backends.stream.enableProxy", kind: vBool},
		{path: "backends.stream.keepConnectionsOnHostHealthFailure", kind: vBool},
		{path: "backends.balancing.mode", kind: vEnum, enum: []string{"ROUND_ROBIN", "LEAST_REQUEST", "RANDOM", "RING_HASH", "MAGLEV_HASH"}},
		{path: "backends.balancing.localityAwareRouting", kind: vInt, min: 0, max: 100},
		{path: "backends.balancing.strictLocality", kind: vBool},
		{path: "backends.balancing.panicThreshold", kind: vInt, min: 0, max: 100},
		{path: "backends.hc.timeout", kind: vDuration},
		{path: "backends.hc.interval", kind: vDuration},
		{path: "backends.hc.healthyThreshold", kind: vInt, min: 0, max: maxInt32},
		{path: "backends.hc.unhealthyThreshold", kind: vInt, min: 0, max: maxInt32},
		{path: "backends.hc.port", kind: vInt, min: 1, max: 65535},
		{path: "backends.hc.http.path", kind: vString},
		{path: "backends.hc.http.host", kind: vString},
		{path: "backends.hc.http.useHTTP2", kind: vBool},
		{path: "backends.hc.http.expectedStatuses", kind: vIntList, min: 100, max: 599},
		{path: "backends.hc.grpc.serviceName", kind: vString},
		{path: "backends.hc.stream.send", kind: vString},
		{path: "backends.hc.stream.receive", kind: vString},
		{path: "backends.hc.transportSettings.plaintext", kind: vBool},
	}, tlsDefs("backends.hc.transportSettings."), tlsDefs("backends."), []settingDef{
		{path: "sessionAffinity.header.name", kind: vHeaderName},
		{path: "sessionAffinity.cookie.name", kind: vString},
		{path: "sessionAffinity.cookie.ttl", kind: vDuration},
		{path: "sessionAffinity.sourceIP", kind: vBool},
		{path: "sessionAffinity.connection.sourceIP", kind: vBool},
		{path: "timeout", kind: vDuration, emulated: true},
		{path: "idleTimeout", kind: vDuration},
		{path: "httpUpgradeTypes", kind: vStringList},
		{path: "http.upgradeTypes", kind: vStringList},
		{path: "http.regexRewrite.regex", kind: vRegex},
		{path: "http.regexRewrite.substitute", kind: vString},
		{path: "hostRewrite.auto", kind: vBool},
		{path: "hostRewrite.replace", kind: vString},
		{path: "securityProfileID", kind: vString},
	}, rateLimitDefs, rbacDefs)
	// hostDefs are the settings of a route's virtual hosts (hosts.… and
	// host.{host}.…).
	hostDefs = concatDefs([]settingDef{{path: "securityProfileID", kind: vString}}, rateLimitDefs, rbacDefs)

	// grpcCodeNames are the gRPC status names, by code.
	grpcCodeNames = []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
		"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
		"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}
	httpCodeIntervals = []string{"HTTP_1XX", "HTTP_2XX", "HTTP_3XX", "HTTP_4XX", "HTTP_5XX", "HTTP_ALL"}
)

func concatDefs(lists ...[]settingDef) []settingDef {
	var out []settingDef
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// The schemas of the kinds gwin reads settings from, built on first use
// (2,200 allocations at every process start otherwise, `gwdev version`
// included; issue 42, session 19).
var (
	gwinGatewaySchema = sync.OnceValue(func() *gwinSchema {
		return buildSchema("Gateway", concatDefs([]settingDef{
			{path: "subnets", kind: vStringList},
			{path: "securityGroups", kind: vStringList},
			{path: "allowZonalShift", kind: vBool},
			{path: "logs.logGroupID", kind: vString},
			{path: "logs.disable", kind: vBool, emulated: true},
			{path: "logs.discardRule.{rule}.httpCodes", kind: vIntList, min: 100, max: 599, emulated: true},
			{path: "logs.discardRule.{rule}.httpCodeIntervals", kind: vEnumList, enum: httpCodeIntervals, emulated: true},
			{path: "logs.discardRule.{rule}.grpcCodes", kind: vEnumList, enum: grpcCodeNames, emulated: true},
			{path: "logs.discardRule.{rule}.discardPercent", kind: vInt, min: 0, max: 100, emulated: true},
			{path: "autoScale.minZoneSize", kind: vInt, min: 2, max: maxInt32},
			{path: "autoScale.maxSize", kind: vInt, min: 0, max: maxInt32},
			{path: "zone.{zone}.receiveTraffic", kind: vBool},
		}, scoped("listener", concatDefs(listenerDefs, routerDefs))))
	})
	gwinListenerSetSchema = sync.OnceValue(func() *gwinSchema { return buildSchema("ListenerSet", scoped("listener", listenerDefs)) })
	gwinRouteSchema       = sync.OnceValue(func() *gwinSchema {
		return buildSchema("route", concatDefs(scoped("rule", ruleDefs), scoped("host", hostDefs)))
	})
	gwinServiceSchema = sync.OnceValue(func() *gwinSchema {
		return buildSchema("Service", []settingDef{
			{path: "targets.type", kind: vEnum, enum: []string{"Node", "Pod"}},
			{path: "targets.ipFamily", kind: vEnum, enum: []string{"IPv4"}},
			{path: "targets.cidrs", kind: vCIDRList},
			{path: "targets.albZoneMatch", kind: vBool},
			{path: "targets.node.onlyWithPods", kind: vBool},
			{path: "targets.node.addressType", kind: vEnum, enum: []string{"InternalIP", "ExternalIP"}},
			{path: "attach.targetGroup.id", kind: vString},
			{path: "attach.targetGroup.dontUpdatePaths", kind: vStringList},
			{path: "attach.gatewayClass", kind: vString},
			{path: "albTargetGroupName", kind: vString},
		})
	})
)

// scoped expands defs into "<scope>s.<path>" and
// "<scope>.{<scope>}.<path>"; buildSchema recognises both forms.
func scoped(scope string, defs []settingDef) []settingDef {
	var out []settingDef
	for _, d := range defs {
		all, one := d, d
		all.path = scope + "s." + d.path
		one.path = scope + ".{" + scope + "}." + d.path
		out = append(out, all, one)
	}
	return out
}

// placeholder matches a {name} segment of a pattern.
var placeholder = regexp.MustCompile(`\{[a-z-]+\}`)

// buildSchema compiles the patterns: listener, rule and host names match
// any text (dots included), other names one path segment.
func buildSchema(object string, defs []settingDef) *gwinSchema {
	s := &gwinSchema{object: object}
	for _, d := range defs {
		sp := &settingSpec{pattern: d.path, kind: d.kind, min: d.min, max: d.max, enum: d.enum, emulated: d.emulated}
		for _, sc := range []string{"listener", "rule", "host"} {
			switch {
			case strings.HasPrefix(d.path, sc+"s."):
				sp.scope = sc
			case strings.HasPrefix(d.path, sc+".{"+sc+"}."):
				sp.scope, sp.named = sc, true
			}
		}
		var re strings.Builder
		re.WriteString("^")
		rest := d.path
		for {
			loc := placeholder.FindStringIndex(rest)
			if loc == nil {
				re.WriteString(regexp.QuoteMeta(rest))
				break
			}
			re.WriteString(regexp.QuoteMeta(rest[:loc[0]]))
			switch rest[loc[0]+1 : loc[1]-1] {
			case "listener", "rule", "host":
				re.WriteString(`(.+)`)
			default:
				re.WriteString(`([^.]+)`)
			}
			rest = rest[loc[1]:]
		}
		re.WriteString("$")
		src := re.String()
		sp.re = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
		s.specs = append(s.specs, sp)
	}
	return s
}

// match finds the spec of a dotted path and the values of its
// placeholders. Names may contain dots, so a path can match several
// patterns ("rule.a.backends.hc.timeout" is also rule "a.backends.hc"'s
// timeout): the match with the shortest names wins.
func (s *gwinSchema) match(path string) (*settingSpec, []string) {
	var best *settingSpec
	var vars []string
	bestLen := -1
	for _, sp := range s.specs {
		m := sp.re().FindStringSubmatch(path)
		if m == nil {
			continue
		}
		n := 0
		for _, v := range m[1:] {
			n += len(v)
		}
		if bestLen < 0 || n < bestLen {
			best, vars, bestLen = sp, m[1:], n
		}
	}
	return best, vars
}

// isLeaf reports whether path names a setting (so that a policy giving an
// object there is a type error, not an unknown key).
func (s *gwinSchema) isLeaf(path string) (*settingSpec, bool) {
	sp, _ := s.match(path)
	return sp, sp != nil
}

// suggest lists the known settings under the longest prefix path shares
// with the schema, for "unknown setting" messages: the prefix ("" when
// none) and the known continuations, sorted.
func (s *gwinSchema) suggest(path string) (string, []string) {
	segs := strings.Split(path, ".")
	best := 0
	var cands []*settingSpec
	for _, sp := range s.specs {
		n := commonSegments(strings.Split(sp.pattern, "."), segs)
		switch {
		case n > best:
			best, cands = n, []*settingSpec{sp}
		case n == best:
			cands = append(cands, sp)
		}
	}
	prefix := ""
	if best > 0 {
		prefix = strings.Join(segs[:best], ".") + "."
	}
	seen := map[string]bool{}
	var out []string
	for _, sp := range cands {
		rest := strings.Join(strings.Split(sp.pattern, ".")[best:], ".")
		if best == 0 {
			rest = strings.Split(sp.pattern, ".")[0]
		}
		if !seen[rest] {
			seen[rest] = true
			out = append(out, rest)
		}
	}
	sort.Strings(out)
	if len(out) > 8 {
		out = firstSegments(out)
	}
	return prefix, out
}

// firstSegments shortens a long list of continuations to their first
// segments ("backends.hc.port" → "backends.…").
func firstSegments(list []string) []string {
	var out []string
	for _, s := range list {
		if head, _, more := strings.Cut(s, "."); more {
			s = head + ".…"
		}
		if !containsString(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// commonSegments counts the leading segments of a pattern a path matches
// ({name} matches any one segment). A path that matches the whole pattern
// but is longer counts as not matching the last segment.
func commonSegments(pattern, path []string) int {
	n := 0
	for n < len(pattern) && n < len(path) {
		p := pattern[n]
		if !placeholder.MatchString(p) && p != path[n] {
			break
		}
		n++
	}
	if n == len(pattern) {
		n--
	}
	return n
}
