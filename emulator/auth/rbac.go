package auth

import (
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"sync"

	"github.com/gwdev/gwdev/engine/table"
)

// RBAC from an implementation profile (table.RBAC, for example gwin's
// listeners.rbac, hosts.rbac and rules.rbac): principal groups are ORed,
// the principals of a group ANDed; ALLOW serves only requests some group
// matches, DENY refuses them. A refused request gets 403, and the trace
// names the policy and the group and principal that decided.

// Verdict is the outcome of one policy for one request.
type Verdict struct {
	// Allowed says the request may go on.
	Allowed bool
	// Why names the deciding group and principals, for the trace.
	Why string
}

// EvalRBAC evaluates a policy against a request.
func EvalRBAC(p *table.RBAC, r *http.Request) Verdict {
	remote, _ := netip.ParseAddrPort(r.RemoteAddr)
	var misses []string
	for _, g := range p.Groups {
		ok, why := groupMatches(g, r, remote.Addr())
		if ok {
			return Verdict{Allowed: p.Action == table.RBACAllow,
				Why: fmt.Sprintf("%s, group %q matched (%s)", p.Action, g.Name, why)}
		}
		misses = append(misses, fmt.Sprintf("%s: %s", g.Name, why))
	}
	why := p.Action + ", no principal group matched"
	if len(misses) > 0 {
		why += " (" + strings.Join(misses, "; ") + ")"
	}
	return Verdict{Allowed: p.Action != table.RBACAllow, Why: why}
}

// groupMatches reports whether every principal of a group matches; why
// lists what matched, or the first principal that did not and why.
func groupMatches(g table.RBACGroup, r *http.Request, remote netip.Addr) (bool, string) {
	var matched []string
	for _, p := range g.Principals {
		ok, why := principalMatches(p, r, remote)
		if !ok {
			return false, p.Name + ": " + why
		}
		matched = append(matched, p.Name+": "+why)
	}
	return true, strings.Join(matched, "; ")
}

// principalMatches evaluates one principal.
func principalMatches(p table.RBACPrincipal, r *http.Request, remote netip.Addr) (bool, string) {
	switch {
	case p.Any:
		return true, "any request"
	case p.Header != nil:
		return headerMatches(p.Header, r)
	case p.RemoteIP != "":
		prefix, err := netip.ParsePrefix(p.RemoteIP)
		switch {
		case err != nil:
			return false, "invalid remote IP " + p.RemoteIP
		case !remote.IsValid():
			return false, "client address unknown"
		case prefix.Contains(remote.Unmap()):
			return true, fmt.Sprintf("remote IP %s in %s", remote.Unmap(), p.RemoteIP)
		}
		return false, fmt.Sprintf("remote IP %s not in %s", remote.Unmap(), p.RemoteIP)
	}
	return false, "matches no request"
}

// headerMatches evaluates a header principal. Several values of a header
// are joined with ","; the pseudo-headers :method, :path, :authority and
// :scheme read the request line.
func headerMatches(h *table.RBACHeaderMatch, r *http.Request) (bool, string) {
	v, present := requestHeaderValue(r, h.Name)
	if !present {
		return false, "header " + h.Name + " is missing"
	}
	switch {
	case h.Exact != "":
		if v == h.Exact {
			return true, fmt.Sprintf("header %s exact %q", h.Name, h.Exact)
		}
		return false, fmt.Sprintf("header %s is not %q", h.Name, h.Exact)
	case h.Prefix != "":
		if strings.HasPrefix(v, h.Prefix) {
			return true, fmt.Sprintf("header %s prefix %q", h.Name, h.Prefix)
		}
		return false, fmt.Sprintf("header %s does not start with %q", h.Name, h.Prefix)
	case h.Regex != "":
		re, err := rbacRegex(h.Regex)
		if err != nil {
			return false, "invalid regex " + h.Regex
		}
		if re.MatchString(v) {
			return true, fmt.Sprintf("header %s matches %q", h.Name, h.Regex)
		}
		return false, fmt.Sprintf("header %s does not match %q", h.Name, h.Regex)
	}
	return true, "header " + h.Name + " present"
}

// requestHeaderValue reads a header or pseudo-header of a request.
func requestHeaderValue(r *http.Request, name string) (string, bool) {
	switch strings.ToLower(name) {
	case ":method":
		return r.Method, true
	case ":path":
		return r.URL.RequestURI(), true
	case ":authority", "host":
		return r.Host, r.Host != ""
	case ":scheme":
		if r.TLS != nil {
			return "https", true
		}
		return "http", true
	}
	vs := r.Header.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.Join(vs, ","), true
}

// rbacRegexes caches compiled header expressions, anchored to match the
// whole value. The set is bounded by the expressions users write.
var rbacRegexes sync.Map // string → *regexp.Regexp

func rbacRegex(expr string) (*regexp.Regexp, error) {
	if re, ok := rbacRegexes.Load(expr); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(`^(?:` + expr + `)$`)
	if err != nil {
		return nil, err
	}
	rbacRegexes.Store(expr, re)
	return re, nil
}
