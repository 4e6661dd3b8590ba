package emulator

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// poisonAnswer is a whole HTTP answer a misbehaving backend sends when no
// request asked for it: a client that gets it got another client's answer.
const poisonAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 32\r\n\r\n<script>alert(\"poison\")</script>"

// okAnswer is the answer to /ok.
const okAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// misbehavingBackend is a raw HTTP/1.1 backend whose paths misbehave the
// way careless backends do; /ok answers correctly. "later" writes come
// 5 ms after the answer, once the proxy has taken the answer as complete.
func misbehavingBackend(t *testing.T) string {
	return rawBackend(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			write := func(s string) { _, _ = io.WriteString(c, s) }
			later := func(s string) { time.Sleep(5 * time.Millisecond); write(s) }
			switch req.URL.Path {
			case "/ok":
				write(okAnswer)
			case "/head-body": // HEAD answered with a body: a common bug
				write(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(poisonAnswer)))
				if req.Method == http.MethodHead {
					later(poisonAnswer)
				} else {
					write(poisonAnswer)
				}
			case "/head-body-same-write":
				write(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(poisonAnswer), poisonAnswer))
			case "/extra": // bytes after Content-Length
				write(okAnswer)
				later(`<script>alert("poison")</script>`)
			case "/extra-same-write":
				write(okAnswer + `<script>alert("poison")</script>`)
			case "/pipelined": // a second, unasked answer
				write(okAnswer)
				later(poisonAnswer)
			case "/chunked-then-more":
				write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
				later(poisonAnswer)
			case "/1xx-storm":
				for range 50 {
					write("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n")
				}
				write(okAnswer)
			case "/early-close":
				write("HTTP/1.1 200 OK\r\nContent-Le")
				return
			case "/cut-short":
				write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
				return
			case "/close-then-more": // says it closes, then does not
				write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
				later(poisonAnswer)
			default:
				write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
			}
		}
	})
}

// outcome is what one client got, comparable across proxies: the status
// and body, "502" for any gateway error (the bodies differ), "incomplete
// answer" when the answer broke off; and whether it was a whole answer.
func outcome(t *testing.T, proxyURL, method, path, host, id string) (string, bool) {
	t.Helper()
	req, err := http.NewRequest(method, proxyURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("X-Test-Id", id)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		// The proxy gave up mid-answer: before its header (net/http's
		// ReverseProxy buffers it) or after (gwdev sends it at once).
		return "incomplete answer", false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusBadGateway {
		return "502", false
	}
	if err != nil {
		return "incomplete answer", false
	}
	return fmt.Sprintf("%d %q", resp.StatusCode, body), true
}

// TestH1PoolDifferentialMisbehavingBackends is the response-crossing bug:
// a backend that writes after its answer ended (a body to HEAD, bytes after
// Content-Length, a second answer, more after "Connection: close") must
// never answer the next client. Each misbehaving request is followed by
// three victims (/ok, each its own client); gwdev's pool and net/http's
// Transport behind httputil.ReverseProxy, each in front of its own copy of
// the backend, must give every client the same outcome. The victim after
// stray bytes finds them noted in its trace as the backend's fault.
func TestH1PoolDifferentialMisbehavingBackends(t *testing.T) {
	gw := servePooled(t, misbehavingBackend(t))
	refBackend, _ := url.Parse("http://" + misbehavingBackend(t))
	ref := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(refBackend)
			pr.Out.Host = pr.In.Host
		},
		Transport: &http.Transport{},
		ErrorLog:  log.New(io.Discard, "", 0),
	})
	t.Cleanup(ref.Close)
	gwURL := gw.url("")
	steps := []struct {
		method, path string
		stray        bool // the backend writes after the answer: the next victim's trace notes it
	}{
		{"HEAD", "/head-body", true},
		{"HEAD", "/head-body-same-write", false},
		{"GET", "/extra", true},
		{"GET", "/extra-same-write", false},
		{"GET", "/pipelined", true},
		{"GET", "/chunked-then-more", true},
		{"GET", "/1xx-storm", false},
		{"GET", "/early-close", false},
		{"GET", "/cut-short", false},
		{"GET", "/close-then-more", false},
		{"POST", "/pipelined", true},
	}
	n := 0
	for _, s := range steps {
		seq := []string{s.path, "/ok", "/ok", "/ok"}
		for i, p := range seq {
			method := s.method
			if i > 0 {
				method = http.MethodGet
			}
			n++
			id := "diff-" + strconv.Itoa(n)
			got, _ := outcome(t, gwURL, method, p, "x", id)
			want, _ := outcome(t, ref.URL, method, p, "x", id+"-ref")
			if got != want {
				t.Errorf("after %s %s, client %d (%s %s): gwdev gave %s, net/http gave %s", s.method, s.path, i, method, p, got, want)
			}
			if i == 1 && s.stray {
				tr := waitTrace(t, gw.s, func(tr Trace) bool { return tr.RequestHeaders.Get("X-Test-Id") == id })
				if !strings.Contains(tr.BackendFault, "no request asked for") {
					t.Errorf("after %s %s, the victim's trace notes no backend fault: %q", s.method, s.path, tr.BackendFault)
				}
			}
			time.Sleep(30 * time.Millisecond) // the stray bytes arrive before the next client
		}
	}
}

// TestExternalAuthPoolStrayAllowDenied: ExternalAuth to a plain-HTTP auth
// server goes through the same pool. An auth server that sends a second,
// unasked 200 after allowing one client must not allow the next client,
// who has no credentials: it gets the auth server's own 401, and its trace
// says the auth server misbehaved.
func TestExternalAuthPoolStrayAllowDenied(t *testing.T) {
	allow := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
	authAddr := rawBackend(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			if req.Header.Get("Authorization") != "Bearer good" {
				_, _ = io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 12\r\n\r\nwho are you?")
				continue
			}
			_, _ = io.WriteString(c, allow)
			time.Sleep(5 * time.Millisecond)
			_, _ = io.WriteString(c, allow) // unasked
		}
	})
	h := extAuthHarness(t, authAddr)
	if res, tr := h.traced(h.request("GET", "app.example.com", "/admin", "Authorization: Bearer good")); res.status != 200 {
		t.Fatalf("allowed client: %d %s (%q)", res.status, res.body, tr.Reason)
	}
	time.Sleep(30 * time.Millisecond)
	res, tr := h.traced(h.request("GET", "app.example.com", "/admin"))
	if res.status != http.StatusUnauthorized || string(res.body) != "who are you?" {
		t.Fatalf("client without credentials: %d %q, want the auth server's 401 (trace %q)", res.status, res.body, tr.Reason)
	}
	if !strings.Contains(tr.BackendFault, "no request asked for") {
		t.Errorf("trace backend fault %q, want the auth server's stray answer noted", tr.BackendFault)
	}
}
