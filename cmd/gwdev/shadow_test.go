package main

import (
	"strings"
	"testing"
)

// TestCheckShadowedStrict: a shadowed rule is a warning, so check passes
// and --strict fails, and the warning names both routes and the criterion.
func TestCheckShadowedStrict(t *testing.T) {
	out, _, code := runGwdev(t, "", "check", "../../samples/shadowed")
	if code != 0 {
		t.Errorf("check: exit %d, want 0 (a shadowed rule is a warning)", code)
	}
	for _, want := range []string{"routes.yaml:26", "HTTPRoute default/search rules[0]", "HTTPRoute default/cart rules[0].matches[0]",
		"the oldest route wins"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	if _, _, code := runGwdev(t, "", "check", "--strict", "../../samples/shadowed"); code != exitProblems {
		t.Errorf("check --strict: exit %d, want %d", code, exitProblems)
	}
}
