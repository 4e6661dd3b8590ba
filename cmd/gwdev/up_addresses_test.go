package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// upAutoGateway is a Gateway without spec.addresses: gwdev assigns its
// loopback address.
const upAutoGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %s}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: %d}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s}
spec:
  parentRefs: [{name: %s}]
  rules: [{backendRefs: [{name: %s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: %s}
spec: {ports: [{port: 80}]}
`

// TestUpGatewaysKeepAddresses: under `gwdev up` a Gateway keeps its
// loopback address across reloads; adding a Gateway that sorts before it
// ("a-first") gives the new one a free address instead of moving it.
func TestUpGatewaysKeepAddresses(t *testing.T) {
	dir := t.TempDir()
	webPort, firstPort := freePort(t), freePort(t)
	write := func(name, gw string, port int) {
		t.Helper()
		content := fmt.Sprintf(upAutoGateway, gw, port, gw, gw, gw+"-svc", gw+"-svc")
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("web.yaml", "web", webPort)

	out := runUp(t, &upOptions{portOffset: 0, debounce: 10 * time.Millisecond}, dir)
	client := &http.Client{Timeout: 2 * time.Second}
	serves := func(addr string, port int) bool {
		resp, err := client.Get(fmt.Sprintf("http://%s:%d/", addr, port))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	waitFor := func(what string, cond func() bool) { t.Helper(); waitForUp(t, out, what, cond) }
	waitFor("web on 127.0.0.1", func() bool { return serves("127.0.0.1", webPort) })

	write("a-first.yaml", "a-first", firstPort)
	waitFor("a-first on 127.0.0.2", func() bool { return serves("127.0.0.2", firstPort) })
	if !serves("127.0.0.1", webPort) {
		t.Errorf("web no longer on 127.0.0.1 after a-first was added; gwdev said:\n%s", out.String())
	}
	if serves("127.0.0.2", webPort) || serves("127.0.0.1", firstPort) {
		t.Errorf("a Gateway moved; gwdev said:\n%s", out.String())
	}
}

// waitForUp polls cond for up to settle, failing with gwdev's output.
func waitForUp(t *testing.T, out *syncBuffer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(settle)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; gwdev said:\n%s", what, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
