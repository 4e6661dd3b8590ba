package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
)

// What a cluster can make gwdev do: these tests pull from (and check
// against) an API server that answers as the test makes it, since a hostile
// server is what is under test. The real kube-apiserver tests
// (cluster_test.go) show that pull and check --cluster work; these show
// what they refuse.

// The kubeconfig's credentials: none may appear in anything gwdev prints
// or writes.
const (
	kubeUser     = "tok3n-user"
	kubePassword = "PASSWORD-s3cret"
	kubeToken    = "TOKEN-s3cret-abc"
)

// hostileAPI is an API server serving the Gateway API's v1 group with
// gateways and httproutes, the Namespace default, and for a list what the
// test's list function writes (nil: an empty list).
type hostileAPI struct {
	srv *httptest.Server
	// kubeconfig has the server's URL with user information and a token.
	kubeconfig string
	mu         sync.Mutex
	auth       []string // the Authorization headers received
	queries    []string // the queries of the lists received
}

// listFunc answers a list of resource ("httproutes") in namespace default.
type listFunc func(w http.ResponseWriter, r *http.Request, resource string)

func startHostileAPI(t *testing.T, list listFunc) *hostileAPI {
	t.Helper()
	a := &hostileAPI{}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		const v1 = "/apis/gateway.networking.k8s.io/v1"
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case p == v1:
			fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"gateway.networking.k8s.io/v1","resources":[
				{"name":"gateways","singularName":"gateway","namespaced":true,"kind":"Gateway","verbs":["get","list"]},
				{"name":"httproutes","singularName":"httproute","namespaced":true,"kind":"HTTPRoute","verbs":["get","list"]}]}`)
		case p == "/api/v1/namespaces/default":
			fmt.Fprint(w, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`)
		case strings.HasPrefix(p, v1+"/namespaces/default/"):
			resource := strings.TrimPrefix(p, v1+"/namespaces/default/")
			a.mu.Lock()
			a.queries = append(a.queries, resource+"?"+r.URL.RawQuery)
			a.mu.Unlock()
			if list == nil {
				writeList(w, resource, nil, "")
				return
			}
			list(w, r, resource)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"the server could not find the requested resource"}`)
		}
	}))
	t.Cleanup(a.srv.Close)
	a.kubeconfig = writeKubeconfig(t, strings.Replace(a.srv.URL, "https://", "https://"+kubeUser+":"+kubePassword+"@", 1), kubeToken)
	return a
}

// writeKubeconfig writes a kubeconfig for server, with a bearer token
// unless token is "" (client-go sends a kubeconfig's token over TLS only:
// the hostile API serves https).
func writeKubeconfig(t *testing.T, server, token string) string {
	t.Helper()
	user := "{}"
	if token != "" {
		user = fmt.Sprintf("{token: %q}", token)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	writeTestFile(t, path, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: hostile, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: someone, user: %s}]
contexts: [{name: hostile, context: {cluster: hostile, user: someone, namespace: default}}]
current-context: hostile
`, server, user))
	return path
}

// listKinds are the list kinds of the resources the hostile API serves.
var listKinds = map[string]string{"gateways": "GatewayList", "httproutes": "HTTPRouteList"}

// writeList writes a list of items (JSON objects) with a continue token.
func writeList(w io.Writer, resource string, items []string, cont string) {
	fmt.Fprintf(w, `{"kind":%q,"apiVersion":"gateway.networking.k8s.io/v1","metadata":{"continue":%q},"items":[%s]}`,
		listKinds[resource], cont, strings.Join(items, ","))
}

// routeJSON is an HTTPRoute in namespace default with spec.
func routeJSON(name, spec string) string {
	return fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":%q,"namespace":"default"},"spec":%s}`, name, spec)
}

// paddedRouteJSON is an HTTPRoute with an annotation of pad bytes.
func paddedRouteJSON(name string, pad int) string {
	return fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":%q,"namespace":"default","annotations":{"pad":%q}},"spec":{}}`,
		name, strings.Repeat("p", pad))
}

// listOf answers the httproutes list with items and every other with none.
func listOf(items ...string) listFunc {
	return func(w http.ResponseWriter, r *http.Request, resource string) {
		if resource != "httproutes" {
			writeList(w, resource, nil, "")
			return
		}
		writeList(w, resource, items, "")
	}
}

