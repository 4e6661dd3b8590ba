package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/freeport"
)

// settle is how long a test waits for gwdev to do what it will do (start,
// reload, serve, draw): only a failing test waits that long, so it leaves
// room for a loaded machine under -race.
const settle = 30 * time.Second

// freePort returns a TCP port free on 127.0.0.1 for a Gateway listener
// (internal/freeport: nothing else takes it before gwdev binds it).
func freePort(t *testing.T) int {
	t.Helper()
	return freeport.TCP(t, "127.0.0.1")
}

// syncBuffer is a goroutine-safe output sink for `gwdev up`.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const upGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners: [{name: http, protocol: HTTP, port: %d}]
`

const upRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s}
spec:
  parentRefs: [{name: web}]
  hostnames: [%s.example.com]
  rules: [{backendRefs: [{name: %s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: %s}
spec: {ports: [{port: 80}]}
`

func routeFile(name, service string) string {
	return fmt.Sprintf(upRoute, name, name, service, service)
}

// runUp runs `gwdev up` on dir with o until the test ends and returns what
// it writes.
func runUp(t *testing.T, o *upOptions, dir string) *syncBuffer {
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- o.run(ctx, out, out, dir) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("up: %v", err)
		}
	})
	return out
}

// echoGet sends GET /x for host to 127.0.0.1:port and returns the status
// and the Service the echo backend says it answered for (-1 and the error
// when the request fails).
func echoGet(client *http.Client, port int, host string) (int, string) {
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/x", port), nil)
	req.Host = host
	resp, err := client.Do(req)
	if err != nil {
		return -1, err.Error()
	}
	defer resp.Body.Close()
	var echo struct{ Service string }
	_ = json.NewDecoder(resp.Body).Decode(&echo)
	return resp.StatusCode, echo.Service
}

// TestUpReloadsWithoutFailures runs `gwdev up` on a folder and, while a
// client sends requests continuously, edits, breaks, fixes and deletes
// files: no request fails because of a reload, a broken file's objects keep
// serving their last good version, and a deleted file's routes go away.
func TestUpReloadsWithoutFailures(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	write := func(name, content string) {
		t.Helper()
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil { // save by rename, like editors
			t.Fatal(err)
		}
	}
	write("gateway.yaml", fmt.Sprintf(upGateway, port))
	write("a.yaml", routeFile("a", "svc-a"))
	write("b.yaml", routeFile("b", "svc-b"))

	out := runUp(t, &upOptions{portOffset: 0, debounce: 10 * time.Millisecond}, dir)

	client := &http.Client{Timeout: 5 * time.Second}
	get := func(host string) (int, string) { return echoGet(client, port, host) }
	waitFor := func(what string, cond func() bool) { t.Helper(); waitForUp(t, out, what, cond) }
	waitFor("route a served", func() bool { c, s := get("a.example.com"); return c == 200 && s == "svc-a" })

	// Route b is never touched: a client hammers it during every reload.
	var sent, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, s := get("b.example.com")
				sent.Add(1)
				if c != 200 || s != "svc-b" {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("status %d service %q", c, s))
				}
			}
		}()
	}

	for i := 0; i < 10; i++ {
		svc := fmt.Sprintf("svc-a%d", i)
		write("a.yaml", routeFile("a", svc))
		waitFor("edit "+svc, func() bool { _, s := get("a.example.com"); return s == svc })
	}
	// Break the route's document in a.yaml: its last good version keeps
	// serving (and so does the Service it uses, which the file lost).
	write("a.yaml", strings.Replace(routeFile("a", "svc-broken"), "spec:", "spec: [", 1))
	waitFor("problem reported", func() bool { return strings.Contains(out.String(), "still serving the last good version") })
	if c, s := get("a.example.com"); c != 200 || s != "svc-a9" {
		t.Errorf("broken file: got %d %q, want the last good svc-a9", c, s)
	}
	// Fix it, then delete it.
	write("a.yaml", routeFile("a", "svc-fixed"))
	waitFor("fixed", func() bool { _, s := get("a.example.com"); return s == "svc-fixed" })
	if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor("deleted route gone", func() bool { c, _ := get("a.example.com"); return c == 404 })

	close(stop)
	wg.Wait()
	if sent.Load() < 50 {
		t.Errorf("only %d requests sent during reloads", sent.Load())
	}
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d requests to the untouched route failed during reloads; first: %v", n, sent.Load(), firstFailure.Load())
	}
	t.Logf("%d requests during 13 reloads, %d failed", sent.Load(), failed.Load())
}
