package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/project"
)

// samplesDir is the bundled samples' folder (absolute: TestWebScreenshots
// changes directory).
var samplesDir, _ = filepath.Abs("../../samples")

// chromiumPath finds Debian's chromium (installed by .ci/run) or Chrome.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newBrowser starts headless Chromium with a fresh profile and returns a
// tab's context, cancelled at the end of the test.
func newBrowser(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	bin := chromiumPath()
	if bin == "" {
		t.Skip("Chromium is not installed (apt-get install -y chromium): the web view is not tested in a browser")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelT()
		cancelC()
		cancelA()
	})
	return ctx
}

// copySample copies a sample's manifests to a new folder with every
// listener port moved to a free one (other tests and a running gwdev may
// hold the sample's), and returns the folder and the ports by old number.
func copySample(t *testing.T, name string) (string, map[int]int) {
	t.Helper()
	return copySampleTo(t, name, t.TempDir())
}

// copySampleTo is copySample into dir.
func copySampleTo(t *testing.T, name, dir string) (string, map[int]int) {
	t.Helper()
	ports := map[int]int{}
	listenerPort := regexp.MustCompile(`(?m)^(    port: )(\d+)$`) // a listener's port (a Service's is indented otherwise)
	files, _ := filepath.Glob(filepath.Join(samplesDir, name, "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.Contains(s, "kind: Gateway\n") {
			s = listenerPort.ReplaceAllStringFunc(s, func(m string) string {
				sub := listenerPort.FindStringSubmatch(m)
				old, _ := strconv.Atoi(sub[2])
				if ports[old] == 0 {
					ports[old] = freePort(t)
				}
				return sub[1] + strconv.Itoa(ports[old])
			})
		}
		writeFile(t, filepath.Join(dir, filepath.Base(f)), s)
	}
	return dir, ports
}

// webViewURL waits for up to print the web view's address.
func webViewURL(t *testing.T, out *syncBuffer) string {
	t.Helper()
	re := regexp.MustCompile(`gwdev: admin API on http://127\.0\.0\.1:\d+/, web view on (http://127\.0\.0\.1:\d+/ui/) \(`)
	var url string
	waitForUp(t, out, "the web view's URL", func() bool {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
		return url != ""
	})
	return url
}

