package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gwdev/gwdev/emulator/admin"
)

// TestUpAdminPortTaken: when the admin address is taken, gwdev up says so
// at once, serves the admin API on another port of the same host and
// names it; every admin answer carries this instance's Gwdev-Instance
// header, so that the other process's answers cannot pass for ours.
func TestUpAdminPortTaken(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "routes.yaml"), fmt.Sprintf(upGateway, freePort(t)))
	out := runUp(t, &upOptions{noTUI: true, admin: held.Addr().String()}, dir)
	re := regexp.MustCompile(`admin API: ` + regexp.QuoteMeta(held.Addr().String()) +
		` is in use \(another gwdev\? its answers carry a different Gwdev-Instance header\); this one \((pid \d+, [^)]+)\) serves it on http://(127\.0\.0\.1:\d+)/`)
	var m []string
	waitFor(t, out, "found", func() string {
		if m = re.FindStringSubmatch(out.String()); m != nil {
			return "found"
		}
		return "not yet"
	})
	resp, err := http.Get("http://" + m[2] + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := fmt.Sprintf("pid %d, %s", os.Getpid(), dir)
	if got := resp.Header.Get(admin.InstanceHeader); got != want || m[1] != want {
		t.Errorf("Gwdev-Instance %q, notice names %q, want %q", got, m[1], want)
	}
}