// runGwdevWithin is runGwdev, failing the test when the command has not
// ended within d (a command that hangs is what some of these tests
// catch).
func runGwdevWithin(t *testing.T, d time.Duration, args ...string) (string, string, int) {
	t.Helper()
	type result struct {
		out, err string
		code     int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := runGwdev(t, "", args...)
		done <- result{out, errOut, code}
	}()
	select {
	case r := <-done:
		return r.out, r.err, r.code
	case <-time.After(d):
		t.Fatalf("gwdev %s: still running after %s", strings.Join(args, " "), d)
		return "", "", 0
	}
}

// filesUnder returns every file under dir with its content.
func filesUnder(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			files[p] = string(data)
		}
		return nil
	})
	return files
}

// TestPullWritesOnlyInsideItsFolder: an object the server returns that is
// not of the kind pull asked for (a kind "../../../../x", another
// apiVersion), or whose namespace or name is not a valid name, or outside
// the namespace asked for, is refused with an error naming it, and nothing
// is written anywhere; a symlink in DIR leading out of it is not followed.
func TestPullWritesOnlyInsideItsFolder(t *testing.T) {
	gw := `{"apiVersion":"gateway.networking.k8s.io/v1","kind":%q,"metadata":{"name":%q,"namespace":%q},"spec":{}}`
	for _, tc := range []struct {
		name, item, want string
	}{
		{"kind with dot-dots", fmt.Sprintf(gw, "../../../../x", "g", "default"), `kind "../../../../x"`},
		{"another apiVersion", strings.Replace(fmt.Sprintf(gw, "HTTPRoute", "g", "default"), "gateway.networking.k8s.io/v1", "apps/v1", 1), `apiVersion "apps/v1"`},
		{"another kind", fmt.Sprintf(gw, "Gateway", "g", "default"), `kind "Gateway"`}, // in the httproutes list
		{"namespace with dot-dots", fmt.Sprintf(gw, "HTTPRoute", "g", "../x"), `namespace "../x"`},
		{"another namespace", fmt.Sprintf(gw, "HTTPRoute", "g", "other"), `outside namespace default`},
		{"name with a slash", fmt.Sprintf(gw, "HTTPRoute", "../../g", "default"), `name "../../g"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := startHostileAPI(t, listOf(tc.item))
			top := t.TempDir()
			dir := filepath.Join(top, "a", "b", "c", "d", "pulled")
			stdout, stderr, code := runGwdevWithin(t, time.Minute, "pull", "--kubeconfig", api.kubeconfig, "--ca-dir", t.TempDir(), dir)
			if code == 0 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "refused") {
				t.Errorf("pull: exit %d, want an error naming %s as refused:\n%s%s", code, tc.want, stdout, stderr)
			}
			if files := filesUnder(t, top); len(files) > 0 {
				t.Errorf("pull wrote files: %v", keys(files))
			}
			_, stderr, code = runGwdevWithin(t, time.Minute, "check", "--cluster", "--kubeconfig", api.kubeconfig)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("check --cluster: exit %d, want 2 and an error naming %s:\n%s", code, tc.want, stderr)
			}
		})
	}

	t.Run("symlink out of DIR", func(t *testing.T) {
		api := startHostileAPI(t, listOf(routeJSON("shop", "{}")))
		dir, outside := t.TempDir(), t.TempDir()
		if err := os.Symlink(outside, filepath.Join(dir, "default")); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runGwdevWithin(t, time.Minute, "pull", "--kubeconfig", api.kubeconfig, "--ca-dir", t.TempDir(), dir)
		if code == 0 {
			t.Errorf("pull through a symlink out of DIR: exit 0:\n%s%s", stdout, stderr)
		}
		if files := filesUnder(t, outside); len(files) > 0 {
			t.Errorf("pull wrote outside DIR through a symlink: %v", keys(files))
		}
	})
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// assertNoCredential fails when any of the kubeconfig's credentials is in
// text.
func assertNoCredential(t *testing.T, what, text string) {
	t.Helper()
	for _, secret := range []string{kubeUser, kubePassword, kubeToken} {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the kubeconfig's %q:\n%s", what, secret, text)
		}
	}
}

// TestClusterCommandsNeverShowKubeconfigCredentials: the user information
// of the kubeconfig's server URL and its token appear neither in pull's
// output, nor in the pulled files, nor in check --cluster's, nor in an
// error, even one whose message the server made of the credentials it was
// sent; the credentials are still sent (bearer token; basic auth from the
// URL without a token).
func TestClusterCommandsNeverShowKubeconfigCredentials(t *testing.T) {
	api := startHostileAPI(t, listOf(routeJSON("shop", `{"hostnames":["shop.example.com"]}`)))
	dir := t.TempDir()
	stdout, stderr, code := runGwdevWithin(t, time.Minute, "pull", "--kubeconfig", api.kubeconfig, "--ca-dir", t.TempDir(), dir)
	if code != 0 {
		t.Fatalf("pull: exit %d\n%s%s", code, stdout, stderr)
	}
	assertNoCredential(t, "pull's output", stdout+stderr)
	files := filesUnder(t, dir)
	if !strings.Contains(files[filepath.Join(dir, "default", "httproutes.yaml")], "name: shop") {
		t.Errorf("pull wrote no route: %v\n%s", keys(files), stdout)
	}
	for name, data := range files {
		assertNoCredential(t, name, data)
	}
	if !strings.Contains(stdout, api.srv.URL) {
		t.Errorf("pull's output does not name the server %s:\n%s", api.srv.URL, stdout)
	}
	stdout, stderr, _ = runGwdevWithin(t, time.Minute, "check", "--cluster", "--kubeconfig", api.kubeconfig)
	assertNoCredential(t, "check --cluster's output", stdout+stderr)
	api.mu.Lock()
	if len(api.auth) == 0 || api.auth[0] != "Bearer "+kubeToken {
		t.Errorf("the server got Authorization %q, want the kubeconfig's token", api.auth)
	}
	api.mu.Unlock()

	// Without a token, the URL's user information is sent as basic auth,
	// as net/http would have sent it.
	basic := startHostileAPI(t, nil)
	kc := writeKubeconfig(t, strings.Replace(basic.srv.URL, "https://", "https://"+kubeUser+":"+kubePassword+"@", 1), "")
	stdout, stderr, code = runGwdevWithin(t, time.Minute, "check", "--cluster", "--kubeconfig", kc)
	assertNoCredential(t, "check --cluster's output (basic auth)", stdout+stderr)
	basic.mu.Lock()
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth(kubeUser, kubePassword)
	if len(basic.auth) == 0 || basic.auth[0] != req.Header.Get("Authorization") {
		t.Errorf("the server got Authorization %q, want basic auth of the URL's user information (exit %d)", basic.auth, code)
	}
	basic.mu.Unlock()

	// A server that puts what it was sent into its error and its warnings.
	echo := startHostileAPI(t, func(w http.ResponseWriter, r *http.Request, resource string) {
		said := fmt.Sprintf("you sent %s to https://%s:%s@%s", r.Header.Get("Authorization"), kubeUser, kubePassword, r.Host)
		w.Header().Add("Warning", fmt.Sprintf(`299 - %q`, said))
		if resource == "gateways" {
			writeList(w, resource, nil, "")
			return
		}
		w.WriteHeader(http.StatusForbidden)
		body, _ := json.Marshal(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403, "message": said})
		w.Write(body)
	})
	for _, args := range [][]string{{"pull", "--ca-dir", t.TempDir(), t.TempDir()}, {"check", "--cluster"}} {
		stdout, stderr, code = runGwdevWithin(t, time.Minute, append(args, "--kubeconfig", echo.kubeconfig)...)
		if code == 0 || !strings.Contains(stderr, "you sent") || !strings.Contains(stderr, "<redacted>") {
			t.Errorf("%s against a server echoing credentials: exit %d, want an error with them redacted:\n%s%s", args[0], code, stdout, stderr)
		}
		assertNoCredential(t, args[0]+"'s error", stdout+stderr)
	}
}

// TestClusterListsArePagedAndBounded: a server with 300,000 routes is read
// 500 at a time and the read ends at --max-objects with an error naming the
// kind and the limit; a server that ignores the page size and streams
// 300,000 routes in one answer is cut off at --max-read-mib, with an error
// naming the kind and the limit, having sent little more than the limit.
func TestClusterListsArePagedAndBounded(t *testing.T) {
	const total = 300_000
	var served atomic.Int64
	paged := startHostileAPI(t, func(w http.ResponseWriter, r *http.Request, resource string) {
		if resource != "httproutes" {
			writeList(w, resource, nil, "")
			return
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		from, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		if limit <= 0 || from+limit > total {
			limit = total - from // no limit: everything at once
		}
		items := make([]string, 0, limit)
		for i := from; i < from+limit; i++ {
			items = append(items, routeJSON("r"+strconv.Itoa(i), "{}"))
		}
		served.Add(int64(limit))
		next := ""
		if from+limit < total {
			next = strconv.Itoa(from + limit)
		}
		writeList(w, resource, items, next)
	})
	start := time.Now()
	stdout, stderr, code := runGwdevWithin(t, 2*time.Minute, "pull", "--kubeconfig", paged.kubeconfig, "--ca-dir", t.TempDir(), t.TempDir())
	want := "listing httproutes.gateway.networking.k8s.io/v1 in namespace default: the cluster's answers hold more than the limit of 20000 objects (--max-objects raises it)"
	if code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("pull from 300,000 routes: exit %d, want\n  %s\n%s%s", code, want, stdout, stderr)
	}
	t.Logf("pull from 300,000 routes: %s, %d routes served", time.Since(start).Round(time.Millisecond), served.Load())
	if n := served.Load(); n > watch.DefaultMaxObjects+watch.PageSize {
		t.Errorf("the server served %d routes, want at most %d", n, watch.DefaultMaxObjects+watch.PageSize)
	}
	paged.mu.Lock()
	if len(paged.queries) < 2 || !strings.Contains(paged.queries[1], "limit=500") {
		t.Errorf("the lists asked %q, want limit=500", paged.queries)
	}
	paged.mu.Unlock()
	_, stderr, code = runGwdevWithin(t, 2*time.Minute, "check", "--cluster", "--kubeconfig", paged.kubeconfig, "--max-objects", "1000")
	if code != 2 || !strings.Contains(stderr, "more than the limit of 1000 objects") {
		t.Errorf("check --cluster --max-objects 1000 from 300,000 routes: exit %d, want 2 and the limit:\n%s", code, stderr)
	}

	// Each route about 1 KB: 300 MB in all, streamed as it is made.
	var sent atomic.Int64
	stream := startHostileAPI(t, func(w http.ResponseWriter, r *http.Request, resource string) {
		if resource != "httproutes" {
			writeList(w, resource, nil, "")
			return
		}
		n, _ := fmt.Fprintf(w, `{"kind":"HTTPRouteList","apiVersion":"gateway.networking.k8s.io/v1","metadata":{},"items":[`)
		sent.Add(int64(n))
		for i := range total {
			sep := ","
			if i == 0 {
				sep = ""
			}
			n, err := fmt.Fprintf(w, "%s%s", sep, paddedRouteJSON("r"+strconv.Itoa(i), 900))
			sent.Add(int64(n))
			if err != nil {
				return // the client went away
			}
		}
		fmt.Fprint(w, "]}")
	})
	for _, tc := range []struct {
		args []string
		mib  int
	}{
		{[]string{"pull", "--ca-dir", t.TempDir(), t.TempDir()}, watch.DefaultMaxBytes >> 20},
		{[]string{"check", "--cluster", "--max-read-mib", "8"}, 8},
	} {
		sent.Store(0)
		start := time.Now()
		stdout, stderr, code := runGwdevWithin(t, 2*time.Minute, append(tc.args, "--kubeconfig", stream.kubeconfig)...)
		want := fmt.Sprintf("listing httproutes.gateway.networking.k8s.io/v1 in namespace default: the cluster's answers are over the limit of %d MiB", tc.mib)
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s from a server streaming 300,000 routes: exit %d, want\n  %s\n%s%s", tc.args[0], code, want, stdout, stderr)
		}
		t.Logf("%s from a server streaming 300,000 routes: %s, %d MiB sent", tc.args[0], time.Since(start).Round(time.Millisecond), sent.Load()>>20)
		if limit := int64(tc.mib+8) << 20; sent.Load() > limit {
			t.Errorf("the server sent %d bytes, want at most %d (the limit and what the connection buffers)", sent.Load(), limit)
		}
	}
}

// TestClusterRequestsTimeOut: a server that never answers a list (or
// discovery) ends pull and check --cluster after --request-timeout with an
// error naming the server and what was asked.
func TestClusterRequestsTimeOut(t *testing.T) {
	release := make(chan struct{})
	hang := func(w http.ResponseWriter, r *http.Request, resource string) {
		if resource == "gateways" {
			writeList(w, resource, nil, "")
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	api := startHostileAPI(t, hang)
	t.Cleanup(func() { close(release); api.srv.CloseClientConnections() })
	for _, args := range [][]string{{"pull", "--ca-dir", t.TempDir(), t.TempDir()}, {"check", "--cluster"}} {
		start := time.Now()
		stdout, stderr, code := runGwdevWithin(t, time.Minute, append(args, "--kubeconfig", api.kubeconfig, "--request-timeout", "1s")...)
		took := time.Since(start)
		for _, want := range []string{"reading cluster hostile (" + api.srv.URL + ")", "listing httproutes.gateway.networking.k8s.io/v1 in namespace default", "no answer within the request timeout of 1s (--request-timeout)"} {
			if code == 0 || !strings.Contains(stderr, want) {
				t.Errorf("%s from a server that never answers: exit %d, want %q:\n%s%s", args[0], code, want, stdout, stderr)
			}
		}
		assertNoCredential(t, args[0]+"'s error", stderr)
		if took > 10*time.Second {
			t.Errorf("%s took %s with --request-timeout 1s", args[0], took)
		}
	}
}

// TestClusterErrorsWithoutMessageSayWhatFailed: a 404 Status without a
// message is an error with the status code, the list and the server, not
// "listing gateways: ".
func TestClusterErrorsWithoutMessageSayWhatFailed(t *testing.T) {
	api := startHostileAPI(t, func(w http.ResponseWriter, r *http.Request, resource string) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","code":404}`)
	})
	for _, args := range [][]string{{"pull", "--ca-dir", t.TempDir(), t.TempDir()}, {"check", "--cluster"}} {
		stdout, stderr, code := runGwdevWithin(t, time.Minute, append(args, "--kubeconfig", api.kubeconfig)...)
		want := "reading cluster hostile (" + api.srv.URL + "): listing gateways.gateway.networking.k8s.io/v1 in namespace default: the server answered 404 Not Found with no message"
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, want\n  %s\n%s%s", args[0], code, want, stdout, stderr)
		}
	}
}