// TestWebViewInBrowser drives the web view of `gwdev up --no-tui` on
// samples/conflicts in headless Chromium: every Gateway, listener and
// route node is drawn; a conflicted listener clicked shows its condition;
// a request sent appears in Traces and opens its decision and curl line;
// a route added to the folder appears without a page load; a file that
// does not load is said in the banner.
func TestWebViewInBrowser(t *testing.T) {
	ctx := newBrowser(t, 90*time.Second)
	dir, ports := copySample(t, "conflicts")
	out := runUp(t, &upOptions{noTUI: true, admin: fmt.Sprintf("127.0.0.1:%d", freePort(t)), debounce: 20 * time.Millisecond}, dir)
	url := webViewURL(t, out)

	// What the page must draw: the engine's own graph of the folder.
	proj, err := project.Open([]string{dir}, project.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := proj.LoadAndTranslate(metav1.NewTime(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range res.Graph().Nodes {
		if n.Kind == "Gateway" || n.Kind == "Listener" || strings.HasSuffix(n.Kind, "Route") {
			want = append(want, n.Kind+" "+n.ID)
		}
	}
	sort.Strings(want)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(`#graph g.node[data-id]`),
	); err != nil {
		t.Fatalf("loading %s: %v\n%s", url, err, out.String())
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.gwdevMarker = 1`)); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#graph g.node[data-id]")].filter(g => ["Gateway","Listener"].includes(g.dataset.kind) || g.dataset.kind.endsWith("Route")).map(g => g.dataset.kind + " " + g.dataset.id).sort()`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) < 7 {
		t.Errorf("nodes on the page:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	text := func(sel string) string { t.Helper(); return pageText(t, ctx, sel) }

	// A conflict, clicked.
	if err := chromedp.Do(ctx,
		chromedp.Click(`#graph g.node[data-id="gateway/default/shared/listener/shop"]`),
		chromedp.WaitVisible(`#detail [data-role=conditions] .cond`),
	); err != nil {
		t.Fatal(err)
	}
	if cond := text(`#detail [data-role=conditions]`); !strings.Contains(cond, "Conflicted=True (HostnameConflict)") || !strings.Contains(cond, "shop-passthrough") {
		t.Errorf("the conflicted listener's conditions: %q", cond)
	}
	if source := text(`#detail [data-role=source]`); !strings.Contains(source, "gateway.yaml:7") {
		t.Errorf("the listener's source: %q", source)
	}

	// A request, traced.
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/from-the-browser-test", ports[80]), nil)
	req.Host = "blog.example.com"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := chromedp.Do(ctx,
		chromedp.Click(`#tabs button[data-view=traces]`),
		chromedp.SendKeys(`#trace-filter`, "from-the-browser"),
		chromedp.WaitVisible(`#traces tbody tr[data-role=trace]`),
		chromedp.Click(`#traces tbody tr[data-role=trace]`),
		chromedp.WaitVisible(`#trace-detail [data-role=decision]`),
	); err != nil {
		t.Fatalf("the request's trace: %v", err)
	}
	if decision := text(`#trace-detail [data-role=decision]`); !strings.Contains(decision, "httproute/default/blog") || !strings.Contains(decision, "GET /from-the-browser-test") {
		t.Errorf("decision:\n%s", decision)
	}
	if command := text(`#trace-detail [data-role=command]`); !strings.HasPrefix(command, "curl ") || !strings.Contains(command, "blog.example.com") {
		t.Errorf("command: %q", command)
	}

	// A save: the new route is drawn on the open page, no page load.
	routes, _ := os.ReadFile(filepath.Join(dir, "routes.yaml"))
	added := string(routes) + "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: added\nspec:\n  parentRefs:\n  - name: shared\n    sectionName: other\n  rules:\n  - backendRefs:\n    - name: blog\n      port: 80\n"
	writeFile(t, filepath.Join(dir, "routes.yaml"), added)
	if err := chromedp.Do(ctx,
		chromedp.Click(`#tabs button[data-view=topology]`),
		chromedp.WaitVisible(`#graph g.node[data-id="httproute/default/added"]`),
	); err != nil {
		t.Fatalf("the added route: %v", err)
	}
	if marker, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.gwdevMarker || 0`)); err != nil || marker != 1 {
		t.Errorf("the page was loaded again (marker %d, %v)", marker, err)
	}

	// A file that does not load: the banner says so and what is served.
	writeFile(t, filepath.Join(dir, "broken.yaml"), "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: broken}\nspec: {parentRefs: 7}\n")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(`#banner`)); err != nil {
		t.Fatalf("the banner: %v", err)
	}
	banner := text(`#banner`)
	if !strings.Contains(banner, "The folder does not load cleanly") || !strings.Contains(banner, fmt.Sprintf("Serving on 127.0.0.1:%d", ports[80])) {
		t.Errorf("banner: %q", banner)
	}
}

// TestWebViewMigration: on a copy of samples/ingress-nginx the Migration
// view shows migrate --compare's comparison: the differences with the
// Ingress path each request came from, and what was not carried over.
func TestWebViewMigration(t *testing.T) {
	ctx := newBrowser(t, 120*time.Second)
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.CopyFS(dir, os.DirFS("../../samples/ingress-nginx")); err != nil {
		t.Fatal(err)
	}
	out := runUp(t, &upOptions{noTUI: true, admin: fmt.Sprintf("127.0.0.1:%d", freePort(t))}, dir)
	url := webViewURL(t, out)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url+"#migration"),
		chromedp.WaitVisible(`#migration table[data-role=differences] tbody tr`),
	); err != nil {
		t.Fatalf("the Migration view: %v\n%s", err, out.String())
	}
	text, err := chromedp.Run(ctx, chromedp.Text(`#migration`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"requests generated from the Ingress rules", "differ.", "GET http://admin.shop.example.com/", "ingresses.yaml:124", "Not carried over"} {
		if !strings.Contains(text, want) {
			t.Errorf("the Migration view lacks %q:\n%s", want, text)
		}
	}
}

// TestWebViewPolicies: on samples/backend-tls each BackendTLSPolicy is a
// node of its own with a dashed edge to the Service port it targets; a
// click on it shows its conditions, its file:line and what it does on
// each target, and the targeted Service's panel names the policy.
func TestWebViewPolicies(t *testing.T) {
	ctx := newBrowser(t, 90*time.Second)
	dir, _ := copySample(t, "backend-tls")
	out := runUp(t, &upOptions{noTUI: true, admin: fmt.Sprintf("127.0.0.1:%d", freePort(t))}, dir)
	url := webViewURL(t, out)
	proj, err := project.Open([]string{dir}, project.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	lr, _, err := proj.LoadAndTranslate(metav1.NewTime(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	policy := engine.ObjectKey{Kind: "BackendTLSPolicy", Namespace: "default", Name: "secure-app"}
	source := lr.Snapshot.SourceOf(policy).String()

	sel := `#graph g.node[data-policy][data-id="backendtlspolicy/default/secure-app"]`
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(sel), chromedp.Click(sel),
		chromedp.WaitVisible(`#detail [data-role=effect]`)); err != nil {
		t.Fatalf("the policy node: %v\n%s", err, out.String())
	}
	dashed, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`[...document.querySelectorAll("#graph g.edge")].some(e =>
		e.querySelector("title").textContent === "backendtlspolicy/default/secure-app->service/default/secure-app:443" &&
		e.querySelector("path").getAttribute("stroke-dasharray") !== null)`))
	if err != nil || !dashed {
		t.Errorf("no dashed edge from the policy to its Service port (%v)", err)
	}
	text := func(sel string) string { t.Helper(); return pageText(t, ctx, sel) }
	detail := text(`#detail`)
	for _, want := range []string{"BackendTLSPolicy default/secure-app", "from BackendTLSPolicy/default/secure-app at " + source,
		"ancestor web", "Accepted=True (Accepted)", "targets", "Service/default/secure-app: Accepted: TLS to the backends, SNI app.internal"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the policy's panel lacks %q:\n%s", want, detail)
		}
	}
	if !strings.Contains(source, "gateway.yaml:") {
		t.Errorf("the policy's source: %q", source)
	}

	svc := `#graph g.node[data-id="service/default/secure-app:443"]`
	if err := chromedp.Do(ctx, chromedp.Click(svc), chromedp.WaitVisible(`#detail [data-role=effect]`)); err != nil {
		t.Fatal(err)
	}
	if detail := text(`#detail`); !strings.Contains(detail, "policies") || !strings.Contains(detail, "BackendTLSPolicy/default/secure-app: Accepted") {
		t.Errorf("the targeted Service's panel:\n%s", detail)
	}
}

// pageText is the text of the element sel selects on the page.
func pageText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return s
}
