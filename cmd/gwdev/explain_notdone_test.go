package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExplainSaysWhatItDidNotDo: explain names, under "not done:" (JSON
// notDone), the ExternalAuth server it did not ask, the backend it did not
// dial and the backend TLS handshake it did not make, with what the data
// plane's answer then depends on; a request the echo backend answers in
// process has no such line.
func TestExplainSaysWhatItDidNotDo(t *testing.T) {
	cases := []struct {
		args []string
		want []string // "" : no "not done" line at all
	}{
		{[]string{"explain", "../../samples/external-auth", "http://app.example.com:8080/admin"},
			[]string{"not done:      ExternalAuth at default/http-auth:9000 (echo) over HTTP (gwdev's demo auth server: it allows requests with header X-Demo-Token) would be asked: explain does not call it; the data plane does, and a denial answers 403"}},
		{[]string{"explain", "../../samples/external-auth", "http://app.example.com:8080/api"},
			[]string{"ExternalAuth at default/grpc-auth:9001 (echo) over GRPC"}},
		// The auth server mapped to a local address: where it is.
		{[]string{"explain", "--backend", "default/http-auth:9000=127.0.0.1:9", "../../samples/external-auth", "http://app.example.com:8080/admin"},
			[]string{"ExternalAuth at default/http-auth:9000 (mapped 127.0.0.1:9) over HTTP would be asked"}},
		{[]string{"explain", "--backend", "default/public:8080=127.0.0.1:9", "../../samples/external-auth", "http://app.example.com:8080/"},
			[]string{"not done:      backend default/public:8080 (mapped 127.0.0.1:9) not dialled: explain does not connect; if nothing answers there the data plane answers 502"}},
		{[]string{"explain", "--backend", "default/tcp-echo-a:7=127.0.0.1:9", "--backend", "default/tcp-echo-b:7=127.0.0.1:9", "../../samples/tcp-udp", "tcp://127.0.0.1:9100"},
			[]string{"(mapped 127.0.0.1:9) not dialled: explain does not connect; if it cannot connect the data plane closes the client's connection"}},
		{[]string{"explain", "../../samples/backend-tls", "http://app.example.com:8081/wrong-ca"},
			[]string{"not done:      echo backend default/wrong-ca:443 (echo): the TLS handshake of BackendTLSPolicy default/wrong-ca not made"}},
		// The echo backend answers in process; a redirect reaches no backend.
		{[]string{"explain", "../../samples/external-auth", "http://app.example.com:8080/"}, nil},
		{[]string{"explain", "../../samples/https", "http://app.example.com/login"}, nil},
		// An EndpointSelector XBackend's Pods are echoes answering in process.
		{[]string{"explain", "../../samples/xbackend-pods", "http://shop.example.com:8080/"}, nil},
	}
	for _, c := range cases {
		out, errOut, code := runGwdev(t, "", c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
			continue
		}
		if c.want == nil && strings.Contains(out, "not done:") {
			t.Errorf("%v: says it left something out:\n%s", c.args, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}

	out, errOut, code := runGwdev(t, "", "explain", "-o", "json", "../../samples/external-auth", "http://app.example.com:8080/admin")
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	var got struct {
		Rule    string   `json:"rule"`
		NotDone []string `json:"notDone"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if got.Rule != "httproute/default/app/rule/0/match/0" || len(got.NotDone) != 1 || !strings.HasPrefix(got.NotDone[0], "ExternalAuth at default/http-auth:9000") {
		t.Errorf("json: rule %q, notDone %q", got.Rule, got.NotDone)
	}
}