// TestPullWritesOnlyWhatTheLoaderTakes: a namespace's routes over the
// loader's 10 MiB file limit are split into files the loader takes, all of
// them loaded; an object the loader refuses (one over the limit alone, one
// nested deeper than it reads) is an error, and nothing is written.
func TestPullWritesOnlyWhatTheLoaderTakes(t *testing.T) {
	const routes = 1_200 // about 9 KB each: 11 MB in all
	many := startHostileAPI(t, func(w http.ResponseWriter, r *http.Request, resource string) {
		from, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		if resource != "httproutes" {
			writeList(w, resource, nil, "")
			return
		}
		var items []string
		for i := from; i < min(from+watch.PageSize, routes); i++ {
			items = append(items, paddedRouteJSON(fmt.Sprintf("r%05d", i), 9000))
		}
		next := ""
		if from+watch.PageSize < routes {
			next = strconv.Itoa(from + watch.PageSize)
		}
		writeList(w, resource, items, next)
	})
	dir := t.TempDir()
	stdout, stderr, code := runGwdevWithin(t, 2*time.Minute, "pull", "--kubeconfig", many.kubeconfig, "--ca-dir", t.TempDir(), dir)
	if code != 0 {
		t.Fatalf("pull of %d routes: exit %d\n%s%s", routes, code, stdout, stderr)
	}
	for name, data := range filesUnder(t, dir) {
		if len(data) > watch.MaxFileSize {
			t.Errorf("%s: %d bytes, over the loader's %d", name, len(data), watch.MaxFileSize)
		}
	}
	proj, err := project.Open([]string{dir}, project.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	lr, err := proj.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Problems) > 0 || len(lr.Snapshot.HTTPRoutes) != routes {
		t.Errorf("loading what pull wrote: %d routes, want %d; problems: %v\n%s", len(lr.Snapshot.HTTPRoutes), routes, lr.Problems[:min(3, len(lr.Problems))], stdout)
	}

	deep := strings.Repeat(`{"x":`, 1100) + "1" + strings.Repeat("}", 1100)
	for _, tc := range []struct {
		name, item, want string
	}{
		{"over the file limit alone", paddedRouteJSON("big", 11<<20), "default/httproutes.yaml: file too large"},
		{"nested too deep", routeJSON("deep", `{"x":`+deep+`}`), "default/httproutes.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := startHostileAPI(t, listOf(tc.item))
			dir := t.TempDir()
			stdout, stderr, code := runGwdevWithin(t, time.Minute, "pull", "--kubeconfig", api.kubeconfig, "--ca-dir", t.TempDir(), dir)
			if code == 0 || !strings.Contains(stderr, "nothing written: gwdev's loader would refuse what the cluster returned") || !strings.Contains(stderr, tc.want) {
				t.Errorf("pull: exit %d, want an error naming %s:\n%s%s", code, tc.want, stdout, truncate(stderr, 2000))
			}
			if files := filesUnder(t, dir); len(files) > 0 {
				t.Errorf("pull wrote %v", keys(files))
			}
		})
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
