package emulator

import (
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/emulator/cors"
	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/engine/table"
)

// filterStep is a table Filter ready to run.
type filterStep struct {
	typ         table.FilterType
	reqHeaders  *headerMod
	respHeaders *headerMod
	redirect    *table.Redirect
	rewrite     *table.URLRewrite
	// mirror is the index into the resolved mirrors of the rule or
	// backendRef (-1: not a mirror).
	mirror int
	// mirrorFraction is the share of requests mirrored (0 to 1).
	mirrorFraction float64
	cors           *cors.Policy
	// extAuth is the index into the resolved ExternalAuth filters of the
	// rule or backendRef (-1: not an ExternalAuth filter).
	extAuth     int
	unsupported string
	// note is the trace's line for a header modifier, made once.
	note string
	// notes, when this step and every one before it in its list are
	// header modifiers, is their notes in order, made once: the trace's
	// filter list they write (addNote), capped so that an append copies it.
	notes []string
	// rewriteRE is the compiled Pattern of a ReplaceRegexMatch rewrite
	// (nil: none, or it does not compile: the path is kept).
	rewriteRE *regexp.Regexp
}

// headerMod is the table's header change, with the data plane's methods.
type headerMod struct {
	*table.HeaderModifier
	// setValues is each Set entry's value as a header map holds it, made
	// once: one element, capped so that an append copies it, shared by
	// every request (nothing writes into a header map's value slice).
	setValues [][]string
}

// newHeaderMod readies m (nil: no header change).
func newHeaderMod(m *table.HeaderModifier) *headerMod {
	if m == nil {
		return nil
	}
	hm := &headerMod{HeaderModifier: m, setValues: make([][]string, len(m.Set))}
	for i, s := range m.Set {
		hm.setValues[i] = []string{s.Value}[:1:1]
	}
	return hm
}

func compileFilters(fs []table.Filter, rc *regexCache) []filterStep {
	var out []filterStep
	for i := range fs {
		f := &fs[i]
		s := filterStep{typ: f.Type, mirror: -1, extAuth: -1, unsupported: f.Unsupported,
			reqHeaders: newHeaderMod(f.RequestHeaderModifier), respHeaders: newHeaderMod(f.ResponseHeaderModifier),
			redirect: f.RequestRedirect, rewrite: f.URLRewrite}
		switch {
		case s.reqHeaders != nil:
			s.note = "RequestHeaderModifier: " + s.reqHeaders.describe()
		case s.respHeaders != nil:
			s.note = "ResponseHeaderModifier: " + s.respHeaders.describe()
		}
		if m := f.RequestMirror; m != nil {
			s.mirror, s.mirrorFraction = m.Index, m.Fraction
		}
		if f.CORS != nil {
			s.cors = cors.Compile(f.CORS, rc.compile)
		}
		if p := rewritePath(f.URLRewrite); p != nil && p.Type == table.ReplaceRegexMatch {
			s.rewriteRE, _ = rc.compile(p.Pattern) // the engine checked it compiles
		}
		if f.ExternalAuth != nil {
			s.extAuth = *f.ExternalAuth
		}
		out = append(out, s)
	}
	var notes []string
	for i := range out {
		s := &out[i]
		if s.note == "" || s.unsupported != "" {
			break
		}
		notes = append(notes, s.note)
	}
	for i := range notes {
		out[i].notes = notes[: i+1 : i+1]
	}
	return out
}

// addNote appends the header modifier's note to the trace's filter list l,
// f being the i-th step of its list. When l is what the steps before it
// wrote (nothing, at the list's start), the result is the list
// compileFilters made (notes): no allocation per request.
func (f *filterStep) addNote(l []string, i int) []string {
	if f.notes != nil && len(l) == i && (i == 0 || &l[0] == &f.notes[0]) {
		return f.notes
	}
	return append(l, f.note)
}

// apply modifies h; a Host header (requests only) goes to *host instead.
// Added values are appended to an existing value with a comma, as the
// HTTPHeaderFilter documentation shows (Set-Cookie gets its own line).
func (m *headerMod) apply(h http.Header, host *string) {
	for i, s := range m.Set {
		if s.Name == "Host" && host != nil {
			*host = s.Value
			continue
		}
		h[s.Name] = m.setValues[i]
	}
	for _, a := range m.Add {
		if a.Name == "Host" && host != nil {
			*host = a.Value
			continue
		}
		old := h[a.Name]
		if len(old) == 0 || a.Name == "Set-Cookie" {
			h[a.Name] = append(old, a.Value)
			continue
		}
		h[a.Name] = []string{strings.Join(old, ",") + "," + a.Value}
	}
	for _, n := range m.Remove {
		delete(h, n)
	}
}

