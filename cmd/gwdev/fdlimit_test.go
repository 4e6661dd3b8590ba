package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestDescriptorExhaustionBinary runs the built gwdev with 256 descriptors
// and opens 400 connections to one listener: the listener refuses past its
// limit (an eighth of the descriptors), and another listener and the admin
// API's /healthz keep answering (issue 12, finding 4: every listener and the
// admin API stopped answering once descriptors ran out).
func TestDescriptorExhaustionBinary(t *testing.T) {
	if testing.Short() || runtime.GOOS == "windows" {
		t.Skip("builds gwdev and runs it under ulimit")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "gwdev")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building gwdev: %v\n%s", err, out)
	}
	p1, p2, pa := freePort(t), freePort(t), freePort(t)
	gw := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners:
  - {name: one, protocol: HTTP, port: %d}
  - {name: two, protocol: HTTP, port: %d}
`, p1, p2) + "---\n" + routeFile("a", "svc-a")
	dir := filepath.Join(tmp, "m")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(gw), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut syncBuffer
	cmd := exec.Command("sh", "-c", fmt.Sprintf("ulimit -n 256 && exec %s up --no-tui --admin 127.0.0.1:%d %s", bin, pa, dir))
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	status := func(url, host string) int {
		req, _ := http.NewRequest("GET", url, nil)
		req.Host = host
		resp, err := client.Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	one, two := fmt.Sprintf("http://127.0.0.1:%d/", p1), fmt.Sprintf("http://127.0.0.1:%d/", p2)
	deadline := time.Now().Add(10 * time.Second)
	for status(two, "a.example.com") != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("gwdev not serving; it said:\n%s%s", out.String(), errOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 400 {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p1), time.Second)
		if err != nil {
			continue // the backlog may be full for a moment
		}
		held = append(held, c)
	}
	time.Sleep(200 * time.Millisecond)
	if got := status(two, "a.example.com"); got != 200 {
		t.Errorf("the other listener answers %d under exhaustion of the first", got)
	}
	if got := status(fmt.Sprintf("http://127.0.0.1:%d/healthz", pa), fmt.Sprintf("127.0.0.1:%d", pa)); got != 200 {
		t.Errorf("/healthz answers %d under exhaustion of a listener", got)
	}
	if got := status(one, "a.example.com"); got == 200 {
		t.Errorf("the exhausted listener still takes connections")
	}
	for _, c := range held {
		c.Close()
	}
	held = nil
	deadline = time.Now().Add(5 * time.Second)
	for status(one, "a.example.com") != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("the first listener does not recover; gwdev said:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// On stdout, like the other gwdev: lines.
	if s := out.String(); !strings.Contains(s, "gwdev: 256 file descriptors allowed: at most 32 connections per listener") {
		t.Errorf("gwdev did not say what its limits are on stdout:\n%s\nstderr:\n%s", s, errOut.String())
	}
}
