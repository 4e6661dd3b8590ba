package ingressnginx

import (
	"cmp"
	"errors"
	"net/url"
	"regexp"
	"regexp/syntax"
	"strconv"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// This file is the rewrite family: permanent-redirect and
// temporal-redirect, rewrite-target and use-regex (regex locations, which
// nginx runs with PCRE and gwdev with RE2), and nginx's own redirect of a
// bare prefix to its slash.

// ingressRedirect is a permanent-redirect or temporal-redirect.
type ingressRedirect struct {
	url  *url.URL
	code int
}

// nginxCaptureRef is $n in an nginx replacement.
var nginxCaptureRef = regexp.MustCompile(`\$([0-9]+)`)

// parseIngressRedirect reads permanent-redirect (301 unless
// permanent-redirect-code says otherwise), else temporal-redirect (302 unless
// temporal-redirect-code), which ingress-nginx checks in that order.
func (t *translator) parseIngressRedirect(ann map[string]string, warn func(name, msg string)) *ingressRedirect {
	for _, r := range []struct {
		name string
		code int
	}{{"permanent-redirect", 301}, {"temporal-redirect", 302}} {
		v := ann[AnnotationPrefix+r.name]
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			warn(r.name, "must be an absolute http or https URL; ingress-nginx ignores it")
			continue
		}
		code := r.code
		if c := ann[AnnotationPrefix+r.name+"-code"]; c != "" {
			n, err := strconv.Atoi(c)
			if err != nil || n < 300 || n > 308 {
				warn(r.name+"-code", "invalid status "+strconv.Quote(c)+" (want 300-308); ingress-nginx uses "+strconv.Itoa(code))
			} else {
				code = n
			}
		}
		return &ingressRedirect{url: u, code: code}
	}
	return nil
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
