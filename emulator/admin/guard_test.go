package admin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
)

// The admin API binds loopback only unless allowed, answers only Host
// headers naming itself (DNS rebinding), and serves pprof only when asked,
// with profiles capped.
func TestAdminLockdown(t *testing.T) {
	s := emulator.New(emulator.Config{})
	defer s.Close(context.Background())
	adm := New(s, nil)
	defer adm.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "example.com:0"} {
		if _, _, err := Serve(ctx, addr, adm, Options{}); err == nil || !strings.Contains(err.Error(), "not loopback") {
			t.Errorf("Serve(%s): %v, want refused as not loopback", addr, err)
		}
	}
	addr, _, err := Serve(ctx, "127.0.0.1:0", adm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(addr.String(), ":")
	do := func(addr, host, path string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for host, want := range map[string]int{
		addr.String(): 200, "localhost:" + port: 200, "127.0.0.2:" + port: 200, "[::1]:" + port: 200, "localhost": 200,
		"evil.example.com:" + port: 421, "evil.example.com": 421, "127.0.0.1.nip.io:" + port: 421, "localhost:1": 421,
	} {
		if got, body := do(addr.String(), host, "/traces"); got != want {
			t.Errorf("Host %q: %d %s, want %d", host, got, body, want)
		}
	}
	if got, _ := do(addr.String(), addr.String(), "/debug/pprof/"); got != 404 {
		t.Errorf("pprof without the flag: %d, want 404", got)
	}

	remote, _, err := Serve(ctx, "127.0.0.1:0", adm, Options{AllowRemote: true, Pprof: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := do(remote.String(), "gwdev.example.com", "/healthz"); got != 200 {
		t.Errorf("with AllowRemote, any Host: %d", got)
	}
	if got, body := do(remote.String(), remote.String(), "/debug/pprof/"); got != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("pprof with the flag: %d", got)
	}
	// A profile asking for an hour runs at most MaxProfileDuration: seen
	// through the query the handler gets.
	rec := &queryRecorder{}
	capSeconds(rec).ServeHTTP(nil, httptest.NewRequest("GET", "http://x/debug/pprof/profile?seconds=3600", nil))
	if rec.seconds != fmt.Sprint(int(MaxProfileDuration/time.Second)) {
		t.Errorf("profile seconds %q, want capped", rec.seconds)
	}
	capSeconds(rec).ServeHTTP(nil, httptest.NewRequest("GET", "http://x/debug/pprof/profile?seconds=2", nil))
	if rec.seconds != "2" {
		t.Errorf("profile seconds %q, want 2 kept", rec.seconds)
	}
}

type queryRecorder struct{ seconds string }

func (q *queryRecorder) ServeHTTP(_ http.ResponseWriter, r *http.Request) {
	q.seconds = r.URL.Query().Get("seconds")
}
