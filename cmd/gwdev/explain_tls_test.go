package main

import (
	"strings"
	"testing"
)

// TestExplainHTTPS: for an https URL the SNI is the URL's host (or --sni),
// and a Host header that belongs to another listener of the port gets 421,
// as the data plane answers.
func TestExplainHTTPS(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"https://admin.app.example.com/x"}, []string{"sni:           admin.app.example.com", "listener:      gateway/default/secure/listener/admin", "route:         HTTPRoute/default/admin"}},
		{[]string{"-H", "Host: admin.app.example.com", "https://app.example.com/"}, []string{"sni:           app.example.com", "answer:        421 Misdirected Request"}},
		{[]string{"--sni", "app.example.com", "https://admin.app.example.com/"}, []string{"421 Misdirected Request"}},
	} {
		out, errOut, code := runGwdev(t, "", append([]string{"explain", "--dir", "../../samples/https"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
		if strings.Contains(out, "hint:") {
			t.Errorf("%v: hints after a 421:\n%s", c.args, out)
		}
	}
}
