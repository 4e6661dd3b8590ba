package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/emulator/h1"
	"github.com/gwdev/gwdev/engine/table"
)

// secrets maps the credentials the redaction test sends to where they go.
var redactionSecrets = []string{"APIKEY1", "AUTHTOK2", "SIG3", "AMZSIG4", "AUTH5", "CODE6", "JWT7",
	"SESSION8", "BEARER9", "PASS10", "CSRF11", "REDIR12"}

// redactionRequest carries every kind of credential the lists name.
func redactionRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", url+"?sig=SIG3&X-Amz-Signature=AMZSIG4&auth=AUTH5&code=CODE6&jwt=JWT7&session=SESSION8&page=2", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "app.example.com"
	req.Header.Set("X-Api-Key", "APIKEY1")
	req.Header.Set("X-Auth-Token", "AUTHTOK2")
	req.Header.Set("Authorization", "Bearer BEARER9")
	req.Header.Set("X-Xsrf-Token", "CSRF11")
	req.Header.Set("Referer", "http://user:PASS10@app.example.com/")
	return req
}

func assertNoSecrets(t *testing.T, where, out string) {
	t.Helper()
	for _, s := range redactionSecrets {
		if strings.Contains(out, s) {
			t.Errorf("%s leaks %s:\n%s", where, s, out)
		}
	}
}

// Every output of a request goes through redactTrace: the kept trace, the
// access log, a subscriber, Explain's trace.
func TestRedactionEveryOutput(t *testing.T) {
	var log syncBuffer
	p := freePort(t, "127.0.0.1")
	s := New(Config{AccessLog: &log})
	redirect := redirectRule("redirect", "/go", table.Redirect{Hostname: "other.example.com", StatusCode: 302})
	tab := newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "",
		vhost("*", redirect, rule("r", prefix("/"), echo("svc", 1)))))))
	if err := s.Apply(tab).Err(); err != nil {
		t.Fatal(err)
	}
	sub := s.SubscribeTraces(10)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/login", "/go"} {
		req := redactionRequest(t, fmt.Sprintf("http://127.0.0.1:%d%s", p, path))
		req.URL.RawQuery += "&token=REDIR12"
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if path == "/go" && !strings.Contains(resp.Header.Get("Location"), "token=REDIR12") {
			t.Errorf("the client's redirect lost its query: %q", resp.Header.Get("Location"))
		}
	}
	tr := waitTrace(t, s, func(tr Trace) bool { return strings.HasPrefix(tr.Path, "/go") })
	if tr.Location == "" || !strings.Contains(tr.Location, "token="+Redacted) || !strings.Contains(tr.Path, "page=2") {
		t.Errorf("trace location %q path %q", tr.Location, tr.Path)
	}
	b, _ := json.Marshal(s.Traces())
	assertNoSecrets(t, "traces", string(b))
	sub.Cancel()
	var subbed []Trace
	sub.Each(func(tr *Trace) { subbed = append(subbed, *tr) })
	b, _ = json.Marshal(subbed)
	assertNoSecrets(t, "subscription", string(b))
	if len(subbed) != 2 {
		t.Errorf("subscriber got %d traces", len(subbed))
	}
	ex := Explain(tab, "127.0.0.1", p, redactionRequest(t, "http://app.example.com/go"))
	b, _ = json.Marshal(ex)
	assertNoSecrets(t, "explain", string(b))
	if !strings.Contains(ex.Path, "sig="+Redacted) || ex.RequestHeaders.Get("X-Api-Key") != Redacted {
		t.Errorf("explain %q %v", ex.Path, ex.RequestHeaders)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertNoSecrets(t, "access log", log.String())
	if !strings.Contains(log.String(), "page=2") {
		t.Errorf("access log lost the rest of the query: %s", log.String())
	}
}

