package web

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/emulator/admin"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/freeport"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
)

// sampleState loads and translates a sample as a Session's State.
func sampleState(t *testing.T, dir string, reload int) *app.State {
	t.Helper()
	proj, err := project.Open([]string{dir}, project.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	lr, res, err := proj.LoadAndTranslate(metav1.NewTime(time.Now().UTC()))
	if err != nil {
		t.Fatal(err)
	}
	return &app.State{Reload: reload, Update: &watch.Update{Result: lr}, Result: res, Time: time.Now()}
}

// serveView serves a View through the admin API, as up does, on a free
// loopback port, and returns its address.
func serveView(t *testing.T, v *View, allowRemote bool) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv := emulator.New(emulator.Config{})
	adm := admin.New(srv, nil)
	if err := adm.Register(v.Collectors()...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		adm.Close()
		_ = srv.Close(context.Background())
	})
	addr, _, err := admin.Serve(ctx, fmt.Sprintf("127.0.0.1:%d", freeport.TCP(t, "127.0.0.1")), adm,
		admin.Options{Web: v.Handler(), AllowRemote: allowRemote})
	if err != nil {
		t.Fatal(err)
	}
	return addr.String()
}

func get(t *testing.T, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestWebRefusesOtherHostsAndOrigins: the DNS-rebinding guard (a Host
// naming another site is refused, even with --admin-allow-remote) and the
// Origin check (a page of another origin is refused); the page itself and
// every asset carry the Content-Security-Policy.
func TestWebRefusesOtherHostsAndOrigins(t *testing.T) {
	for _, remote := range []bool{false, true} {
		v := New(context.Background(), Options{Dir: "x"})
		v.Publish(sampleState(t, "../../samples/basic", 0))
		addr := serveView(t, v, remote)
		base := "http://" + addr
		for _, c := range []struct {
			name   string
			path   string
			header map[string]string
			want   int
		}{
			{"page", "/ui/", nil, http.StatusOK},
			{"script", "/ui/assets/app.js", nil, http.StatusOK},
			{"state", "/ui/state", map[string]string{"Origin": base}, http.StatusOK},
			{"localhost", "/ui/state", map[string]string{"Host": "localhost:" + strings.Split(addr, ":")[1]}, http.StatusOK},
			{"rebinding", "/ui/", map[string]string{"Host": "evil.example"}, http.StatusMisdirectedRequest},
			{"rebinding with port", "/ui/state", map[string]string{"Host": "evil.example:" + strings.Split(addr, ":")[1]}, http.StatusMisdirectedRequest},
			{"cross origin", "/ui/state", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
			{"cross origin, same host other port", "/ui/state", map[string]string{"Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
			{"null origin", "/ui/state", map[string]string{"Origin": "null"}, http.StatusForbidden},
			{"cross site fetch", "/ui/state", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		} {
			resp, body := get(t, base+c.path, c.header)
			if resp.StatusCode != c.want {
				t.Errorf("remote=%v %s: %d, want %d: %s", remote, c.name, resp.StatusCode, c.want, body)
			}
			if c.want == http.StatusOK && resp.Header.Get("Content-Security-Policy") != ContentSecurityPolicy {
				t.Errorf("%s: Content-Security-Policy %q", c.name, resp.Header.Get("Content-Security-Policy"))
			}
		}
	}
}

// TestWebPageLoadsNothingFromOutside: the embedded page names only its own
// assets (no http(s):// URL, no inline script or style), as the CSP
// demands; Graphviz's viz-global.js names no address but XML namespaces
// and its licence header's, and evaluates no JavaScript (the CSP lets it
// compile WebAssembly, nothing more).
func TestWebPageLoadsNothingFromOutside(t *testing.T) {
	for _, f := range []string{"assets/index.html", "assets/app.js", "assets/style.css"} {
		b, err := assets.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), `"http://www.w3.org/2000/svg"`, "") // a namespace name, not a load
		for _, bad := range []string{"http://", "https://", "<script>", "<style", " style=", "onclick=", "innerHTML", "eval("} {
			if strings.Contains(s, bad) {
				t.Errorf("%s contains %q", f, bad)
			}
		}
	}
	viz, err := assets.ReadFile("assets/viz-global.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`https?://[A-Za-z0-9./_-]*`).FindAllString(string(viz), -1) {
		if !strings.HasPrefix(m, "http://www.w3.org/") && m != "https://www.graphviz.org" && m != "https://libexpat.github.io" {
			t.Errorf("viz-global.js names %q", m)
		}
	}
	for _, bad := range []string{"eval(", "new Function", "importScripts"} {
		if strings.Contains(string(viz), bad) {
			t.Errorf("viz-global.js contains %q", bad)
		}
	}
	if !strings.Contains(ContentSecurityPolicy, "script-src 'self' 'wasm-unsafe-eval';") || strings.Contains(ContentSecurityPolicy, "'unsafe-eval'") ||
		strings.Contains(ContentSecurityPolicy, "'unsafe-inline'") {
		t.Errorf("Content-Security-Policy %q: scripts from the page's origin and WebAssembly compiled, nothing else", ContentSecurityPolicy)
	}
}

// TestWebVizAssetIsThePinnedOne: the committed assets/viz-global.js is the
// file `make web` copies out of the @viz-js/viz that web/package-lock.json
// pins: web/assets.sum (which make web writes) names the lock's version and
// tarball integrity, and the file's SHA-512 is the one it recorded; the
// file's own banner names the same version, and package.json asks for it.
// A lock bumped without make web, or an asset edited or replaced, fails.
func TestWebVizAssetIsThePinnedOne(t *testing.T) {
	var lock struct {
		Packages map[string]struct{ Version, Integrity string } `json:"packages"`
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	for f, v := range map[string]any{"../../web/package-lock.json": &lock, "../../web/package.json": &pkg} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	pinned := lock.Packages["node_modules/@viz-js/viz"]
	if pinned.Version == "" || !strings.HasPrefix(pinned.Integrity, "sha512-") {
		t.Fatalf("web/package-lock.json pins no @viz-js/viz: %+v", pinned)
	}
	if pkg.Dependencies["@viz-js/viz"] != pinned.Version {
		t.Errorf("web/package.json asks for @viz-js/viz %q, the lock pins %s (pin an exact version, run make web)", pkg.Dependencies["@viz-js/viz"], pinned.Version)
	}
	sum, err := os.ReadFile("../../web/assets.sum")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(sum))
	if len(f) != 5 || f[0] != "@viz-js/viz" || f[3] != "dist/viz-global.js" {
		t.Fatalf("web/assets.sum: %q", sum)
	}
	if f[1] != pinned.Version || f[2] != pinned.Integrity {
		t.Errorf("web/assets.sum was written for @viz-js/viz %s (%s), the lock pins %s (%s): run make web", f[1], f[2], pinned.Version, pinned.Integrity)
	}
	viz, err := assets.ReadFile("assets/viz-global.js")
	if err != nil {
		t.Fatal(err)
	}
	h := sha512.Sum512(viz)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(h[:]); got != f[4] {
		t.Errorf("internal/web/assets/viz-global.js is %s, not the file make web copied (%s): run make web", got, f[4])
	}
	if !bytes.HasPrefix(viz, []byte("/*!\nViz.js "+pinned.Version+"\n")) {
		t.Errorf("viz-global.js's banner is not Viz.js %s: %.40q", pinned.Version, viz)
	}
}

// TestWebStateIsTheSessions: /ui/state is the State published: the
// engine's graph, its DOT as `gwdev graph --format dot` prints it (which
// the page lays out), check's findings, and each object's file:line.
func TestWebStateIsTheSessions(t *testing.T) {
	v := New(context.Background(), Options{Dir: "../../samples/conflicts"})
	st := sampleState(t, "../../samples/conflicts", 3)
	v.Publish(st)
	addr := serveView(t, v, false)
	_, body := get(t, "http://"+addr+"/ui/state", nil)
	var ps struct {
		Reload int `json:"reload"`
		Graph  struct {
			Nodes []struct{ ID, Kind, Problem string }
		}
		DOT     string            `json:"dot"`
		Sources map[string]string `json:"sources"`
		Objects struct {
			Items    []json.RawMessage
			Findings []struct{ Code string }
		}
	}
	if err := json.Unmarshal([]byte(body), &ps); err != nil {
		t.Fatalf("%v: %.300s", err, body)
	}
	want := st.Result.Graph()
	if ps.Reload != 3 || len(ps.Graph.Nodes) != len(want.Nodes) || len(ps.Graph.Nodes) == 0 {
		t.Fatalf("reload %d, %d nodes, want 3 and %d", ps.Reload, len(ps.Graph.Nodes), len(want.Nodes))
	}
	var dot strings.Builder
	if err := app.WriteGraph(&dot, want, "dot"); err != nil {
		t.Fatal(err)
	}
	if ps.DOT != dot.String() || !strings.HasPrefix(ps.DOT, "digraph") {
		t.Errorf("the page's DOT is not graph --format dot's:\n%.600s", ps.DOT)
	}
	for _, n := range want.Nodes {
		if !strings.Contains(ps.DOT, strconv.Quote(n.ID)) {
			t.Errorf("the DOT has no node %s", n.ID)
		}
	}
	if got := ps.Sources["Gateway/default/shared"]; !strings.HasSuffix(got, "gateway.yaml:7") {
		t.Errorf("Gateway's source %q", got)
	}
	codes := map[string]bool{}
	for _, f := range ps.Objects.Findings {
		codes[f.Code] = true
	}
	if !codes["HostnameConflict"] || !codes["ProtocolConflict"] || !codes["NoMatchingListenerHostname"] || len(ps.Objects.Items) == 0 {
		t.Errorf("findings %v, %d objects", codes, len(ps.Objects.Items))
	}
}

// TestWebTraceDecision: a trace posted back answers with the decision as
// explain writes it and the dashboard's copy-as-curl.
func TestWebTraceDecision(t *testing.T) {
	v := New(context.Background(), Options{Dir: "../../samples/basic"})
	st := sampleState(t, "../../samples/basic", 0)
	v.Publish(st)
	addr := serveView(t, v, false)
	ex, err := app.Explain(st.Result, emulator.Probe{Port: 8080, Request: mustRequest(t, "http://app.example.com/api/x")}, "http://app.example.com/api/x", "", "")
	if err != nil {
		t.Fatal(err)
	}
	tr := *ex.Trace
	tr.Address = "127.0.0.1:8080" // as the data plane records it
	b, _ := json.Marshal(tr)
	resp, err := http.Post("http://"+addr+"/ui/trace", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Decision, Command, NoCopy string }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	var want bytes.Buffer
	app.WriteServedTrace(&want, st.Result, &tr)
	if !strings.Contains(out.Decision, "route:") || !strings.Contains(out.Decision, "httproute/default/app") || out.Decision != want.String() {
		t.Errorf("decision:\n%s", out.Decision)
	}
	if !strings.HasPrefix(out.Command, "curl ") || !strings.Contains(out.Command, "app.example.com") || !strings.Contains(out.Command, "/api/x") {
		t.Errorf("command %q (%s)", out.Command, out.NoCopy)
	}
}

func mustRequest(t *testing.T, url string) *http.Request {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// openEvents opens /ui/events with a raw connection that reads only the
// answer's head, then nothing: a page that does not keep up.
func openEvents(t *testing.T, addr string) (net.Conn, int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /ui/events HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, resp.StatusCode
}

// TestWebPagesBounded: pages that read nothing cost one pending notice
// each however many States are published, the heap does not grow with the
// reloads (each graph rendered anew), and past MaxPages a page is refused and counted.
func TestWebPagesBounded(t *testing.T) {
	v := New(context.Background(), Options{Dir: "x"})
	states := []*app.State{sampleState(t, "../../samples/conflicts", 0), sampleState(t, "../../samples/basic", 0)}
	v.Publish(states[0])
	addr := serveView(t, v, false)
	for i := 0; i < MaxPages; i++ {
		if _, code := openEvents(t, addr); code != http.StatusOK {
			t.Fatalf("page %d: %d", i, code)
		}
	}
	if _, code := openEvents(t, addr); code != http.StatusServiceUnavailable {
		t.Errorf("page %d: %d, want 503", MaxPages+1, code)
	}
	open, _, refused := v.Pages()
	if open != MaxPages || refused != 1 {
		t.Errorf("%d open, %d refused", open, refused)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	publish := func(n int) {
		for i := 0; i < n; i++ {
			s := *states[i%2] // another graph each time: rendered again
			s.Reload = i
			v.Publish(&s)
			b, err := v.stateBody() // as a page reading each one would
			if err != nil || !bytes.Contains(b, []byte(`"dot":"digraph`)) {
				t.Fatalf("%v: %.200s", err, b)
			}
		}
	}
	publish(10)
	before := heap()
	publish(100)
	after := heap()
	if p := v.pages.pending(); p > MaxPages {
		t.Errorf("%d notices pending for %d pages", p, MaxPages)
	}
	t.Logf("heap %d -> %d bytes over 100 reloads with %d pages open", before, after, MaxPages)
	if after > before+1<<20 {
		t.Errorf("heap grew from %d to %d bytes over 100 reloads with %d pages open", before, after, MaxPages)
	}
}

// stallWriter is a page's connection that accepts nothing: every write
// waits for the write deadline and fails with it, as a connection whose
// buffers are full does.
type stallWriter struct {
	header   http.Header
	deadline time.Time
}

func (w *stallWriter) Header() http.Header { return w.header }
func (w *stallWriter) WriteHeader(int)     {}
func (w *stallWriter) Write([]byte) (int, error) {
	time.Sleep(time.Until(w.deadline))
	return 0, os.ErrDeadlineExceeded
}
func (w *stallWriter) Flush()            {}
func (w *stallWriter) FlushError() error { return nil }
func (w *stallWriter) SetWriteDeadline(t time.Time) error {
	w.deadline = t
	return nil
}

// TestWebSlowPageDropped: a page that accepts nothing is disconnected at
// the write deadline and counted, in Pages and in /metrics
// (gwdev_web_pages_dropped_total).
func TestWebSlowPageDropped(t *testing.T) {
	v := New(context.Background(), Options{Dir: "x"})
	v.writeTimeout = 200 * time.Millisecond
	v.Publish(sampleState(t, "../../samples/basic", 0))
	addr := serveView(t, v, false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.serveEvents(&stallWriter{header: http.Header{}}, httptest.NewRequest("GET", "/ui/events", nil))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the page that accepts nothing was not dropped")
	}
	if open, dropped, _ := v.Pages(); open != 0 || dropped != 1 {
		t.Errorf("%d pages open, %d dropped", open, dropped)
	}
	_, body := get(t, "http://"+addr+"/metrics", nil)
	if !strings.Contains(body, "gwdev_web_pages_dropped_total 1") || !strings.Contains(body, "gwdev_web_pages 0") {
		t.Errorf("metrics:\n%s", body)
	}
}
