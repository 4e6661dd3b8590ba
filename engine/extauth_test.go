package engine

import "testing"

// TestSanitizeAuthPath: http.path "MUST" be sanitised before use: a leading
// "/", dot segments resolved (escaped ones too) without climbing above "/",
// no trailing "/" so that the request path follows with one "/".
func TestSanitizeAuthPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"/":                "",
		"check":            "/check",
		"/check/":          "/check",
		"/a/../../b":       "/b",
		"/a/%2e%2e/b":      "/b",
		"/auth/v1//x":      "/auth/v1/x",
		"/ext%20auth/":     "/ext%20auth",
		"/a/./b/%2E%2E/c/": "/a/c",
	} {
		if got := sanitizeAuthPath(in); got != want {
			t.Errorf("sanitizeAuthPath(%q) = %q, want %q", in, got, want)
		}
	}
}
