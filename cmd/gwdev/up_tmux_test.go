package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tmuxSession drives the real gwdev binary in a detached tmux session on a
// private tmux server.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func (s *tmuxSession) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	return string(out), err
}

func (s *tmuxSession) capture() string {
	out, err := s.tmux("capture-pane", "-p", "-t", "gwdev")
	if err != nil {
		return "(capture-pane: " + err.Error() + ": " + out + ")"
	}
	return out
}

func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	if out, err := s.tmux(append([]string{"send-keys", "-t", "gwdev"}, keys...)...); err != nil {
		s.t.Fatalf("send-keys %v: %v: %s", keys, err, out)
	}
}

// waitFor polls the screen until cond holds, for at most d.
func (s *tmuxSession) waitFor(what string, d time.Duration, cond func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		screen := s.capture()
		if cond(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("waiting %s for %s; the screen is:\n%s", d, what, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *tmuxSession) waitText(text string, d time.Duration) string {
	s.t.Helper()
	return s.waitFor(fmt.Sprintf("%q", text), d, func(screen string) bool { return strings.Contains(screen, text) })
}

// TestUpTUIInTmux starts `gwdev up` on a copy of samples/basic in a 120×40
// tmux pane and checks the dashboard: the Overview, a broken file in
// Problems while the last good routes keep serving, the problem clearing
// once the file is fixed, requests in Traces, copy as curl (status line and
// OSC 52 clipboard), replay, the request detail, and q stopping gwdev with
// its listeners closed. It skips when tmux is not installed (or with -short).
func TestUpTUIInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	if testing.Short() {
		t.Skip("builds gwdev and drives it in tmux")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "gwdev")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building gwdev: %v\n%s", err, out)
	}
	dir := filepath.Join(tmp, "basic")
	if err := os.CopyFS(dir, os.DirFS("../../samples/basic")); err != nil {
		t.Fatal(err)
	}
	// The listener on a free port too (8080 and its fallback may be taken).
	listenPort := freePort(t)
	gwFile := filepath.Join(dir, "gateway.yaml")
	gwYAML, err := os.ReadFile(gwFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gwFile, []byte(strings.ReplaceAll(string(gwYAML), "port: 8080", "port: "+strconv.Itoa(listenPort))), 0o644); err != nil {
		t.Fatal(err)
	}
	// The sample's routing tests go to the moved port too.
	testsFile := filepath.Join(dir, "routes.gwtest.yaml")
	testsYAML, err := os.ReadFile(testsFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(testsFile, []byte(strings.NewReplacer(":8080/", ":"+strconv.Itoa(listenPort)+"/",
		"example.com:8080", "example.com:"+strconv.Itoa(listenPort)).Replace(string(testsYAML))), 0o644); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app.yaml")
	good, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}

	s := &tmuxSession{t: t, socket: fmt.Sprintf("gwdev-test-%d", os.Getpid())}
	t.Cleanup(func() { _, _ = s.tmux("kill-server") })
	// The pane's shell is not used: tmux runs gwdev directly; when it exits
	// the session ends.
	// Free ports for everything: another gwdev up (default admin 9901,
	// listeners 8080…) may run on this machine.
	if out, err := s.tmux("new-session", "-d", "-s", "gwdev", "-x", "120", "-y", "40",
		"env", "-u", "NO_COLOR", bin, "up", "--admin", "127.0.0.1:"+strconv.Itoa(freePort(t)), dir); err != nil {
		t.Fatalf("starting tmux: %v: %s", err, out)
	}

	// Overview: the Gateway, its listener and where its port is served.
	screen := s.waitText("Gateway default/web", settle)
	for _, want := range []string{"1 Overview", "4 Traces", "http", "✓ no problems", ", web view on http://127.0.0.1:"} {
		if !strings.Contains(screen, want) {
			t.Errorf("Overview lacks %q:\n%s", want, screen)
		}
	}
	m := regexp.MustCompile(`port ` + strconv.Itoa(listenPort) + `\s+→ (127\.0\.0\.1:\d+)`).FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no bound address for port %d in the Overview:\n%s", listenPort, screen)
	}
	addr := m[1]
	get := func() (int, error) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/users", nil)
		req.Host = "app.example.com"
		resp, err := (&http.Client{Timeout: 3 * time.Second}).Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	// Break the file: the problem shows with file:line, the last good
	// version keeps serving.
	if err := os.WriteFile(app, append(append([]byte{}, good...), "\n---\nkind: HTTPRoute\nmetadata: [\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys("3")
	screen = s.waitText("app.yaml:", settle)
	if !strings.Contains(screen, "yaml:") || !strings.Contains(screen, "✗ error") {
		t.Errorf("Problems does not show the YAML error:\n%s", screen)
	}
	if code, err := get(); err != nil || code != http.StatusOK {
		t.Errorf("with a broken file, the last good route answers %d, %v; want 200", code, err)
	}

	// Fix it: the problem clears.
	if err := os.WriteFile(app, good, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitFor("the problem to clear", settle, func(screen string) bool {
		return !strings.Contains(screen, "app.yaml:") && strings.Contains(screen, "✓ no problems")
	})

	// The Tests view follows the folder's routing tests: all pass; an edit
	// that sends /api elsewhere fails the case at its line; undoing it
	// passes again.
	s.keys("8")
	s.waitText("all 4 cases pass", settle)
	s.waitFor("the failure notice to expire", settle, func(screen string) bool { return !strings.Contains(screen, "cases fail") })
	if err := os.WriteFile(app, []byte(strings.Replace(string(good), "value: /api", "value: /apx", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	screen = s.waitText("1 of 4 cases fail", settle)
	if !strings.Contains(screen, "routes.gwtest.yaml:9 route.rule: expected 0, got 1") {
		t.Errorf("the Tests view does not say why:\n%s", screen)
	}
	if err := os.WriteFile(app, good, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitText("all 4 cases pass", settle)
	s.waitFor("the failure notice to expire", settle, func(screen string) bool { return !strings.Contains(screen, "cases fail") })

	// Requests show in Traces, newest first, with the rule that matched.
	s.keys("4")
	for i := 0; i < 3; i++ {
		if code, err := get(); err != nil || code != http.StatusOK {
			t.Fatalf("request %d: %d, %v", i, code, err)
		}
	}
	// The dashboard takes traces in batches: wait for the last one (the tab
	// counts the request made while the file was broken too).
	tracesTab := regexp.MustCompile(`4 Traces [4-9]`)
	screen = s.waitFor("3 requests in Traces", settle, func(screen string) bool {
		return strings.Count(screen, "/api/users") >= 3 && tracesTab.MatchString(screen)
	})
	for _, want := range []string{"app.example.com", "default/app r0.0", "200", "following"} {
		if !strings.Contains(screen, want) {
			t.Errorf("Traces lacks %q:\n%s", want, screen)
		}
	}
	if !tracesTab.MatchString(screen) {
		t.Errorf("the Traces tab does not count the requests:\n%s", screen)
	}
	// c copies the request as curl: to the status line, and with OSC 52 to
	// the clipboard, which tmux keeps as a buffer when set-clipboard is on.
	if out, err := s.tmux("set-option", "-g", "set-clipboard", "on"); err != nil {
		t.Fatalf("set-clipboard: %v: %s", err, out)
	}
	// Filter the view to the requests, so that c copies one of them even
	// when a connection that carried no request (another process probing
	// the port) was traced last and sits at the top.
	s.keys("/")
	s.keys("-l", "api/users")
	s.keys("Enter")
	s.waitFor("the Traces filter", settle, func(screen string) bool {
		return strings.Contains(screen, "/api/users") && !strings.Contains(screen, "closed the connection")
	})
	s.keys("c")
	// Without a system clipboard (no xclip, wl-copy… here) the status line
	// shows the command first, then says it went out as OSC 52, not that
	// it was copied.
	// (at 120 columns the line is cut after the command's headers).
	screen = s.waitText("curl -i http://"+addr+"/api/users -H 'Host: app.example.com'", settle)
	if !regexp.MustCompile(`(?m)^curl -i http://\S+/api/users -H 'Host: app.example.com'`).MatchString(screen) {
		t.Errorf("the status line does not start with the command, then say what was done:\n%s", screen)
	}
	deadline := time.Now().Add(settle)
	for {
		buf, _ := s.tmux("show-buffer")
		if strings.HasPrefix(buf, "curl -i http://"+addr+"/api/users") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tmux buffer (OSC 52) holds %q, want the curl command", buf)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// r replays it through the listener: the status line says so.
	s.keys("r")
	s.waitText("replayed GET app.example.com/api/users → 200", settle)
	s.keys("Enter")
	s.waitText("Decision", settle)

	// q stops gwdev: the session ends and the listener is closed.
	s.keys("q")
	deadline = time.Now().Add(10 * time.Second)
	for {
		if _, err := s.tmux("has-session", "-t", "gwdev"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gwdev did not exit after q:\n%s", s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after q", addr)
	}
}
