package gwin

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gwdev/gwdev/engine"
)

// gwinSetting is one setting given by an annotation or a policy, parsed.
type gwinSetting struct {
	// key is the dotted path ("listener.api.stream.idleTimeout").
	key  string
	spec *settingSpec
	// vars are the placeholder values, in pattern order.
	vars []string
	// value is bool, int64, time.Duration, string, []string, []int64 or
	// netip.Prefix, by spec.kind.
	value any
	// canon renders value for comparisons: two sources agree when their
	// canon strings are equal.
	canon string
	// shown is the value as written, for messages.
	shown string
	// from says where the setting was written: `annotation
	// gwin.yandex.cloud/<key>` or `GatewayPolicy ns/name
	// (spec.policy.<key>)`.
	from string
	// origin is the object that wrote it (annotation: the target itself).
	origin string
}

// scopeName returns the listener, rule or host name of a named setting.
func (s *gwinSetting) scopeName() string {
	if s.spec.named {
		return s.vars[0]
	}
	return ""
}

// sub returns the path after the scope ("stream.idleTimeout" for
// "listener.api.stream.idleTimeout"), or the key when not scoped.
func (s *gwinSetting) sub() string {
	switch {
	case s.spec.scope == "":
		return s.key
	case s.spec.named:
		return strings.TrimPrefix(s.key, s.spec.scope+"."+s.vars[0]+".")
	}
	return strings.TrimPrefix(s.key, s.spec.scope+"s.")
}

// subVars are the placeholder values after the scope name.
func (s *gwinSetting) subVars() []string {
	if s.spec.named {
		return s.vars[1:]
	}
	return s.vars
}

// gwinField is the field a gwin message is about: the first annotation it
// names in the form parseAnnotations writes ("annotation <key>: …"), as
// metadata.annotations[<key>]; "" when it names none. gwin's problems are
// strings until the profile carries them typed; this reads only gwin's own
// format, next to the code that writes it.
func gwinField(msg string) string {
	_, rest, ok := strings.Cut(msg, "annotation ")
	if !ok {
		return ""
	}
	key, _, ok := strings.Cut(rest, ":")
	if !ok || strings.ContainsAny(key, " \t") || !strings.Contains(key, "/") {
		return ""
	}
	return engine.AnnotationField(key)
}

// parseAnnotations reads the gwin annotations of an object.
func parseAnnotations(sc *gwinSchema, key engine.ObjectKey, annotations map[string]string) ([]*gwinSetting, []string) {
	origin := "annotations of " + key.Kind + " " + key.Namespace + "/" + key.Name
	var out []*gwinSetting
	var errs []string
	for _, k := range sortedStringKeys(annotations) {
		path, ok := strings.CutPrefix(k, gwinAnnotationPrefix)
		if !ok {
			continue
		}
		where := "annotation " + k
		sp, vars := sc.match(path)
		if sp == nil {
			errs = append(errs, unknownSetting(sc, where+" is not a gwin "+sc.object+" setting", path))
			continue
		}
		v := annotations[k]
		val, canon, problem := parseValue(sp, v)
		if problem != "" {
			errs = append(errs, fmt.Sprintf("%s: %q %s", where, v, problem))
			continue
		}
		out = append(out, &gwinSetting{key: path, spec: sp, vars: vars, value: val, canon: canon,
			shown: strconv.Quote(v), from: where, origin: origin})
	}
	return out, errs
}

// parsePolicy reads spec.policy of a policy resource: nested fields form
// the same dotted paths annotations use.
func parsePolicy(sc *gwinSchema, policy engine.ObjectKey, spec map[string]any) ([]*gwinSetting, []string) {
	var out []*gwinSetting
	var errs []string
	origin := policy.Kind + " " + policy.Namespace + "/" + policy.Name
	var walk func(path string, v any)
	walk = func(path string, v any) {
		field := "spec.policy." + path
		if m, isMap := v.(map[string]any); isMap {
			if sp, leaf := sc.isLeaf(path); leaf && path != "" {
				errs = append(errs, fmt.Sprintf("%s: an object is not valid: %s", field, want(sp)))
				return
			}
			for _, k := range sortedStringKeys(m) {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, m[k])
			}
			return
		}
		sp, vars := sc.match(path)
		if sp == nil {
			errs = append(errs, unknownSetting(sc, field+" is not a gwin "+sc.object+" setting", path))
			return
		}
		val, canon, problem := parseValue(sp, v)
		if problem != "" {
			errs = append(errs, fmt.Sprintf("%s: %s %s", field, showPolicyValue(v), problem))
			return
		}
		out = append(out, &gwinSetting{key: path, spec: sp, vars: vars, value: val, canon: canon,
			shown: showPolicyValue(v), from: origin + " (" + field + ")", origin: origin})
	}
	if spec != nil {
		walk("", spec)
	}
	return out, errs
}

// unknownSetting words an unknown key with the known settings nearest to it.
func unknownSetting(sc *gwinSchema, what, path string) string {
	prefix, known := sc.suggest(path)
	if prefix == "" {
		return what + "; known settings start with " + strings.Join(known, ", ")
	}
	return what + "; known settings under " + prefix + ": " + strings.Join(known, ", ")
}

