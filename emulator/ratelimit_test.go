package emulator

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// TestRateLimitFullTableRefusalTraced: end to end with MaxClients 1, a
// request from 127.0.0.2 in progress and one from 127.0.0.3: the second
// is answered 503 and its trace says why.
func TestRateLimitFullTableRefusalTraced(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	h := serve(t, func(p int32) *table.Table {
		r := rule("r", prefix("/"), mapped("slow", 1, slow.Listener.Addr().String()))
		r.Policy = &table.RulePolicy{RateLimit: &table.RateLimit{Name: "rl", Connections: 1, MaxClients: 1}}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("", r)))))
	})
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DialContext: func(ctx context.Context, n, a string) (net.Conn, error) { return d.DialContext(ctx, n, a) }}}
	}
	first := make(chan error, 1)
	go func() {
		resp, err := from("127.0.0.2").Get(h.url("/held"))
		if err == nil {
			resp.Body.Close()
		}
		first <- err
	}()
	<-arrived
	resp, err := from("127.0.0.3").Get(h.url("/new"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tr := waitTrace(t, h.s, func(tr Trace) bool { return tr.Path == "/new" })
	if resp.StatusCode != http.StatusServiceUnavailable || tr.Status != http.StatusServiceUnavailable ||
		!strings.Contains(tr.Reason, "rate limit rl: 127.0.0.3 is a new client address while the limit's table of 1 addresses is full") {
		t.Errorf("the new address got %d, trace %d %q", resp.StatusCode, tr.Status, tr.Reason)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the held request: %v", err)
	}
}
