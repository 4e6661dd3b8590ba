package emulator

import "testing"

// TestNginxURIPath: the path nginx matches locations against, from
// ngx_http_parse_complex_uri's documented behaviour (merge_slashes on,
// "." and ".." resolved, the trailing slash kept).
func TestNginxURIPath(t *testing.T) {
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
	} {
		if got := nginxURIPath(in); got != want {
			t.Errorf("nginxURIPath(%q) = %q, want %q", in, got, want)
		}
	}
}
