package main

import (
	"strings"
	"testing"
)

// TestExplainMesh explains requests to the mesh sample's Service
// frontends, named by their address: the consumer namespace's address, a
// producer rule won on a header match, and a port no route binds.
func TestExplainMesh(t *testing.T) {
	cases := []struct {
		url  string
		args []string
		want []string
	}{
		{"http://" + meshReviewsFrontend + ":8080/x", nil, []string{"gateway:       mesh/shop/reviews/from/frontend",
			"rule:          httproute/frontend/reviews-pinned/rule/0/match/0", "service:       shop/reviews-v2:8080"}},
		{"http://" + meshReviews + ":8080/x", []string{"-H", "x-canary: true"}, []string{"gateway:       mesh/shop/reviews",
			"rule:          httproute/shop/reviews/rule/0/match/0", "lost: more header matches win"}},
		{"http://" + meshReviews + ":8081/", nil, []string{"rule:          mesh/shop/reviews/port/8081/service", "service:       shop/reviews:8081"}},
	}
	for _, c := range cases {
		args := append([]string{"explain", "--dir", "../../samples/mesh"}, c.args...)
		out, errOut, code := runGwdev(t, "", append(args, c.url)...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.url, code, errOut)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.url, w, out)
			}
		}
	}
}
