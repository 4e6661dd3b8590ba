package report

import "testing"

// TestGitHubEscaping checks the workflow command escapes: data escapes %,
// CR and LF; a property also the ":" and "," that delimit properties.
func TestGitHubEscaping(t *testing.T) {
	if got, want := escapeData("50% done\r\nnext: a,b"), "50%25 done%0D%0Anext: a,b"; got != want {
		t.Errorf("escapeData = %q, want %q", got, want)
	}
	if got, want := escapeProperty("a:b,c%d\ne"), "a%3Ab%2Cc%25d%0Ae"; got != want {
		t.Errorf("escapeProperty = %q, want %q", got, want)
	}
}
