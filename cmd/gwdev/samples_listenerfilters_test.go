package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSampleListenerFilters runs the commands of samples/listener-filters'
// README against `gwdev up` on the sample (ports 8080 and 8081 moved to
// free ones): the members listener's ExternalAuth runs before routing and
// fails closed, the header it allows is matched by the route, and the open
// listener asks no one.
func TestSampleListenerFilters(t *testing.T) {
	members, open := freePort(t), freePort(t)
	out := upSample(t, "listener-filters", map[int]int{8080: members, 8081: open})
	get := func(port int, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "app.example.com"
		if token != "" {
			req.Header.Set("X-Demo-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET :%d: %v\n%s", port, err, out.String())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	service := func(body string) string {
		var e struct {
			Service string `json:"service"`
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatalf("not echo JSON: %v: %s", err, body)
		}
		return e.Service
	}
	if code, body := get(members, ""); code != http.StatusForbidden || !strings.Contains(body, "header X-Demo-Token is missing") {
		t.Errorf("members without the token: %d %q", code, body)
	}
	if code, body := get(members, "t"); code != http.StatusOK || service(body) != "members" {
		t.Errorf("members with the token: %d %s", code, body)
	}
	if code, body := get(open, "t"); code != http.StatusOK || service(body) != "public" {
		t.Errorf("open with the token: %d %s", code, body)
	}
	stdout, stderr, code := runGwdev(t, "", "explain", "--dir", filepath.Join("..", "..", "samples", "listener-filters"), "http://app.example.com:8080/")
	if code != 0 || !strings.Contains(stdout, "pre-routing ExternalAuth: gateway/default/web/listener/members/prerouting/filter/0/externalauth asks default/auth:9000 over HTTP") {
		t.Errorf("explain: exit %d\n%s%s", code, stdout, stderr)
	}
}