func TestRedactURIAndClip(t *testing.T) {
	for in, want := range map[string]string{
		"/a?sig=x&b=1":                       "/a?sig=[redacted]&b=1",
		"/a?SessionId=x#frag":                "/a?SessionId=[redacted]#frag",
		"https://u:pw@h.example/p?code=1":    "https://u:[redacted]@h.example/p?code=[redacted]",
		"https://u@h.example/p":              "https://u@h.example/p",
		"/plain":                             "/plain",
		"/a?page=2&monkey=banana&session=ok": "/a?page=2&monkey=[redacted]&session=[redacted]",
	} {
		if got := RedactURI(in); got != want {
			t.Errorf("RedactURI(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("é", TraceValueLimit) // 2 bytes a rune
	c := clip(long)
	if len(c) > TraceValueLimit+40 || !IsTruncated(c) || !strings.HasSuffix(c, fmt.Sprintf("%d bytes]", 2*TraceValueLimit-TraceValueLimit)) {
		t.Errorf("clip: %d bytes, ends %q", len(c), c[len(c)-30:])
	}
	if clip(c) != c {
		t.Error("clip is not idempotent")
	}
	h := http.Header{"Big": {strings.Repeat("a", 1<<20)}, "X-Session-Id": {"s"}}
	for i := range 100 {
		h.Set(fmt.Sprintf("X-Many-%03d", i), strings.Repeat("b", 1000))
	}
	tr := Trace{RequestHeaders: h, Path: "/" + strings.Repeat("p", 1<<20)}
	redactTrace(&tr)
	size := 0
	for k, vs := range tr.RequestHeaders {
		for _, v := range vs {
			size += len(k) + len(v)
		}
	}
	if size > TraceHeaderLimit || !IsTruncated(tr.RequestHeaders.Get("Big")) || tr.RequestHeaders.Get("X-Session-Id") != Redacted ||
		!IsTruncated(tr.Path) || !strings.Contains(tr.Truncated, "1 request header values cut") ||
		!strings.Contains(tr.Truncated, "request header values past 16384 bytes left out") {
		t.Errorf("size %d, truncated %q, path %d bytes", size, tr.Truncated, len(tr.Path))
	}
	if len(h.Get("Big")) != 1<<20 {
		t.Error("redactTrace changed the request's own headers")
	}
}

// The trace history forgets its oldest traces past its byte budget.
func TestTraceRingByteBudget(t *testing.T) {
	r := newTraceRing(100, 50_000)
	for i := range 100 {
		r.record(Trace{Path: fmt.Sprintf("/%d", i), RequestHeaders: http.Header{"X": {strings.Repeat("v", 1<<20)}}})
	}
	n, bytes := r.usage()
	ts := r.snapshot()
	if bytes > 50_000 || n != len(ts) || n < 10 || n == 100 || ts[len(ts)-1].Path != "/99" {
		t.Errorf("%d traces, %d bytes, last %q", n, bytes, ts[len(ts)-1].Path)
	}
	_ = table.Table{}
}

// The cache of header verdicts answers as the lists do, and stops growing
// at its bound however many new names clients send.
func TestSensitiveHeaderCache(t *testing.T) {
	names := []string{"Authorization", "authorization", "X-Session-Id", "Accept", "User-Agent", "X-My-Secret", "Content-Type", "X-Trace"}
	for i := range 2 * maxSensitiveCache {
		names = append(names, fmt.Sprintf("X-Name-%d", i), fmt.Sprintf("X-Token-%d", i))
	}
	for round := range 2 { // the second round answers from the cache
		for _, n := range names {
			if got, want := sensitiveHeader(n), isSensitiveHeader(n); got != want {
				t.Fatalf("round %d: sensitiveHeader(%q) = %v, want %v", round, n, got, want)
			}
		}
	}
	kept := 0
	sensitiveCache.Range(func(any, any) bool { kept++; return true })
	if kept > maxSensitiveCache {
		t.Errorf("cache holds %d names, bound %d", kept, maxSensitiveCache)
	}
	if !sensitiveHeader("X-Token-1") || sensitiveHeader("X-Name-1") || !sensitiveHeader("authorization") {
		t.Error("wrong verdicts")
	}
}

// TestRedactionByNamePattern: a header whose name contains key, secret,
// token, password, jwt, assertion, oidc, session, signature, credential or
// auth is redacted, in traces as everywhere; the common headers that are no
// credential are kept, by a deliberate, listed decision (NotSensitiveHeaders).
func TestRedactionByNamePattern(t *testing.T) {
	secret := []string{"Ocp-Apim-Subscription-Key", "X-Functions-Key", "X-Goog-Iap-Jwt-Assertion", "X-Amzn-Oidc-Data",
		"X-Amzn-Oidc-Accesstoken", "X-Private-Key", "X-Client-Secret", "X-Session-Id", "Signature", "X-Credentials",
		"X-Auth-Request-Email", "X-Password", "X-Saml-Assertion", "x-api-key", "X-Oidc-Claims"}
	kept := []string{"Authority", ":authority", "Www-Authenticate", "Proxy-Authenticate", "Keep-Alive", "Cache-Control",
		"Accept", "Accept-Encoding", "Accept-Language", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto",
		"Content-Type", "User-Agent", "Host", "Sec-Websocket-Key", "Sec-Websocket-Accept", "Idempotency-Key",
		"X-Idempotency-Key", "X-Request-Id", "Traceparent"}
	for _, n := range secret {
		if !isSensitiveHeader(n) {
			t.Errorf("%s is not redacted", n)
		}
	}
	for _, n := range kept {
		if isSensitiveHeader(n) {
			t.Errorf("%s is redacted, but it is no credential", n)
		}
	}
	h := servePooled(t, "127.0.0.1:1")
	req := h.request("GET", "x", "/")
	for i, n := range secret {
		req.Header.Set(n, fmt.Sprintf("CRED%02d", i))
	}
	tr := Explain(h.tab, h.ip, h.port, req)
	b, _ := json.Marshal(tr)
	for i := range secret {
		if strings.Contains(string(b), fmt.Sprintf("CRED%02d", i)) {
			t.Errorf("explain shows %s's value", secret[i])
		}
	}
}

// TestRedactionMemoSameTrace: a trace redacted through its connection's
// memo (the same header as the memo's, or another one) is the trace
// redacting it afresh makes, credentials, cut values and notes included,
// and the memo never hands out a copy of another header.
func TestRedactionMemoSameTrace(t *testing.T) {
	long := strings.Repeat("v", TraceValueLimit+10)
	reqs := []http.Header{
		{"Authorization": {"Bearer BEARER9"}, "Accept": {"*/*"}, "User-Agent": {"bench"}},
		{"Authorization": {"Bearer OTHER"}, "Accept": {"*/*"}, "User-Agent": {"bench"}},
		{"Accept": {"*/*"}, "User-Agent": {"bench"}, "Referer": {"https://x.example/?token=SIG3"}},
		{"Accept": {"*/*", "text/html"}, "User-Agent": {"bench"}},
		{"Accept": {"*/*"}, "User-Agent": {long}},
		{},
	}
	resps := [][]h1.Field{
		{{Name: "Content-Type", Value: "text/plain"}, {Name: "Set-Cookie", Value: "session=SESSION8"}},
		{{Name: "Content-Type", Value: "text/plain"}, {Name: "Set-Cookie", Value: "session=OTHER"}},
		{{Name: "Content-Type", Value: "text/plain"}, {Name: "Location", Value: "https://x.example/?code=CODE6"}},
		{{Name: "X-Long", Value: long}},
		{},
	}
	fresh := func(h http.Header, fs []h1.Field) Trace {
		tr := Trace{Path: "/p", RequestHeaders: h, responseFields: fs}
		redactTrace(&tr)
		return tr
	}
	var m headerMemo
	for round := range 3 {
		for i, h := range reqs {
			for j, fs := range resps {
				want := fresh(h, fs)
				got := Trace{Path: "/p", RequestHeaders: h, responseFields: slices.Clone(fs), memo: &m}
				redactTrace(&got)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d, request %d, answer %d: through the memo\n%+v\nafresh\n%+v", round, i, j, got, want)
				}
			}
		}
	}
	if e := m.req.Load(); e == nil || m.resp.Load() == nil {
		t.Fatal("the memo kept nothing")
	}
	// A hit hands out the memo's maps.
	h := http.Header{"Accept": {"*/*"}}
	a := Trace{RequestHeaders: h, memo: &m}
	redactTrace(&a)
	b := Trace{RequestHeaders: h.Clone(), memo: &m}
	redactTrace(&b)
	if reflect.ValueOf(a.RequestHeaders).UnsafePointer() != reflect.ValueOf(b.RequestHeaders).UnsafePointer() {
		t.Fatal("the same header was redacted twice instead of taken from the memo")
	}
}
