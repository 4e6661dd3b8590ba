package main

import (
	"bytes"
	"cmp"
	"crypto/sha1" //nolint:gosec // the {SHA} htpasswd format under test
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// featureAnswer is a response with its headers and body.
type featureAnswer struct {
	status int
	header http.Header
	body   string
}

// do sends a request to the class's HTTP port with host as Host; body nil
// sends none, chunked sends body without a Content-Length.
func (s *ingressSide) do(method, host, path string, body []byte, chunked bool, hdr ...string) featureAnswer {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // hides the length: sent chunked
		}
	}
	req, err := http.NewRequest(method, "http://"+s.addr+":"+strconv.Itoa(s.httpPort)+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s%s: %v", method, host, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return featureAnswer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// endpointSlice maps Service name's port "http" to a local server.
func endpointSlice(name, serverURL string) string {
	u, _ := url.Parse(serverURL)
	return "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: " + name + "-1, labels: {kubernetes.io/service-name: " + name + "}}\n" +
		"addressType: IPv4\nports: [{name: http, port: " + u.Port() + "}]\nendpoints: [{addresses: [127.0.0.1]}]\n"
}

// TestIngressNginxFeatures sends real requests to Ingresses whose
// annotations become rule settings: CORS, the body limit, basic auth,
// cookie affinity, rate and connection limits, proxy timeouts and custom
// headers. Each case is written from ingress-nginx's annotations page and
// the nginx directive the annotation writes (client_max_body_size,
// auth_basic, limit_req, limit_conn, proxy_*_timeout).
func TestIngressNginxFeatures(t *testing.T) {
	t.Run("cors", func(t *testing.T) {
		// "Enable CORS": defaults (origin *, credentials true, max-age
		// 1728000, the default methods and headers); OPTIONS is answered
		// 204 by nginx itself; origins are a list with *. for one level of
		// subdomains; a disallowed origin gets no CORS headers and its
		// OPTIONS goes to the backend.
		s := serveIngresses(t, ingressClassNginx+
			ingress("open", "open.example", nginxAnn("enable-cors", "true"), "Prefix / web")+
			ingress("listed", "listed.example", nginxAnn("enable-cors", "true", "cors-allow-origin", "https://app.example, https://*.shop.example",
				"cors-allow-credentials", "false", "cors-allow-methods", "GET, POST", "cors-expose-headers", "X-Total", "cors-max-age", "600"), "Prefix / web")+
			ingress("guarded", "guarded.example", nginxAnn("enable-cors", "true", "whitelist-source-range", "10.0.0.0/8"), "Prefix / web")+
			ingressServices("web"))
		a := s.do("OPTIONS", "open.example", "/x", nil, false, "Origin", "https://any.example", "Access-Control-Request-Method", "PUT")
		want := map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "true",
			"Access-Control-Allow-Methods": "GET, PUT, POST, DELETE, PATCH, OPTIONS", "Access-Control-Max-Age": "1728000",
			"Access-Control-Allow-Headers": "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization"}
		if a.status != 204 || strings.Contains(a.body, "service") {
			t.Errorf("preflight: %d %q; want 204 from the gateway", a.status, a.body)
		}
		for k, v := range want {
			if a.header.Get(k) != v {
				t.Errorf("preflight %s: %q, want %q", k, a.header.Get(k), v)
			}
		}
		if a := s.do("GET", "open.example", "/x", nil, false, "Origin", "https://any.example"); a.status != 200 || a.header.Get("Access-Control-Allow-Origin") != "*" ||
			a.header.Get("Access-Control-Max-Age") != "1728000" || !strings.Contains(a.body, `"web"`) {
			t.Errorf("GET: %d %v", a.status, a.header)
		}
		if a := s.do("OPTIONS", "open.example", "/x", nil, false); a.status != 204 {
			t.Errorf("OPTIONS without Origin on origin *: %d; want 204 (ingress-nginx sets $cors for every request)", a.status)
		}
		for _, c := range []struct {
			method, origin string
			status         int
			allow          string
		}{
			{"OPTIONS", "https://app.example", 204, "https://app.example"},
			{"OPTIONS", "https://a.shop.example", 204, "https://a.shop.example"},
			{"OPTIONS", "https://a.b.shop.example", 200, ""}, // one level only: to the backend
			{"OPTIONS", "http://app.example", 200, ""},
			{"GET", "https://app.example", 200, "https://app.example"},
			{"GET", "https://evil.example", 200, ""},
		} {
			a := s.do(c.method, "listed.example", "/", nil, false, "Origin", c.origin)
			if a.status != c.status || a.header.Get("Access-Control-Allow-Origin") != c.allow {
				t.Errorf("%s from %s: %d, Allow-Origin %q; want %d %q", c.method, c.origin, a.status, a.header.Get("Access-Control-Allow-Origin"), c.status, c.allow)
			}
			if c.allow != "" && (a.header.Get("Access-Control-Allow-Credentials") != "" || a.header.Get("Access-Control-Allow-Methods") != "GET, POST" ||
				a.header.Get("Access-Control-Expose-Headers") != "X-Total" || a.header.Get("Access-Control-Max-Age") != "600") {
				t.Errorf("%s from %s: headers %v", c.method, c.origin, a.header)
			}
		}
		// nginx answers the preflight in its rewrite phase, before the
		// address check of its access phase; other requests are refused.
		if a := s.do("OPTIONS", "guarded.example", "/", nil, false, "Origin", "https://x.example"); a.status != 204 {
			t.Errorf("preflight behind whitelist-source-range: %d; want 204", a.status)
		}
		if a := s.do("GET", "guarded.example", "/", nil, false, "Origin", "https://x.example"); a.status != 403 {
			t.Errorf("GET behind whitelist-source-range: %d; want 403", a.status)
		}
	})
	t.Run("proxy-body-size", func(t *testing.T) {
		// client_max_body_size: 1m by default (the ConfigMap's
		// proxy-body-size), the annotation's size, 0 for no limit; 413
		// beyond, with or without a Content-Length.
		s := serveIngresses(t, ingressClassNginx+
			ingress("default", "default.example", nil, "Prefix / web")+
			ingress("small", "small.example", nginxAnn("proxy-body-size", "10k"), "Prefix / web")+
			ingress("unlimited", "unlimited.example", nginxAnn("proxy-body-size", "0"), "Prefix / web")+
			ingressServices("web"))
		for _, c := range []struct {
			host    string
			size    int
			chunked bool
			status  int
		}{
			{"default.example", 1 << 20, false, 200},
			{"default.example", 1<<20 + 1, false, 413},
			{"default.example", 1<<20 + 1, true, 413},
			{"small.example", 10 << 10, false, 200},
			{"small.example", 10<<10 + 1, false, 413},
			{"small.example", 20 << 10, true, 413},
			{"small.example", 5 << 10, true, 200},
			{"unlimited.example", 3 << 20, false, 200},
		} {
			if a := s.do("POST", c.host, "/upload", bytes.Repeat([]byte("x"), c.size), c.chunked); a.status != c.status {
				t.Errorf("%s: %d bytes (chunked %v): %d; want %d", c.host, c.size, c.chunked, a.status, c.status)
			}
		}
	})
	t.Run("basic-auth", func(t *testing.T) {
		// "Basic Authentication": auth-type basic, auth-secret (key auth
		// holding an htpasswd file, or auth-secret-type auth-map), auth-realm;
		// 401 with the Basic challenge without valid credentials. Hashes:
		// bcrypt, $apr1$ (openssl passwd -apr1 -salt abcdefgh 'p@ss w0rd'),
		// {SHA}; a crypt(3) DES hash is refused.
		bc, err := bcrypt.GenerateFromPassword([]byte("bpass"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		sha := sha1.Sum([]byte("spass")) //nolint:gosec // the format under test
		// Also: a line without a colon and one with an empty user name
		// (warned by line number, never let in: nginx refuses credentials
		// without a user name), and a bcrypt hash of cost 31, above gwdev's
		// cap of 12 (refused at once: checking it would take days).
		file := "# users\nbob:" + string(bc) + "\napr:$apr1$abcdefgh$UkZoB0qp2g9KE9.krwnMP0\nsha:{SHA}" + base64.StdEncoding.EncodeToString(sha[:]) +
			"\ndes:rl0uE0e2WKB0.\nmallory{PLAIN}nocolon\n:{PLAIN}empty\nburn:$2b$31$" + string(bc[7:]) + "\n"
		secret := "---\napiVersion: v1\nkind: Secret\nmetadata: {name: basic-auth}\ndata:\n  auth: " + base64.StdEncoding.EncodeToString([]byte(file)) + "\n" +
			"---\napiVersion: v1\nkind: Secret\nmetadata: {name: map-auth}\ndata:\n  alice: " + base64.StdEncoding.EncodeToString(bc) + "\n"
		s := serveIngresses(t, ingressClassNginx+
			ingress("file", "file.example", nginxAnn("auth-type", "basic", "auth-secret", "basic-auth", "auth-realm", "Authentication Required - foo"), "Prefix / web")+
			ingress("map", "map.example", nginxAnn("auth-type", "basic", "auth-secret", "default/map-auth", "auth-secret-type", "auth-map"), "Prefix / web")+
			ingress("missing", "missing.example", nginxAnn("auth-type", "basic", "auth-secret", "nope"), "Prefix / web")+
			ingress("digest", "digest.example", nginxAnn("auth-type", "digest", "auth-secret", "basic-auth"), "Prefix / web")+
			ingressServices("web")+secret)
		basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
		for _, c := range []struct {
			host, auth string
			status     int
		}{
			{"file.example", "", 401},
			{"file.example", basic("bob", "bpass"), 200},
			{"file.example", basic("bob", "wrong"), 401},
			{"file.example", basic("apr", "p@ss w0rd"), 200},
			{"file.example", basic("apr", "p@ss w0rD"), 401},
			{"file.example", basic("sha", "spass"), 200},
			{"file.example", basic("des", "password"), 401}, // crypt(3) DES of "password": refused
			{"file.example", basic("nobody", "bpass"), 401},
			{"file.example", basic("", "empty"), 401},                 // the empty user name of line 7
			{"file.example", basic("mallory{PLAIN}nocolon", ""), 401}, // line 6, no colon
			{"file.example", basic("burn", "bpass"), 401},             // cost 31: refused, never computed
			{"map.example", basic("alice", "bpass"), 200},
			{"map.example", basic("bob", "bpass"), 401},
			{"missing.example", basic("bob", "bpass"), 503},
			{"digest.example", basic("bob", "bpass"), 403}, // not emulated: denied
		} {
			var hdr []string
			if c.auth != "" {
				hdr = []string{"Authorization", c.auth}
			}
			a := s.do("GET", c.host, "/", nil, false, hdr...)
			if a.status != c.status {
				t.Errorf("%s %q: %d; want %d", c.host, c.auth, a.status, c.status)
			}
			if c.status == 401 && c.host == "file.example" && a.header.Get("WWW-Authenticate") != `Basic realm="Authentication Required - foo"` {
				t.Errorf("%s: WWW-Authenticate %q", c.host, a.header.Get("WWW-Authenticate"))
			}
			if strings.Contains(a.body, "bpass") || strings.Contains(a.body, "$2") {
				t.Errorf("%s: the answer shows a credential: %s", c.host, a.body)
			}
		}
		var lines, cost bool
		for _, f := range s.res.Findings {
			if strings.Contains(f.Message, string(bc)) || strings.Contains(f.Message, "UkZoB0") || strings.Contains(f.Message, "nocolon") || strings.Contains(f.Message, "mallory") {
				t.Errorf("a finding shows a hash or a line of the file: %s", f.Message)
			}
			lines = lines || strings.Contains(f.Message, "Secret default/basic-auth, key auth, line 6: not user:hash")
			cost = cost || strings.Contains(f.Message, `"burn" (cost 31) cost more than 12`)
		}
		if !lines || !cost {
			t.Errorf("no warning naming the malformed line (%v) or the bcrypt cost over the cap (%v): %v", lines, cost, s.res.Findings)
		}
		var emptyUser bool
		for _, f := range s.res.Findings {
			emptyUser = emptyUser || strings.Contains(f.Message, "key auth, line 7: the user name is empty")
		}
		if !emptyUser {
			t.Errorf("no warning naming the line with an empty user name")
		}
		said := false
		for _, tr := range s.srv.Traces() {
			if strings.Contains(tr.Reason, `user ""`) {
				t.Errorf("a trace names an empty user: %s", tr.Reason)
			}
			said = said || strings.HasSuffix(tr.Reason, ": the credentials have an empty user name")
		}
		if !said {
			t.Errorf("no trace says the credentials had an empty user name")
		}
		// The decision is typed in the trace (gwdev test's auth.basic and
		// auth.user read it): the basic auth that checked and the user it
		// let in; none on a location denied before it (503, 403).
		decided := map[string]int{}
		for _, tr := range s.srv.Traces() {
			name := "ingress/default/" + strings.TrimSuffix(tr.Host, ".example") + "/basic-auth"
			switch {
			case tr.Host == "missing.example" || tr.Host == "digest.example":
				if tr.BasicAuth != "" || tr.BasicAuthUser != "" {
					t.Errorf("%s: basic auth %q user %q on a denied location", tr.Host, tr.BasicAuth, tr.BasicAuthUser)
				}
			case tr.BasicAuth != name:
				t.Errorf("%s %d: basic auth %q, want %q", tr.Host, tr.Status, tr.BasicAuth, name)
			case (tr.Status == 200) != (tr.BasicAuthUser != ""):
				t.Errorf("%s %d: user %q let in", tr.Host, tr.Status, tr.BasicAuthUser)
			default:
				decided[tr.BasicAuthUser]++
			}
		}
		if decided["bob"] != 1 || decided["apr"] != 1 || decided["sha"] != 1 || decided["alice"] != 1 || decided[""] != 9 {
			t.Errorf("users let in by the traces: %v; want bob, apr, sha, alice once and 9 refusals", decided)
		}
	})
	t.Run("affinity", func(t *testing.T) {
		// "Session Affinity": affinity cookie sets INGRESSCOOKIE (or
		// session-cookie-name) with the Ingress path as Path unless
		// session-cookie-path, Max-Age from session-cookie-max-age; a
		// client sending it back stays on its endpoint.
		var mu sync.Mutex
		hits := map[string]int{}
		endpoint := func(name string) *httptest.Server {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hits[name]++
				mu.Unlock()
				_, _ = io.WriteString(w, name)
			}))
			t.Cleanup(srv.Close)
			return srv
		}
		e1, e2 := endpoint("e1"), endpoint("e2")
		u1, _ := url.Parse(e1.URL)
		u2, _ := url.Parse(e2.URL)
		slice := "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-1, labels: {kubernetes.io/service-name: web}}\n" +
			"addressType: IPv4\nports: [{name: http, port: " + u1.Port() + "}]\nendpoints: [{addresses: [127.0.0.1]}]\n" +
			"---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-2, labels: {kubernetes.io/service-name: web}}\n" +
			"addressType: IPv4\nports: [{name: http, port: " + u2.Port() + "}]\nendpoints: [{addresses: [127.0.0.1]}]\n"
		s := serveIngresses(t, ingressClassNginx+
			ingress("sticky", "sticky.example", nginxAnn("affinity", "cookie"), "Prefix /shop web")+
			ingress("named", "named.example", nginxAnn("affinity", "cookie", "affinity-mode", "persistent", "session-cookie-name", "route",
				"session-cookie-path", "/", "session-cookie-max-age", "3600"), "Prefix / web")+
			ingress("plain", "plain.example", nil, "Prefix / web")+
			ingressServices("web")+slice)
		a := s.do("GET", "sticky.example", "/shop/x", nil, false)
		c := a.header.Get("Set-Cookie")
		if a.status != 200 || !strings.HasPrefix(c, "INGRESSCOOKIE=") || !strings.Contains(c, "Path=/shop") || !strings.Contains(c, "HttpOnly") || strings.Contains(c, "Max-Age") {
			t.Fatalf("first request: %d Set-Cookie %q", a.status, c)
		}
		pinned := a.body
		cookie := strings.SplitN(c, ";", 2)[0]
		for i := range 6 {
			if a := s.do("GET", "sticky.example", "/shop/x", nil, false, "Cookie", cookie); a.body != pinned || a.header.Get("Set-Cookie") != "" {
				t.Errorf("request %d with the cookie: endpoint %s (Set-Cookie %q); want %s", i, a.body, a.header.Get("Set-Cookie"), pinned)
			}
		}
		a = s.do("GET", "named.example", "/", nil, false)
		if c := a.header.Get("Set-Cookie"); !strings.HasPrefix(c, "route=") || !strings.Contains(c, "Path=/;") && !strings.HasSuffix(c, "Path=/") || !strings.Contains(c, "Max-Age=3600") {
			t.Errorf("named cookie: %q", c)
		}
		seen := map[string]bool{}
		for range 4 {
			a := s.do("GET", "plain.example", "/", nil, false)
			seen[a.body] = true
			if a.header.Get("Set-Cookie") != "" {
				t.Errorf("without affinity: Set-Cookie %q", a.header.Get("Set-Cookie"))
			}
		}
		if len(seen) != 2 {
			t.Errorf("without affinity the endpoints should share requests: %v", seen)
		}
	})
	t.Run("limit-rps", func(t *testing.T) {
		// "Rate Limiting": limit-rps with burst limit-burst-multiplier
		// (default 5) times the rate, admitted at once (nodelay); 503
		// beyond (limit-req-status-code); limit-rpm likewise per minute;
		// limit-allowlist exempts ranges.
		s := serveIngresses(t, ingressClassNginx+
			ingress("rps", "rps.example", nginxAnn("limit-rps", "1"), "Prefix / web")+
			ingress("burst1", "burst1.example", nginxAnn("limit-rps", "1", "limit-burst-multiplier", "1"), "Prefix / web")+
			ingress("rpm", "rpm.example", nginxAnn("limit-rpm", "2"), "Prefix / web")+
			ingress("allowed", "allowed.example", nginxAnn("limit-rps", "1", "limit-burst-multiplier", "1", "limit-allowlist", "127.0.0.0/8"), "Prefix / web")+
			ingressServices("web"))
		for _, c := range []struct {
			host     string
			admitted int
			perSec   float64 // the rate the bucket leaks at
		}{{"rps.example", 6, 1}, {"burst1.example", 2, 1}, {"rpm.example", 11, 2.0 / 60}, {"allowed.example", 20, 0}} {
			n := 0
			start := time.Now()
			for range c.admitted + 2 {
				a := s.do("GET", c.host, "/", nil, false)
				if a.status == 200 {
					n++
				} else if a.status != 503 {
					t.Errorf("%s: status %d", c.host, a.status)
				}
			}
			want := c.admitted
			if c.host == "allowed.example" {
				want = c.admitted + 2 // exempt: every request
			}
			// A slow machine may take long enough for the bucket to leak:
			// one more request per request the rate let through meanwhile.
			leaked := int(time.Since(start).Seconds() * c.perSec)
			if n < want || n > want+leaked {
				t.Errorf("%s: %d requests admitted at once; want %d (+%d leaked)", c.host, n, want, leaked)
			}
		}
		time.Sleep(1100 * time.Millisecond) // the bucket leaks one request per second
		if a := s.do("GET", "burst1.example", "/", nil, false); a.status != 200 {
			t.Errorf("burst1 after a second: %d; want 200", a.status)
		}
	})
	t.Run("limit-connections", func(t *testing.T) {
		// limit-connections: concurrent requests per client address; the
		// one beyond gets 503 while the first is in progress.
		release := make(chan struct{})
		started := make(chan struct{}, 4)
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started <- struct{}{}
			<-release
			_, _ = io.WriteString(w, "slow")
		}))
		defer slow.Close()
		s := serveIngresses(t, ingressClassNginx+
			ingress("conn", "conn.example", nginxAnn("limit-connections", "1"), "Prefix / web")+ingressServices("web")+endpointSlice("web", slow.URL))
		done := make(chan int)
		go func() { done <- s.do("GET", "conn.example", "/first", nil, false).status }()
		<-started
		if a := s.do("GET", "conn.example", "/second", nil, false); a.status != 503 {
			t.Errorf("second concurrent request: %d; want 503", a.status)
		}
		close(release)
		if st := <-done; st != 200 {
			t.Errorf("first request: %d", st)
		}
		if a := s.do("GET", "conn.example", "/third", nil, false); a.status != 200 {
			t.Errorf("after the first ended: %d; want 200", a.status)
		}
	})
	t.Run("proxy-timeouts", func(t *testing.T) {
		// proxy-connect/send/read-timeout (seconds): gwdev bounds a backend
		// attempt by their sum (here 1+1+1); a backend silent for longer
		// gets 504, as nginx's read timeout gives.
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				select {
				case <-time.After(5 * time.Second):
				case <-r.Context().Done():
				}
			}
			_, _ = io.WriteString(w, "ok")
		}))
		defer slow.Close()
		s := serveIngresses(t, ingressClassNginx+
			ingress("timeouts", "t.example", nginxAnn("proxy-connect-timeout", "1", "proxy-send-timeout", "1", "proxy-read-timeout", "1"), "Prefix / web")+
			ingress("read", "read.example", nginxAnn("proxy-read-timeout", "3600"), "Prefix / web")+
			ingressServices("web")+endpointSlice("web", slow.URL))
		for _, g := range s.res.Table.Gateways {
			for _, p := range g.Ports {
				for _, vh := range p.Listeners[0].VirtualHosts {
					want := map[string]time.Duration{"t.example": 3 * time.Second, "read.example": 3665 * time.Second}[vh.Hostname]
					if want != 0 && (vh.Rules[0].Timeouts == nil || vh.Rules[0].Timeouts.BackendRequest != want) {
						t.Errorf("%s: timeouts %+v; want backendRequest %s", vh.Hostname, vh.Rules[0].Timeouts, want)
					}
				}
			}
		}
		if a := s.do("GET", "t.example", "/fast", nil, false); a.status != 200 {
			t.Errorf("fast: %d", a.status)
		}
		start := time.Now()
		// 504 (a backend answering after 5 s would give 200), not before
		// the 3 s the annotations add up to.
		if a := s.do("GET", "t.example", "/slow", nil, false); a.status != 504 || time.Since(start) < 2900*time.Millisecond {
			t.Errorf("slow: %d after %s; want 504 after about 3s", a.status, time.Since(start))
		}
	})
	t.Run("backend-protocol", func(t *testing.T) {
		// backend-protocol HTTPS: proxy_pass https:// (proxy-ssl-verify off
		// by default: a self-signed certificate is accepted); GRPCS:
		// grpc_pass grpcs://, HTTP/2 over TLS; HTTP: plain HTTP/1.1.
		proto := func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, r.Proto+" tls="+strconv.FormatBool(r.TLS != nil))
		}
		tlsSrv := httptest.NewTLSServer(http.HandlerFunc(proto))
		defer tlsSrv.Close()
		h2 := httptest.NewUnstartedServer(http.HandlerFunc(proto))
		h2.EnableHTTP2 = true
		h2.StartTLS()
		defer h2.Close()
		plain := httptest.NewServer(http.HandlerFunc(proto))
		defer plain.Close()
		s := serveIngresses(t, ingressClassNginx+
			ingress("https", "https.example", nginxAnn("backend-protocol", "HTTPS"), "Prefix / tlsweb")+
			ingress("grpcs", "grpcs.example", nginxAnn("backend-protocol", "GRPCS"), "Prefix / h2web")+
			ingress("http", "http.example", nginxAnn("backend-protocol", "HTTP"), "Prefix / web")+
			ingressServices("tlsweb", "h2web", "web")+endpointSlice("tlsweb", tlsSrv.URL)+endpointSlice("h2web", h2.URL)+endpointSlice("web", plain.URL))
		for host, want := range map[string]string{"https.example": "HTTP/1.1 tls=true", "grpcs.example": "HTTP/2.0 tls=true", "http.example": "HTTP/1.1 tls=false"} {
			if a := s.do("GET", host, "/", nil, false); a.status != 200 || a.body != want {
				t.Errorf("%s: %d %q; want 200 %q", host, a.status, a.body, want)
			}
		}
	})
	t.Run("default-backend", func(t *testing.T) {
		// "Default Backend": the annotation's Service handles the response
		// when the rule's Service has no active endpoints (here an
		// EndpointSlice without endpoints) or does not exist.
		empty := "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: empty-1, labels: {kubernetes.io/service-name: empty}}\n" +
			"addressType: IPv4\nports: [{name: http, port: 8080}]\nendpoints: []\n"
		s := serveIngresses(t, ingressClassNginx+
			ingress("down", "down.example", nginxAnn("default-backend", "fallback"), "Prefix / empty")+
			ingress("gone", "gone.example", nginxAnn("default-backend", "fallback"), "Prefix / missing")+
			ingress("up", "up.example", nginxAnn("default-backend", "fallback"), "Prefix / web")+
			ingress("plain", "plain.example", nil, "Prefix / empty")+
			ingressServices("empty", "fallback", "web")+empty)
		s.check([]ingressCase{
			{host: "down.example", path: "/a", status: 200, service: "fallback"},
			{host: "gone.example", path: "/a", status: 200, service: "fallback"},
			{host: "up.example", path: "/a", status: 200, service: "web"},
			{host: "plain.example", path: "/a", status: 200, service: "empty"}, // gwdev: echo for a Service without ready endpoints (nginx: 503)
		})
	})
	t.Run("custom-http-errors", func(t *testing.T) {
		// "Custom HTTP Errors" and the "Custom errors" guide: an answer of a
		// listed status goes to the default backend (the default-backend
		// annotation's Service), asked with X-Code, X-Format (the Accept
		// header), X-Original-URI, X-Namespace, X-Ingress-Name,
		// X-Service-Name, X-Service-Port and X-Request-ID; "NGINX does not
		// change the response from the custom default backend", so the
		// client gets its status and body. An unlisted status passes.
		// Without the annotation's Service, ingress-nginx's own default
		// backend answers: 404 (gwdev: "default backend - 404").
		var mu sync.Mutex
		var got []http.Header
		errSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, r.Header.Clone())
			mu.Unlock()
			code, _ := strconv.Atoi(r.Header.Get("X-Code"))
			w.WriteHeader(code)
			_, _ = io.WriteString(w, "custom error page "+r.Header.Get("X-Code")+" for "+r.Header.Get("X-Format")+" "+r.Method+" "+r.URL.Path)
		}))
		defer errSrv.Close()
		// A real backend (the forwarding lane's kind) and one whose
		// endpoint refuses connections (the gateway's own 502).
		app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, status, _ := strings.Cut(r.URL.Path, "/status/")
			code, _ := strconv.Atoi(status)
			w.WriteHeader(cmp.Or(code, 200))
			_, _ = io.WriteString(w, "app")
		}))
		defer app.Close()
		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close()
		s := serveIngresses(t, ingressClassNginx+
			ingress("shop", "shop.example", nginxAnn("custom-http-errors", "404, 503", "default-backend", "errpage"), "Prefix / web")+
			ingress("bare", "bare.example", nginxAnn("custom-http-errors", "503"), "Prefix / web")+
			ingress("real", "real.example", nginxAnn("custom-http-errors", "503,502", "default-backend", "errpage"), "Prefix /app app", "Prefix /gone gone")+
			ingressServices("web", "errpage", "app", "gone")+endpointSlice("errpage", errSrv.URL)+endpointSlice("app", app.URL)+endpointSlice("gone", gone.URL))
		a := s.do("GET", "shop.example", "/status/503", nil, false, "Accept", "application/json", "X-Request-ID", "req-1")
		if a.status != 503 || a.body != "custom error page 503 for application/json GET /status/503" {
			t.Errorf("listed 503: %d %q; want the error backend's 503", a.status, a.body)
		}
		mu.Lock()
		if len(got) != 1 {
			t.Fatalf("error backend asked %d times; want 1", len(got))
		}
		want := map[string]string{"X-Code": "503", "X-Format": "application/json", "X-Original-URI": "/status/503", "X-Namespace": "default",
			"X-Ingress-Name": "shop", "X-Service-Name": "web", "X-Service-Port": "80", "X-Request-Id": "req-1"}
		for k, v := range want {
			if got[0].Get(k) != v {
				t.Errorf("error backend's %s: %q, want %q", k, got[0].Get(k), v)
			}
		}
		mu.Unlock()
		if a := s.do("GET", "shop.example", "/status/404?x=1", nil, false); a.status != 404 || !strings.HasPrefix(a.body, "custom error page 404") {
			t.Errorf("listed 404: %d %q", a.status, a.body)
		}
		if a := s.do("GET", "shop.example", "/status/500", nil, false); a.status != 500 || strings.Contains(a.body, "custom error") {
			t.Errorf("unlisted 500: %d %q; want the backend's own answer", a.status, a.body)
		}
		if a := s.do("GET", "shop.example", "/ok", nil, false); a.status != 200 || !strings.Contains(a.body, `"web"`) {
			t.Errorf("200: %d %q", a.status, a.body)
		}
		mu.Lock()
		if len(got) != 2 || got[1].Get("X-Request-Id") == "" || got[1].Get("X-Original-URI") != "/status/404?x=1" {
			t.Errorf("error backend requests: %v; want a second one with a generated X-Request-ID", got)
		}
		mu.Unlock()
		if a := s.do("GET", "bare.example", "/status/503", nil, false); a.status != 404 || a.body != "default backend - 404" {
			t.Errorf("without default-backend: %d %q; want 404 from the built-in default backend", a.status, a.body)
		}
		if a := s.do("GET", "real.example", "/app/status/503", nil, false); a.status != 503 || a.body != "custom error page 503 for  GET /app/status/503" {
			t.Errorf("real backend's 503: %d %q; want the error backend's", a.status, a.body)
		}
		if a := s.do("GET", "real.example", "/app/status/500", nil, false); a.status != 500 || a.body != "app" {
			t.Errorf("real backend's 500: %d %q; want its own", a.status, a.body)
		}
		if a := s.do("GET", "real.example", "/gone/x", nil, false); a.status != 502 || a.body != "custom error page 502 for  GET /gone/x" {
			t.Errorf("refused connection: %d %q; want the error backend's 502", a.status, a.body)
		}
		var traced bool
		for _, tr := range s.srv.Traces() {
			for _, f := range tr.Filters {
				traced = traced || tr.Host == "shop.example" && strings.Contains(f, "the answer 503 is replaced by the answer of error backend default/errpage:80")
			}
		}
		if !traced {
			t.Errorf("no trace says the 503 was replaced by default/errpage:80: %v", s.srv.Traces())
		}
	})
	t.Run("service-upstream", func(t *testing.T) {
		// "Service Upstream": nginx proxies to the cluster IP and kube-proxy
		// spreads the connections over the Pods: every endpoint serves, as
		// without the annotation; no warning, since nothing differs.
		var mu sync.Mutex
		hits := map[string]int{}
		var urls []string
		for _, name := range []string{"p1", "p2"} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hits[name]++
				mu.Unlock()
			}))
			defer srv.Close()
			urls = append(urls, srv.URL)
		}
		u2, _ := url.Parse(urls[1])
		slice := endpointSlice("web", urls[0]) +
			"---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-2, labels: {kubernetes.io/service-name: web}}\n" +
			"addressType: IPv4\nports: [{name: http, port: " + u2.Port() + "}]\nendpoints: [{addresses: [127.0.0.1]}]\n"
		s := serveIngresses(t, ingressClassNginx+ingress("svc", "svc.example", nginxAnn("service-upstream", "true"), "Prefix / web")+ingressServices("web")+slice)
		for range 4 {
			if a := s.do("GET", "svc.example", "/", nil, false); a.status != 200 {
				t.Fatalf("status %d", a.status)
			}
		}
		if hits["p1"] == 0 || hits["p2"] == 0 {
			t.Errorf("endpoints served %v; want both", hits)
		}
		for _, f := range s.res.Findings {
			if strings.Contains(f.Message, "service-upstream") {
				t.Errorf("finding for an emulated annotation: %s", f.Message)
			}
		}
	})
	t.Run("mirror-target", func(t *testing.T) {
		// "Mirror": mirror-target https://test.env.com$request_uri sends a
		// copy of each request, body included (mirror-request-body on by
		// default), and the client gets the backend's answer only.
		got := make(chan string, 8)
		mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			got <- r.Method + " " + r.URL.RequestURI() + " " + string(b)
			w.WriteHeader(500) // ignored
		}))
		defer mirror.Close()
		s := serveIngresses(t, ingressClassNginx+
			ingress("mirrored", "m.example", nginxAnn("mirror-target", "http://mirror.default.svc.cluster.local$request_uri"), "Prefix / web")+
			ingress("bad", "bad.example", nginxAnn("mirror-target", "http://nowhere$request_uri"), "Prefix / web")+
			ingressServices("web", "mirror")+endpointSlice("mirror", mirror.URL))
		if a := s.do("POST", "m.example", "/orders?id=7", []byte("payload"), false); a.status != 200 || !strings.Contains(a.body, `"web"`) {
			t.Errorf("POST: %d %s", a.status, a.body)
		}
		select {
		case m := <-got:
			if m != "POST /orders?id=7 payload" {
				t.Errorf("mirror got %q", m)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("the mirror got nothing")
		}
		if a := s.do("GET", "bad.example", "/", nil, false); a.status != 200 {
			t.Errorf("a mirror-target naming no Service must not break the location: %d", a.status)
		}
	})
	t.Run("custom-headers", func(t *testing.T) {
		// "Custom Headers": the ConfigMap's entries are set on responses
		// (more_set_headers). A missing ConfigMap denies the location: 503
		// (ingress-nginx's e2e test "should return status code 503 when
		// custom-headers is configured with an invalid secret").
		s := serveIngresses(t, ingressClassNginx+
			ingress("custom", "custom.example", nginxAnn("custom-headers", "default/custom-headers"), "Prefix / web")+
			ingress("missing", "missing.example", nginxAnn("custom-headers", "default/nope"), "Prefix / web")+
			ingressServices("web")+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: custom-headers}\ndata:\n  X-Using-Nginx-Controller: \"true\"\n  x-powered-by: gwdev\n")
		a := s.do("GET", "custom.example", "/", nil, false)
		if a.status != 200 || a.header.Get("X-Using-Nginx-Controller") != "true" || a.header.Get("X-Powered-By") != "gwdev" {
			t.Errorf("custom headers: %d %v", a.status, a.header)
		}
		if a.headersSeenByBackend("X-Using-Nginx-Controller") {
			t.Errorf("the custom headers went to the backend too")
		}
		if a := s.do("GET", "missing.example", "/", nil, false); a.status != 503 || a.header.Get("X-Using-Nginx-Controller") != "" {
			t.Errorf("missing ConfigMap: %d %v", a.status, a.header)
		}
		found := false
		for _, f := range s.res.Findings {
			found = found || strings.Contains(f.Message, "ConfigMap default/nope not found")
		}
		if !found {
			t.Errorf("no finding for the missing ConfigMap")
		}
	})
	t.Run("cross-namespace", func(t *testing.T) {
		// ingress-nginx refuses annotations naming a Secret or ConfigMap of
		// another namespace unless its ConfigMap option
		// allow-cross-namespace-resources is "true" (false by default since
		// controller v1.12.0; "cross namespace usage of secrets is not
		// allowed") and denies the location with 503. A tenant's Ingress
		// naming the victim's users must neither accept the victim's
		// passwords nor let anyone in; one naming its own namespace works.
		inTenant := func(doc string) string {
			return strings.Replace(doc, "\n  name: ", "\n  namespace: tenant\n  name: ", 1)
		}
		users := func(ns, name, user, pass string) string {
			return "---\napiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: " + ns + "}\ndata:\n  auth: " +
				base64.StdEncoding.EncodeToString([]byte(user+":{PLAIN}"+pass+"\n")) + "\n"
		}
		s := serveIngresses(t, ingressClassNginx+
			inTenant(ingress("stolen-auth", "auth.example", nginxAnn("auth-type", "basic", "auth-secret", "victim/victim-users"), "Prefix / web"))+
			inTenant(ingress("own-auth", "own.example", nginxAnn("auth-type", "basic", "auth-secret", "tenant/tenant-users"), "Prefix / web"))+
			inTenant(ingress("stolen-headers", "headers.example", nginxAnn("custom-headers", "other/cm"), "Prefix / web"))+
			inTenant(ingress("stolen-ca", "tls.example", nginxAnn("proxy-ssl-secret", "other/client"), "Prefix / web"))+
			"---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: tenant}\nspec: {ports: [{port: 80, name: http}]}\n"+
			users("victim", "victim-users", "victimadmin", "vpass")+users("tenant", "tenant-users", "tenantuser", "tpass")+
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: other}\ndata: {X-Frame-Options: DENY}\n")
		basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
		for _, c := range []struct {
			host, auth string
			status     int
		}{
			{"auth.example", "", 503},
			{"auth.example", basic("victimadmin", "vpass"), 503},
			{"auth.example", basic("anyone", "x"), 503},
			{"own.example", "", 401},
			{"own.example", basic("tenantuser", "tpass"), 200},
			{"headers.example", "", 503},
			{"tls.example", "", 503},
		} {
			var hdr []string
			if c.auth != "" {
				hdr = []string{"Authorization", c.auth}
			}
			if a := s.do("GET", c.host, "/", nil, false, hdr...); a.status != c.status || a.header.Get("X-Frame-Options") != "" {
				t.Errorf("%s %q: %d %v; want %d", c.host, c.auth, a.status, a.header, c.status)
			}
		}
		for _, want := range []string{"auth-secret: Secret victim/victim-users", "custom-headers: ConfigMap other/cm", "proxy-ssl-secret: Secret other/client"} {
			found := false
			for _, f := range s.res.Findings {
				found = found || strings.Contains(f.Message, want+" is in another namespace than the Ingress (tenant)") &&
					strings.Contains(f.Message, "allow-cross-namespace-resources") && f.Source.Line > 0
			}
			if !found {
				t.Errorf("no finding %q naming the ConfigMap option allow-cross-namespace-resources at its line: %v", want, s.res.Findings)
			}
		}
		for _, f := range s.res.Findings {
			if strings.Contains(f.Message, "victimadmin") {
				t.Errorf("a finding reads the other namespace's Secret: %s", f.Message)
			}
		}
	})
}

// headersSeenByBackend reports whether the echo backend's answer lists the
// header among the request headers it saw.
func (a featureAnswer) headersSeenByBackend(name string) bool {
	return strings.Contains(strings.ToLower(a.body), `"`+strings.ToLower(name)+`"`)
}