// showPolicyValue renders a policy value as YAML would show it.
func showPolicyValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = showPolicyValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// want says what a setting accepts.
func want(sp *settingSpec) string {
	switch sp.kind {
	case vBool:
		return "want true or false"
	case vInt:
		return "want " + intRange(sp)
	case vDuration:
		return "want a non-negative duration such as 300s"
	case vString:
		return "want a string"
	case vStringList:
		return "want a comma-separated list of strings such as a,b"
	case vIntList:
		return "want a comma-separated list of integers, each " + strings.TrimPrefix(intRange(sp), "an integer ") + ", such as 404,500"
	case vEnum:
		return "want one of " + strings.Join(sp.enum, ", ")
	case vEnumList:
		return "want a comma-separated list of " + strings.Join(sp.enum, ", ")
	case vCIDRList:
		return "want a comma-separated list of CIDR blocks such as 10.0.0.0/8,172.16.0.0/12"
	case vIPOrCIDR:
		return "want an IP address or CIDR block such as 10.0.0.0/8"
	case vRegex:
		return "want an RE2 regular expression"
	case vPEM:
		return "want a PEM-encoded X.509 certificate"
	case vHeaderName:
		return "want an HTTP header name such as X-Api-Token (or :method, :path, :authority, :scheme)"
	}
	return "want a value"
}

func intRange(sp *settingSpec) string {
	if sp.max >= maxInt32 {
		return fmt.Sprintf("an integer of at least %d", sp.min)
	}
	return fmt.Sprintf("an integer from %d to %d", sp.min, sp.max)
}

// parseValue checks a value against its spec. Annotation values are
// strings; policy values may also be booleans, numbers and lists (and
// booleans or numbers written as strings). problem is "" when the value is
// valid, else "is not valid: want …" or "is out of range: want …".
func parseValue(sp *settingSpec, v any) (value any, canon string, problem string) {
	bad := func(detail string) (any, string, string) {
		msg := "is not valid: " + want(sp)
		if detail != "" {
			msg += " (" + detail + ")"
		}
		return nil, "", msg
	}
	outOfRange := func() (any, string, string) { return nil, "", "is out of range: " + want(sp) }
	switch sp.kind {
	case vBool:
		switch x := v.(type) {
		case bool:
			return x, strconv.FormatBool(x), ""
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return bad("")
			}
			return b, strconv.FormatBool(b), ""
		}
		return bad("")
	case vInt:
		n, ok := asInt(v)
		if !ok {
			return bad("")
		}
		if n < sp.min || n > sp.max {
			return outOfRange()
		}
		return n, strconv.FormatInt(n, 10), ""
	case vDuration:
		s, ok := v.(string)
		if !ok {
			return bad("")
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return bad("")
		}
		if d < 0 {
			return outOfRange()
		}
		return d, d.String(), ""
	case vString, vHeaderName, vRegex, vPEM, vEnum, vIPOrCIDR:
		s, ok := v.(string)
		if !ok {
			return bad("")
		}
		return parseText(sp, s)
	}
	items, ok := asList(v)
	if !ok {
		return bad("")
	}
	if len(items) == 0 {
		return bad("the list is empty")
	}
	var ints []int64
	var strs []string
	for _, it := range items {
		switch sp.kind {
		case vIntList:
			n, ok := asInt(it)
			if !ok {
				return bad(fmt.Sprintf("%s is not an integer", showPolicyValue(it)))
			}
			if n < sp.min || n > sp.max {
				return nil, "", fmt.Sprintf("is out of range: %d is not %s", n, strings.TrimPrefix(intRange(sp), "an integer "))
			}
			ints = append(ints, n)
			continue
		}
		s, isString := it.(string)
		if !isString || s == "" {
			return bad(fmt.Sprintf("item %s", showPolicyValue(it)))
		}
		switch sp.kind {
		case vEnumList:
			if !containsString(sp.enum, s) {
				return bad(fmt.Sprintf("%q is not one of them", s))
			}
		case vCIDRList:
			if _, err := netip.ParsePrefix(s); err != nil {
				return bad(fmt.Sprintf("%q is not a CIDR block", s))
			}
		}
		strs = append(strs, s)
	}
	if sp.kind == vIntList {
		parts := make([]string, len(ints))
		for i, n := range ints {
			parts[i] = strconv.FormatInt(n, 10)
		}
		return ints, strings.Join(parts, ","), ""
	}
	return strs, strings.Join(strs, ","), ""
}

