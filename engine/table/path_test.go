package table

import "testing"

// TestPathPolicyNormalize: the default policy (the zero value) against
// RFC 3986's examples and the walk-arounds of a path-based rule.
func TestPathPolicyNormalize(t *testing.T) {
	cases := []struct {
		policy             PathPolicy
		in, escaped, path  string
		redirect, rejected bool
	}{
		{PathPolicy{}, "/", "/", "/", false, false},
		{PathPolicy{}, "/admin/users", "/admin/users", "/admin/users", false, false},
		{PathPolicy{}, "/x/../admin/users", "/admin/users", "/admin/users", false, false},
		{PathPolicy{}, "/x/%2e%2e/admin/users", "/admin/users", "/admin/users", false, false},
		{PathPolicy{}, "/x/%2E./admin", "/admin", "/admin", false, false},
		{PathPolicy{}, "/./admin/./users/.", "/admin/users/", "/admin/users/", false, false},
		{PathPolicy{}, "/../../admin", "/admin", "/admin", false, false},
		{PathPolicy{}, "/a/b/c/./../../g", "/a/g", "/a/g", false, false}, // RFC 3986 5.2.4
		{PathPolicy{}, "/mid/content=5/../6", "/mid/6", "/mid/6", false, false},
		{PathPolicy{}, "/x/..", "/", "/", false, false},
		{PathPolicy{}, "//admin//users", "/admin/users", "/admin/users", false, false},
		{PathPolicy{}, "/%61dmin", "/admin", "/admin", false, false},
		{PathPolicy{}, "/a%20b/%3f", "/a%20b/%3F", "/a b/?", false, false},
		{PathPolicy{}, "/..foo/.bar", "/..foo/.bar", "/..foo/.bar", false, false},
		{PathPolicy{}, "/x%2F..%2Fadmin", "/admin", "/admin", true, false},
		{PathPolicy{}, "/x%5c..%5cadmin", "/admin", "/admin", true, false},
		{PathPolicy{}, "/a%2fb", "/a/b", "/a/b", true, false},
		{PathPolicy{EscapedSlashes: EscapedSlashesKeep}, "/a%2fb/../c", "/c", "/c", false, false},
		{PathPolicy{EscapedSlashes: EscapedSlashesKeep}, "/a%2Fb", "/a%2Fb", "/a/b", false, false},
		{PathPolicy{EscapedSlashes: EscapedSlashesReject}, "/a%2Fb", "/a%2Fb", "/a/b", false, true},
		{PathPolicy{KeepDotSegments: true, KeepSlashes: true}, "/x/..//admin", "/x/..//admin", "/x/..//admin", false, false},
		{PathPolicy{}, "*", "*", "*", false, false},
	}
	for _, c := range cases {
		got := c.policy.Normalize(c.in)
		if got.Escaped != c.escaped || got.Path != c.path || got.Redirect != c.redirect || got.Reject != c.rejected {
			t.Errorf("%+v.Normalize(%q) = %+v, want escaped %q path %q redirect %v reject %v", c.policy, c.in, got, c.escaped, c.path, c.redirect, c.rejected)
		}
	}
}

// TestPathPolicyNginx: the policy ingress-nginx's tables get matches the
// path nginx matches locations against, from ngx_http_parse_complex_uri's
// documented behaviour (merge_slashes on, "." and ".." resolved, the
// trailing slash kept, escapes decoded, %2F a slash with no redirect), and
// leaves the request's path to the backend as sent.
func TestPathPolicyNginx(t *testing.T) {
	p := PathPolicy{EscapedSlashes: EscapedSlashesForward, MatchOnly: true}
	for in, want := range map[string]string{
		"/":            "/",
		"/a/b":         "/a/b",
		"//a///b":      "/a/b",
		"/a/./b/":      "/a/b/",
		"/a/../b":      "/b",
		"/a/b/..":      "/a/",
		"/a/.":         "/a/",
		"/../a":        "/a",
		"/a//":         "/a/",
		"/a.b/.c/..d/": "/a.b/.c/..d/",
		"/a%2Fb":       "/a/b",
		"/%2e%2e/a":    "/a",
	} {
		got := p.Normalize(in)
		if got.Path != want || got.Redirect || got.Reject {
			t.Errorf("Normalize(%q) = %+v, want path %q and no redirect", in, got, want)
		}
	}
}
