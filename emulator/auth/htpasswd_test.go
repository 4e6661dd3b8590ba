package auth

import "testing"

// TestHtpasswdMatches checks each htpasswd format against hashes made by
// other tools: openssl passwd -apr1 (Apache MD5), htpasswd's {SHA} (base64
// SHA-1), and Python's crypt for a DES hash, which gwdev refuses.
func TestHtpasswdMatches(t *testing.T) {
	for _, c := range []struct {
		hash, pass string
		want       bool
	}{
		{"$apr1$r31....$gnsoqlxyxQQ0Ot5JCwiei.", "secret", true},
		{"$apr1$abcdefgh$UkZoB0qp2g9KE9.krwnMP0", "p@ss w0rd", true},
		{"$apr1$abcdefgh$UkZoB0qp2g9KE9.krwnMP0", "p@ss w0rd ", false},
		{"{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "password", true},
		{"{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "Password", false},
		{"{PLAIN}pw", "pw", true},
		{"rl0uE0e2WKB0.", "password", false}, // crypt(3) DES: not checked, refused
		{"", "", false},
	} {
		if got := HtpasswdMatches(c.hash, c.pass); got != c.want {
			t.Errorf("HtpasswdMatches(%q, %q) = %v, want %v", c.hash, c.pass, got, c.want)
		}
	}
}
