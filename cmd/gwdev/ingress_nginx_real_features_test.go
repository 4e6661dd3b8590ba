package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
)

// corsHeaders are the response headers the CORS differential compares.
var corsHeaders = []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods",
	"Access-Control-Allow-Headers", "Access-Control-Expose-Headers", "Access-Control-Max-Age"}

// TestIngressNginxDifferentialFeatures runs real nginx with the location
// blocks of Ingresses using proxy-body-size (client_max_body_size) and
// enable-cors (ingress-nginx's CORS block), and gwdev's emulation of them,
// and compares the status and CORS headers of the same requests: bodies at
// and over the limit (with a Content-Length), preflights and actual requests
// from allowed and other origins.
func TestIngressNginxDifferentialFeatures(t *testing.T) {
	bin := nginxBinary(t)
	if bin == "" {
		t.Skip("nginx is not installed and cannot be (needs root and apt-get): the differential test against real nginx does not run")
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	}))
	defer backend.Close()
	manifests := ingressClassNginx +
		ingress("default", "default.example", nil, "Prefix / web") +
		ingress("small", "small.example", nginxAnn("proxy-body-size", "2k"), "Prefix / web") +
		ingress("unlimited", "unlimited.example", nginxAnn("proxy-body-size", "0"), "Prefix / web") +
		ingress("open", "open.example", nginxAnn("enable-cors", "true"), "Prefix / web") +
		ingress("listed", "listed.example", nginxAnn("enable-cors", "true", "cors-allow-origin", "https://app.example, https://*.shop.example, http://dev.example:8080",
			"cors-allow-credentials", "false", "cors-allow-methods", "GET, POST", "cors-allow-headers", "X-Token,Content-Type",
			"cors-expose-headers", "X-Total", "cors-max-age", "600"), "Prefix / web") +
		ingressServices("web")
	lr := loadIngressManifests(t, manifests)
	nginxPort := realNginx(t, bin, func(listen string) string {
		return ingressnginx.NginxConf(lr.Snapshot, engine.Options{}, listen, strings.TrimPrefix(backend.URL, "http://"))
	})
	emu := serveIngressSnapshot(t, lr)
	emuAddr, emuPort := emu.addr, emu.httpPort
	type request struct {
		method, host string
		size         int
		hdr          []string
	}
	reqs := []request{
		{"POST", "default.example", 1 << 20, nil}, {"POST", "default.example", 1<<20 + 1, nil},
		{"POST", "small.example", 2048, nil}, {"POST", "small.example", 2049, nil}, {"POST", "unlimited.example", 2 << 20, nil},
		{"GET", "small.example", 0, nil},
	}
	for _, host := range []string{"open.example", "listed.example"} {
		for _, origin := range []string{"", "https://app.example", "https://a.shop.example", "https://a.b.shop.example", "http://dev.example:8080",
			"http://dev.example", "https://evil.example", "HTTPS://APP.EXAMPLE"} {
			for _, m := range []string{"GET", "OPTIONS"} {
				var hdr []string
				if origin != "" {
					hdr = []string{"Origin", origin}
				}
				reqs = append(reqs, request{m, host, 0, hdr}, request{m, host, 0, append(hdr, "Access-Control-Request-Method", "POST")})
			}
		}
	}
	ask := func(addr string, port int, r request) string {
		var body io.Reader
		if r.size > 0 {
			body = bytes.NewReader(bytes.Repeat([]byte("x"), r.size))
		}
		req, err := http.NewRequest(r.method, "http://"+net.JoinHostPort(addr, strconv.Itoa(port))+"/p", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = r.host
		for i := 0; i+1 < len(r.hdr); i += 2 {
			req.Header.Set(r.hdr[i], r.hdr[i+1])
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("%s %s on %s:%d: %v", r.method, r.host, addr, port, err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		out := strconv.Itoa(resp.StatusCode)
		for _, h := range corsHeaders {
			if v := resp.Header.Get(h); v != "" {
				out += "\n    " + h + ": " + v
			}
		}
		return out
	}
	t.Logf("%d requests to nginx and gwdev", len(reqs))
	for _, r := range reqs {
		n, e := ask("127.0.0.1", nginxPort, r), ask(emuAddr, emuPort, r)
		if n != e {
			t.Errorf("%s http://%s/p (%d bytes, %v)\n  nginx: %s\n  gwdev: %s", r.method, r.host, r.size, r.hdr, n, e)
		}
	}
}
