package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// builtGwdev builds gwdev into the test's temporary directory (or skips
// without tmux, or with -short) and returns its path; the build cache
// makes every build after the first a link.
func builtGwdev(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	if testing.Short() {
		t.Skip("builds gwdev and drives it in tmux")
	}
	bin := filepath.Join(t.TempDir(), "gwdev")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building gwdev: %v\n%s", err, out)
	}
	return bin
}

// privateLoopback is a loopback address of this test process's own, so
// that the fixed ports a Gateway names do not meet other processes'.
func privateLoopback(second byte) string {
	pid := os.Getpid()
	return fmt.Sprintf("127.%d.%d.%d", second, (pid>>8)&0xff, pid&0xff|1)
}

// startUp runs `gwdev up --admin off DIR` in a 160×45 tmux pane with env
// added, and returns the session. Without DISPLAY and WAYLAND_DISPLAY no
// system clipboard takes a copy, so it goes to tmux's buffer (OSC 52).
func startUp(t *testing.T, bin, dir string, env ...string) *tmuxSession {
	t.Helper()
	s := &tmuxSession{t: t, socket: fmt.Sprintf("gwdev-%s-%d", strings.ToLower(t.Name()), os.Getpid())}
	t.Cleanup(func() { _, _ = s.tmux("kill-server") })
	args := append([]string{"new-session", "-d", "-s", "gwdev", "-x", "160", "-y", "45", "env", "-u", "NO_COLOR", "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY"}, env...)
	if out, err := s.tmux(append(args, bin, "up", "--admin", "off", dir)...); err != nil {
		t.Fatalf("starting tmux: %v: %s", err, out)
	}
	return s
}

// stopUp quits the dashboard with q and waits for gwdev to exit.
func stopUp(t *testing.T, s *tmuxSession) {
	t.Helper()
	s.keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := s.tmux("has-session", "-t", "gwdev"); err != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gwdev did not exit after q:\n%s", s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// boundAddr reads from the Overview where the Gateway's port is served.
func boundAddr(t *testing.T, s *tmuxSession, port int) string {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`port %d\s+→ (127\.[0-9.]+:\d+)`, port))
	screen := s.waitFor(fmt.Sprintf("port %d in the Overview", port), 15*time.Second, func(screen string) bool { return re.MatchString(screen) })
	return re.FindStringSubmatch(screen)[1]
}

// tmuxApp is a Gateway on address %s with the listeners %s, an HTTPRoute
// to Service app and the Service.
const tmuxApp = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  addresses: [{type: IPAddress, value: %s}]
  listeners: [%s]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: web}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {ports: [{port: 80}]}
`

// TestUpCopiedCurlVerifiesWithGwdevCerts: gwdev certs signs the missing
// Secret of an HTTPS listener with a local CA (--ca-dir), gwdev up serves
// it in the dashboard, a request to it is copied with c, and the copied
// command names the CA with --cacert instead of -k; run as it is with real
// curl, it verifies the listener's certificate and gets 200.
func TestUpCopiedCurlVerifiesWithGwdevCerts(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	bin := builtGwdev(t)
	tmp := t.TempDir()
	dir, caDir := filepath.Join(tmp, "app"), filepath.Join(tmp, "my-ca")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "app.yaml"), fmt.Sprintf(tmuxApp, privateLoopback(93),
		"{name: https, protocol: HTTPS, port: 443, hostname: app.test, tls: {certificateRefs: [{name: app-cert}]}}"))
	if out, errOut, code := runGwdev(t, "", "certs", "--ca-dir", caDir, dir); code != 0 {
		t.Fatalf("gwdev certs: exit %d\n%s%s", code, out, errOut)
	}
	caFile := filepath.Join(caDir, "ca.crt")

	// The default CA location is empty: only gwdev-certs.yaml names the CA.
	s := startUp(t, bin, dir, "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))
	addr := boundAddr(t, s, 443)
	conf := &tls.Config{ServerName: "app.test", InsecureSkipVerify: true} //nolint:gosec // the copied command verifies
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			tc := tls.Client(c, conf)
			return tc, tc.HandshakeContext(ctx)
		}}}
	resp, err := client.Get("https://app.test/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	if out, err := s.tmux("set-option", "-g", "set-clipboard", "on"); err != nil {
		t.Fatalf("set-clipboard: %v: %s", err, out)
	}
	s.keys("4")
	s.waitText("/hello", 10*time.Second)
	s.keys("c")
	// The status line says which CA verifies (for statusFor, 8 s: the
	// tui tests check its words); the command goes to tmux's buffer.
	var line string
	deadline := time.Now().Add(20 * time.Second)
	for {
		line, _ = s.tmux("show-buffer")
		if strings.HasPrefix(line, "curl ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tmux buffer (OSC 52) holds %q, want the curl command; the screen is:\n%s", line, s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, port, _ := net.SplitHostPort(addr)
	if !strings.HasPrefix(line, "curl -i --cacert "+caFile+" --resolve app.test:"+port+":") || strings.Contains(line, " -k") {
		t.Fatalf("copied %s", line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", line).CombinedOutput()
	if err != nil || !strings.Contains(string(out), " 200") {
		t.Errorf("%s: %v\n%s", line, err, out)
	}
	stopUp(t, s)
}

// TestUpTUIShowsGwdevYAMLProblem: a mistake made in gwdev.yaml after gwdev
// up started shows in the dashboard's Problems view with file:line and the
// message, the last good mapping keeps serving, and the problem goes away
// once gwdev.yaml is fixed.
func TestUpTUIShowsGwdevYAMLProblem(t *testing.T) {
	bin := builtGwdev(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), fmt.Sprintf(tmuxApp, privateLoopback(94), "{name: http, protocol: HTTP, port: 8080}"))
	cfg := filepath.Join(dir, "gwdev.yaml")
	writeFile(t, cfg, "backends:\n  default/app:80: 127.0.0.1:1\n")
	s := startUp(t, bin, dir)
	addr := boundAddr(t, s, 8080)
	s.keys("3")
	s.waitText("✓ no problems", 10*time.Second)

	saveByRename(t, cfg, "backends:\n  default/app:80: localhost\n")
	screen := s.waitText("gwdev.yaml:2", 10*time.Second)
	for _, want := range []string{`target "localhost" is not host:port`, "✗ error"} {
		if !strings.Contains(screen, want) {
			t.Errorf("Problems lacks %q:\n%s", want, screen)
		}
	}
	// The last good mapping serves: 127.0.0.1:1 refuses, so the gateway
	// answers 502 or 503 instead of the echo backend's 200.
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 500 {
		t.Errorf("with a broken gwdev.yaml the last good mapping (a closed port) should answer 5xx, got %d", resp.StatusCode)
	}

	saveByRename(t, cfg, "backends: {}\n")
	s.waitFor("the gwdev.yaml problem to clear", 10*time.Second, func(screen string) bool {
		return !strings.Contains(screen, "gwdev.yaml:2") && strings.Contains(screen, "✓ no problems")
	})
	stopUp(t, s)
}
