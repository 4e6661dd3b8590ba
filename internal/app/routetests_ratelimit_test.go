package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/routetest"
)

// TestRateLimitCasesIgnoreSendSpeed: a case's count requests are one
// burst to the data plane's rate limits however slowly the machine sends
// them (CI under -race sent 130 requests in over 1.5 s, long enough for
// limit-rps 20 to leak the 30 requests beyond the burst of 100, and the
// sample's case failed), and each case starts with every client's bucket
// drained, so that no case's outcome depends on the one before it.
func TestRateLimitCasesIgnoreSendSpeed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rl.gwtest.yaml")
	src := `cases:
- name: beyond the burst, sent slowly
  request: {url: "https://shop.example.com/api/orders", count: 130}
  expect:
    rateLimit: {limited: true, status: 503}
- name: one request right after
  request: {url: "https://shop.example.com/api/orders"}
  expect:
    status: 200
    rateLimit: {limited: false}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := routetest.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// 130 sends 15 ms apart take 1.95 s: limit-rps 20 leaks 39 requests.
	o := TestOptions{sendPause: 15 * time.Millisecond}
	run, err := runFiles(context.Background(), "../../samples/ingress-nginx", project.Flags{}, o, []*routetest.File{f}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range run.Files[0].Cases {
		if !cr.Passed() {
			t.Errorf("case %q failed: %+v, %s", cr.Name, cr.Mismatches, cr.Error)
		}
	}
	if a := run.Files[0].Cases[0].Actual; a == nil || a.RateLimitedAt != 102 {
		t.Errorf("the first refused request: %+v, want number 102 (nginx admits the first and a burst of 100 more)", a)
	}
}
