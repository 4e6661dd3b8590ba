package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestUpMigrationInTmux runs `gwdev up` on a copy of samples/ingress-nginx
// in a real terminal (tmux, 160×50) and checks the Migration view: the tab
// is there, 7 shows the comparison with migrate --compare's differences and
// the Ingress's file:line; writing migrate's output into the folder makes
// the view compare that copy (its file:line); breaking a backendRef in the
// copy shows a new 500 difference after the save. It skips when tmux is not
// installed (or with -short).
func TestUpMigrationInTmux(t *testing.T) {
	bin := builtGwdev(t) // up_tmux_leftovers_test.go
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "shop")
	if err := os.CopyFS(dir, os.DirFS("../../samples/ingress-nginx")); err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("gwdev-migration-test-%d", os.Getpid())}
	t.Cleanup(func() { _, _ = s.tmux("kill-server") })
	adminAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	if out, err := s.tmux("new-session", "-d", "-s", "gwdev", "-x", "160", "-y", "50",
		"env", "-u", "NO_COLOR", bin, "up", "--admin", adminAddr, dir); err != nil {
		t.Fatalf("starting tmux: %v: %s", err, out)
	}
	s.waitText("7 Migration", settle)
	s.keys("7")
	screen := s.waitText("requests to ingress-nginx (emulated)", settle)
	for _, want := range []string{"GET http://admin.shop.example.com/", "ingresses.yaml:124", "location  ingress-nginx", "(first load)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the Migration view lacks %q:\n%s", want, screen)
		}
	}
	// The web view shows the dashboard's comparison (one runs for both).
	resp, err := http.Get("http://" + adminAddr + "/ui/state")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Migration *struct {
			Requests    int
			Differences []struct{ Request, From string }
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if m := page.Migration; m == nil || m.Requests == 0 || len(m.Differences) == 0 || !strings.HasSuffix(m.Differences[0].From, "ingresses.yaml:124") {
		t.Errorf("the web view's Migration: %+v", page.Migration)
	}

	// The converted manifests kept in the folder: the view compares them.
	converted := filepath.Join(tmp, "gateway.yaml")
	// Exit 1: the sample's basic auth, allow list and rate limit are not
	// carried over (security-relevant drops); the manifests are written.
	if out, err := exec.Command(bin, "migrate", dir, "-o", converted).CombinedOutput(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("gwdev migrate: %v\n%s", err, out)
		}
	}
	data, err := os.ReadFile(converted)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitText("the folder's own version of", settle)
	s.waitText(filepath.Base(dir)+"/gateway.yaml:", settle)
	// Keys sent together arrive as one chunk, which the dashboard reads
	// as text: the filter key goes alone.
	s.keys("/")
	s.waitFor("the filter prompt", settle, func(screen string) bool {
		lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
		return len(lines) >= 2 && strings.HasPrefix(strings.TrimSpace(lines[len(lines)-2]), "/")
	})
	s.keys("500")
	s.waitText("/500", settle)
	s.keys("Enter")
	screen = s.waitFor("the filter kept", settle, func(screen string) bool {
		return !strings.Contains(screen, "keep filter") && strings.Contains(screen, "/500")
	})
	if strings.Contains(screen, `gateway-api "500"`) {
		t.Fatalf("a 500 difference before the copy was edited:\n%s", screen)
	}
	// A backendRef of the copy now names a Service that does not exist.
	broken := strings.Replace(string(data), "    - name: api\n", "    - name: missing-svc\n", 1)
	if broken == string(data) {
		t.Fatalf("no backendRef to api in the converted manifests:\n%s", data)
	}
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	// The comparison shown is the latest reload's (a save may reload
	// more than once: the file appears, then its bytes).
	reloadNo := regexp.MustCompile(`reload #(\d+) `)
	s.waitFor("the comparison of the latest reload, with the 500", settle, func(screen string) bool {
		m := reloadNo.FindStringSubmatch(screen)
		return m != nil && m[1] != "1" && strings.Contains(screen, "(reload #"+m[1]+")") && strings.Contains(screen, `gateway-api "500"`)
	})
	s.keys("q")
}
