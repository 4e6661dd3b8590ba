package engine

import "testing"

// TestNearestName: a name a typo away is suggested (one edit per three
// characters, at least one), ties to the first listed; a far one is not.
func TestNearestName(t *testing.T) {
	names := []string{"http", "https", "grpc"}
	for want, got := range map[string]string{
		"htps": "https", "htt": "http", "grcp": "", "grp": "grpc", "admin": "", "": "", "HTTPS": "",
	} {
		if n := nearestName(want, names); n != got {
			t.Errorf("nearestName(%q) = %q, want %q", want, n, got)
		}
	}
	if d := editDistance("storefrnt", "storefront", 3); d != 1 {
		t.Errorf("editDistance(storefrnt, storefront) = %d, want 1", d)
	}
	if d := editDistance("a", "abcdef", 2); d != 3 {
		t.Errorf("editDistance past the limit = %d, want limit+1", d)
	}
}