// applyFields is apply on an answer's header fields (canonical names), for
// the forwarding lane: the same edits, in place; the fields left are
// returned.
func (m *headerMod) applyFields(fs []h1.Field) []h1.Field {
	for _, s := range m.Set {
		fs = append(h1.DropFields(fs, s.Name), h1.Field{Name: s.Name, Value: s.Value})
	}
	for _, a := range m.Add {
		var old []string
		for _, f := range fs {
			if f.Name == a.Name {
				old = append(old, f.Value)
			}
		}
		if len(old) == 0 || a.Name == "Set-Cookie" {
			fs = append(fs, h1.Field{Name: a.Name, Value: a.Value})
			continue
		}
		fs = append(h1.DropFields(fs, a.Name), h1.Field{Name: a.Name, Value: strings.Join(old, ",") + "," + a.Value})
	}
	for _, n := range m.Remove {
		fs = h1.DropFields(fs, n)
	}
	return fs
}

// describe summarises a header modification for traces.
func (m *headerMod) describe() string {
	var parts []string
	for _, s := range m.Set {
		parts = append(parts, "set "+s.Name)
	}
	for _, a := range m.Add {
		parts = append(parts, "add "+a.Name)
	}
	for _, r := range m.Remove {
		parts = append(parts, "remove "+r)
	}
	return strings.Join(parts, ", ")
}

// modifyPath applies a redirect's or rewrite's path operation to path.
func modifyPath(p *table.PathRewrite, path string) string {
	if p == nil {
		return path
	}
	switch p.Type {
	case table.ReplaceFullPath:
		return p.Value
	case table.ReplacePrefixMatch:
		return replacePrefix(path, p.Prefix, p.Value)
	case table.TrimTrailingSlash:
		return strings.TrimSuffix(path, "/")
	}
	return path
}

// rewritePath is a rewrite's path operation (nil: none).
func rewritePath(u *table.URLRewrite) *table.PathRewrite {
	if u == nil {
		return nil
	}
	return u.Path
}

// replaceRegex is a ReplaceRegexMatch: value with ${n} expanded from re's
// match of path, or path when re does not match it.
func replaceRegex(re *regexp.Regexp, value, path string) string {
	if re == nil {
		return path
	}
	m := re.FindStringSubmatchIndex(path)
	if m == nil {
		return path
	}
	return string(re.ExpandString(nil, value, path, m))
}

// replacePrefix replaces the matched prefix of path with repl (both as the
// table has them, without trailing slashes), by whole path segments: /foo/bar
// with prefix /foo and replacement /xyz gives /xyz/bar; an empty result is
// "/".
func replacePrefix(path, prefix, repl string) string {
	if !prefixMatches(prefix, path) {
		return path
	}
	out := repl + path[len(prefix):]
	if out == "" {
		return "/"
	}
	return out
}

// redirectLocation builds the Location of a RequestRedirect whose defaults
// the engine applied; what it left to the request is filled in here: the
// request's scheme and host, the listener's port. No port is written for
// http:80 and https:443. The query string is kept.
func redirectLocation(f *table.Redirect, r *http.Request, host string, listenerPort int32) (string, int) {
	scheme := f.Scheme
	if scheme == "" {
		scheme = "http"
		if r.TLS != nil {
			scheme = "https"
		}
	}
	port := f.Port
	if port == 0 {
		port = listenerPort
	}
	if f.Hostname != "" {
		host = f.Hostname
	}
	hostport := host
	if strings.Contains(host, ":") {
		hostport = "[" + host + "]"
	}
	if !(scheme == "http" && port == 80) && !(scheme == "https" && port == 443) {
		hostport = net.JoinHostPort(host, strconv.Itoa(int(port)))
	}
	path := r.URL.Path
	if path == "" {
		path = "/"
	}
	path = modifyPath(f.Path, path)
	loc := scheme + "://" + hostport + (&url.URL{Path: path}).EscapedPath()
	if r.URL.RawQuery != "" && !f.NoQuery {
		loc += "?" + r.URL.RawQuery
	}
	return loc, f.StatusCode
}
