package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUpAdminAPI starts `gwdev up` with the admin API and checks every
// endpoint with a real client: /healthz, /status (YAML and JSON), /routes,
// /traces after a request, /traces/stream (server-sent events) and /metrics.
func TestUpAdminAPI(t *testing.T) {
	dir := t.TempDir()
	port, adminPort := freePort(t), freePort(t)
	if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(fmt.Sprintf(upGateway, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(routeFile("a", "svc-a")), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	o := &upOptions{debounce: 10 * time.Millisecond, admin: fmt.Sprintf("127.0.0.1:%d", adminPort), noTUI: true}
	go func() { done <- o.run(ctx, out, out, dir) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("up: %v", err)
		}
	}()
	admin := fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	get := func(path string) (int, string) {
		resp, err := http.Get(admin + path)
		if err != nil {
			return -1, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(settle)
	for {
		if c, _ := get("/healthz"); c == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("admin API not up; gwdev said:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The admin API answers before the first table is applied (up serves
	// it, then loads): wait for the listeners, which are bound by then.
	waitForOutput(t, out, "gwdev: watching ")

	// Subscribe to the stream before sending traffic.
	streamCtx, stopStream := context.WithCancel(context.Background())
	defer stopStream()
	req, _ := http.NewRequestWithContext(streamCtx, "GET", admin+"/traces/stream", nil)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if ct := stream.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("stream content type %q", ct)
	}
	events := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				events <- sc.Text()
			}
		}
	}()

	preq, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/hello?token=s3cret", port), nil)
	preq.Host = "a.example.com"
	preq.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(preq)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	select {
	case ev := <-events:
		if !strings.Contains(ev, `"rule":"httproute/default/a/rule/0/match/0"`) {
			t.Errorf("stream event lacks the rule: %s", ev)
		}
		if strings.Contains(ev, "s3cret") {
			t.Errorf("stream event leaks a credential: %s", ev)
		}
	case <-time.After(5 * time.Second):
		t.Error("no trace event on /traces/stream")
	}

	checks := []struct {
		path string
		want []string
	}{
		{"/status", []string{"kind: Gateway", "type: Programmed", "kind: HTTPRoute"}},
		{"/status?format=json", []string{`"kind": "List"`, `"type": "Accepted"`}},
		{"/routes", []string{`"name": "gateway/default/web"`, `httproute/default/a/rule/0/match/0`}},
		{"/traces", []string{`"path": "/hello?token=`, `"status": 200`, `"route": "HTTPRoute/default/a"`}},
		{"/metrics", []string{`gwdev_requests_total{code="200",gateway="gateway/default/web"`, "gwdev_reloads_total 1", "gwdev_objects 3", `gwdev_findings{severity="error"} 0`, `gwdev_findings{severity="info"}`}},
		{"/routes", []string{`"findings": `, `"reloaded": "`}},
	}
	for _, c := range checks {
		var code int
		var body string
		// Metrics are collected from a trace subscription: allow a moment.
		for end := time.Now().Add(settle); ; time.Sleep(20 * time.Millisecond) {
			code, body = get(c.path)
			if (code == 200 && containsAll(body, c.want)) || time.Now().After(end) {
				break
			}
		}
		if code != 200 {
			t.Errorf("%s: status %d: %s", c.path, code, body)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q:\n%.2000s", c.path, w, body)
			}
		}
		if strings.Contains(body, "s3cret") {
			t.Errorf("%s leaks a credential", c.path)
		}
	}
}

func containsAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
