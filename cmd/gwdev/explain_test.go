package main

import (
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "--dir", "../../samples/basic", "http://app.example.com:8080/api/users"},
			[]string{"rule:", "httproute/default/app/rule/0/match/0", "service:", "default/api:8080", "echo"}},
		{[]string{"explain", "--dir", "../../samples/basic", "http://app.example.com:8080/"},
			[]string{"httproute/default/app/rule/1/match/0", "default/frontend:80"}},
		{[]string{"explain", "--dir", "../../samples/basic", "http://nope.example.com:8080/"},
			[]string{"404 Not Found", "nope.example.com"}},
		{[]string{"explain", "--dir", "../../samples/https", "-X", "POST", "http://app.example.com/login"},
			[]string{"RequestRedirect", "301 Moved Permanently", "https://app.example.com/login"}},
		// The shadowed sample: the canary rule wins on its header match and
		// explain names both /api rules that lost, with the criterion.
		{[]string{"explain", "--dir", "../../samples/shadowed", "-H", "x-canary: true", "http://shop.example.com:8080/api/cart"},
			[]string{"httproute/default/search/rule/1/match/0", "also matched:  HTTPRoute default/cart rules[0].matches[0] (PathPrefix /api)",
				"lost: more header matches win (1 against 0)", `HTTPRoute default/search rules[0] ("api").matches[0]`}},
		// Without the header the oldest route wins the tie.
		{[]string{"explain", "--dir", "../../samples/shadowed", "http://shop.example.com:8080/api/cart"},
			[]string{"httproute/default/cart/rule/0/match/0", `also matched:  HTTPRoute default/search rules[0] ("api").matches[0] (PathPrefix /api)`,
				"lost: same match precedence: the oldest route wins (HTTPRoute default/cart created 2026-01-10T09:00:00Z"}},
		{[]string{"explain", "--dir", "../../samples/shadowed", "-o", "json", "http://shop.example.com:8080/api"},
			[]string{`"outranked": [`, `"httproute/default/search/rule/0/match/0"`}},
		{[]string{"explain", "--dir", "../../samples/basic", "-o", "json", "http://app.example.com:8080/api"},
			[]string{`"rule": "httproute/default/app/rule/0/match/0"`}},
	}
	for _, c := range cases {
		out, errOut, code := runGwdev(t, "", c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
	if _, _, code := runGwdev(t, "", "explain", "--dir", "../../samples/basic", "--gateway", "nope/nope", "http://x/"); code != exitUsage {
		t.Errorf("unknown --gateway: exit %d, want %d", code, exitUsage)
	}
}

// explain prints the request it was given, text or JSON, with the
// credentials redacted as in traces.
func TestExplainRedactsCredentials(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		out, errOut, code := runGwdev(t, "", "explain", "--dir", "../../samples/https", "-o", format,
			"-H", "X-Api-Key: APIKEY1", "-H", "Authorization: Bearer BEARER2", "-H", "Referer: http://u:PASS3@x/",
			"http://app.example.com/login?token=TOKEN4&sig=SIG5&X-Amz-Signature=AMZ6&code=CODE7&page=2")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		for _, s := range []string{"APIKEY1", "BEARER2", "PASS3", "TOKEN4", "SIG5", "AMZ6", "CODE7"} {
			if strings.Contains(out, s) {
				t.Errorf("%s output leaks %s:\n%s", format, s, out)
			}
		}
		if !strings.Contains(out, "token=[redacted]") || !strings.Contains(out, "page=2") {
			t.Errorf("%s output does not show the redacted URL:\n%s", format, out)
		}
	}
}
