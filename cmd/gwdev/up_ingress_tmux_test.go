package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/freeport"
)

// TestUpIngressTUIInTmux runs `gwdev up samples/ingress-nginx` (Ingresses,
// no Gateway) in an 80×24 tmux pane, with port 80 of the IngressClass's
// address held by another socket, and reads the Ingress front end on the
// dashboard: the Overview counts the Ingresses, shows the IngressClass
// with where port 80 is served, why it moved, its listeners and each
// Ingress's host+path, and no "No Gateway" message; the served address
// answers; Routes lists the Ingresses and expands one into its locations
// with the bound address. It skips when tmux is not installed (or -short).
func TestUpIngressTUIInTmux(t *testing.T) {
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
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The class's address is 127.0.20.1 (the sample's only class). Port 80
	// is held, as by another server, so that gwdev moves it to a free port
	// (port+offset) and says why.
	const classAddr = "127.0.20.1"
	if held, err := net.Listen("tcp", classAddr+":80"); err == nil {
		t.Cleanup(func() { held.Close() })
	} // else someone holds it already: it moves all the same
	moved := freeport.TCP(t, classAddr)
	offset := moved - 80

	s := &tmuxSession{t: t, socket: fmt.Sprintf("gwdev-ingress-test-%d", os.Getpid())}
	t.Cleanup(func() { _, _ = s.tmux("kill-server") })
	if out, err := s.tmux("new-session", "-d", "-s", "gwdev", "-x", "80", "-y", "24", "-c", root,
		"env", "-u", "NO_COLOR", bin, "up", "--admin", "127.0.0.1:"+strconv.Itoa(freePort(t)),
		"--port-offset", strconv.Itoa(offset), "samples/ingress-nginx"); err != nil {
		t.Fatalf("starting tmux: %v: %s", err, out)
	}

	bound := fmt.Sprintf("%s:%d", classAddr, moved)
	screen := s.waitText("IngressClass nginx", settle)
	for _, want := range []string{"10 Ingresses on 2 listeners", "port 80", "→ " + bound, "could not be bound: in use by another",
		"LISTENER", "https", "Ingress default/admin", "admin.shop.example.com/", "shop.example.com/api"} {
		if !strings.Contains(screen, want) {
			t.Errorf("Overview lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "No Gateway") || strings.Contains(screen, "0 Gateways") {
		t.Errorf("Overview says there is no Gateway while Ingresses are served:\n%s", screen)
	}
	// The address the Overview shows serves the Ingresses.
	req, _ := http.NewRequest(http.MethodGet, "http://"+bound+"/assets/app.css", nil)
	req.Host = "static.shop.example.com"
	client := &http.Client{Timeout: 3 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET http://%s/assets/app.css (Host static.shop.example.com): %v", bound, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET static.shop.example.com/assets/app.css on %s: %d, want 200 from the echo backend", bound, resp.StatusCode)
	}

	// Routes: the Ingresses, served by the class; enter shows the locations.
	s.keys("2")
	screen = s.waitText("KIND ROUTE", settle)
	for _, want := range []string{"Ing ", "default/api", "payments/chec", "class nginx", "✓ served"} {
		if !strings.Contains(screen, want) {
			t.Errorf("Routes lacks %q:\n%s", want, screen)
		}
	}
	s.keys("Enter")
	screen = s.waitText("served by IngressClass nginx", settle)
	for _, want := range []string{"Ingress/default/admin", bound + " (HTTP 80)", "location  PathPrefix /", "backend  Service default/admin:80"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the expanded Ingress lacks %q:\n%s", want, screen)
		}
	}
	s.keys("q")
}