// parseText checks the text kinds.
func parseText(sp *settingSpec, s string) (any, string, string) {
	bad := func(detail string) (any, string, string) {
		msg := "is not valid: " + want(sp)
		if detail != "" {
			msg += " (" + detail + ")"
		}
		return nil, "", msg
	}
	switch sp.kind {
	case vEnum:
		if !containsString(sp.enum, s) {
			return bad("")
		}
	case vHeaderName:
		if !validHeaderName(s) {
			return bad("")
		}
		return s, strings.ToLower(s), ""
	case vRegex:
		if _, err := regexp.Compile(s); err != nil {
			return bad(strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
	case vPEM:
		b, _ := pem.Decode([]byte(s))
		if b == nil || b.Type != "CERTIFICATE" {
			return bad("")
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return bad(err.Error())
		}
	case vIPOrCIDR:
		if p, err := netip.ParsePrefix(s); err == nil {
			return p.Masked(), p.Masked().String(), ""
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return bad("")
		}
		p := netip.PrefixFrom(a, a.BitLen())
		return p, p.String(), ""
	}
	return s, s, ""
}

// asInt reads an integer from a number or a decimal string.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// asList reads a list: a comma-separated string or a YAML list.
func asList(v any) ([]any, bool) {
	switch x := v.(type) {
	case string:
		var out []any
		for _, part := range strings.Split(x, ",") {
			out = append(out, strings.TrimSpace(part))
		}
		if x == "" {
			return nil, true
		}
		return out, true
	case []any:
		return x, true
	}
	return nil, false
}

// validHeaderName reports whether s is an RFC 9110 token or one of the
// pseudo-headers RBAC can match (:method, :path, :authority, :scheme).
func validHeaderName(s string) bool {
	switch s {
	case "":
		return false
	case ":method", ":path", ":authority", ":scheme":
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func sortedStringKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// gwinSettings is the merged settings of one object: its annotations and
// the policies that target it.
type gwinSettings struct {
	schema *gwinSchema
	byKey  map[string]*gwinSetting
	// errs reject the object; warns are notes.
	errs  []string
	warns []string
	// origins lists the objects the settings came from, in order.
	origins []string
}

// newGwinSettings merges settings, reporting a setting given twice with
// different values (gwin does not let one source override another).
func newGwinSettings(sc *gwinSchema, sets ...[]*gwinSetting) *gwinSettings {
	gs := &gwinSettings{schema: sc, byKey: map[string]*gwinSetting{}}
	for _, set := range sets {
		for _, s := range set {
			if prev, ok := gs.byKey[s.key]; ok {
				if prev.canon != s.canon {
					gs.errs = append(gs.errs, fmt.Sprintf("%s is set twice with different values: %s by %s and %s by %s; gwin rejects conflicting settings instead of letting one override the other",
						gwinAnnotationPrefix+s.key, prev.shown, prev.from, s.shown, s.from))
				}
				continue
			}
			gs.byKey[s.key] = s
			if !containsString(gs.origins, s.origin) {
				gs.origins = append(gs.origins, s.origin)
			}
		}
	}
	return gs
}

// keys returns the setting keys, sorted.
func (gs *gwinSettings) keys() []string { return sortedStringKeys(gs.byKey) }

// names lists the names the named settings of a scope use, sorted.
func (gs *gwinSettings) names(scope string) []string {
	seen := map[string]bool{}
	for _, s := range gs.byKey {
		if s.spec.scope == scope && s.spec.named {
			seen[s.scopeName()] = true
		}
	}
	return sortedStringKeys(seen)
}

// effective returns the settings that apply to the scope's object called
// name, keyed by sub path: the "<scope>s." settings and the
// "<scope>.<name>." ones. A sub path given both ways with different values
// is a conflict, reported once in errs.
func (gs *gwinSettings) effective(scope, name string, seen map[string]bool) map[string]*gwinSetting {
	out := map[string]*gwinSetting{}
	for _, k := range gs.keys() {
		s := gs.byKey[k]
		if s.spec.scope != scope || s.spec.named {
			continue
		}
		out[s.sub()] = s
	}
	for _, k := range gs.keys() {
		s := gs.byKey[k]
		if s.spec.scope != scope || !s.spec.named || s.scopeName() != name {
			continue
		}
		sub := s.sub()
		if prev, ok := out[sub]; ok && prev.canon != s.canon {
			msg := fmt.Sprintf("%s %q: %s is %s by %s and %s by %s; a %s.<name>.* setting does not override %ss.* in gwin, so different values conflict",
				scope, name, sub, prev.shown, prev.from, s.shown, s.from, scope, scope)
			if !seen[msg] {
				seen[msg] = true
				gs.errs = append(gs.errs, msg)
			}
			continue
		}
		out[sub] = s
	}
	return out
}

// notEmulated lists the settings gwdev validates but does not emulate.
func (gs *gwinSettings) notEmulated() []string {
	var out []string
	for _, k := range gs.keys() {
		if !gs.byKey[k].spec.emulated {
			out = append(out, k)
		}
	}
	return out
}

// value helpers for effective maps.

func settingBool(eff map[string]*gwinSetting, sub string) (bool, bool) {
	s, ok := eff[sub]
	if !ok {
		return false, false
	}
	return s.value.(bool), true
}

func settingInt(eff map[string]*gwinSetting, sub string) (int64, bool) {
	s, ok := eff[sub]
	if !ok {
		return 0, false
	}
	return s.value.(int64), true
}

func settingDuration(eff map[string]*gwinSetting, sub string) (time.Duration, bool) {
	s, ok := eff[sub]
	if !ok {
		return 0, false
	}
	return s.value.(time.Duration), true
}
