package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// screenshotsEnv names the folder TestWebScreenshots writes to (make
// screenshots sets it to docs/images).
const screenshotsEnv = "GWDEV_SCREENSHOTS"

// TestWebScreenshots writes a PNG of each view of the web view on
// samples/basic and samples/conflicts (web-<sample>-<view>.png), with a
// few requests in Traces and one opened, and the Migration view of
// samples/ingress-nginx, into $GWDEV_SCREENSHOTS (make
// screenshots). It is a picture maker, not a check: without the variable
// it skips.
func TestWebScreenshots(t *testing.T) {
	outDir := os.Getenv(screenshotsEnv)
	if outDir == "" {
		t.Skip(screenshotsEnv + " is not set: make screenshots writes the web view's pictures to docs/images")
	}
	outDir, _ = filepath.Abs(outDir)
	for _, sample := range []struct {
		name string
		host string // a host its listener on port 8080 or 80 serves
		port int
		open string // a node to open in Topology
	}{
		{"basic", "app.example.com", 8080, "httproute/default/app"},
		{"conflicts", "blog.example.com", 80, "gateway/default/shared/listener/shop"},
	} {
		t.Run(sample.name, func(t *testing.T) {
			ctx := newBrowser(t, 90*time.Second)
			root := t.TempDir()
			t.Chdir(root) // the page names the folder as given: samples/NAME
			dir := filepath.Join("samples", sample.name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			_, ports := copySampleTo(t, sample.name, dir)
			out := runUp(t, &upOptions{noTUI: true, admin: fmt.Sprintf("127.0.0.1:%d", freePort(t))}, dir)
			url := webViewURL(t, out)
			for _, path := range []string{"/api/users/1", "/", "/api/users/2", "/nothing/here"} {
				req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", ports[sample.port], path), nil)
				req.Host = sample.host
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", ports[sample.port]), nil)
			req.Host = "unknown.example.com"
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			shot := func(view string, steps ...chromedp.Action[chromedp.Void]) {
				t.Helper()
				steps = append([]chromedp.Action[chromedp.Void]{chromedp.Click(`#tabs button[data-view=` + view + `]`)}, steps...)
				steps = append(steps, chromedp.Sleep(300*time.Millisecond))
				if err := chromedp.Do(ctx, steps...); err != nil {
					t.Fatalf("%s: %v", view, err)
				}
				png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatal(err)
				}
				name := filepath.Join(outDir, "web-"+sample.name+"-"+view+".png")
				if err := os.WriteFile(name, png, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d bytes)", name, len(png))
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`#graph g.node[data-id]`)); err != nil {
				t.Fatal(err)
			}
			shot("topology", chromedp.Click(`#graph g.node[data-id="`+sample.open+`"]`), chromedp.WaitVisible(`#detail`))
			shot("traces", chromedp.WaitVisible(`#traces tbody tr[data-role=trace]`), chromedp.Click(`#traces tbody tr[data-role=trace]`),
				chromedp.WaitVisible(`#trace-detail [data-role=decision]`))
			shot("objects")
			shot("findings")
		})
	}
	t.Run("ingress-nginx", func(t *testing.T) {
		ctx := newBrowser(t, 120*time.Second)
		t.Chdir(t.TempDir())
		dir := filepath.Join("samples", "ingress-nginx")
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(samplesDir, "ingress-nginx"))); err != nil {
			t.Fatal(err)
		}
		out := runUp(t, &upOptions{noTUI: true, admin: fmt.Sprintf("127.0.0.1:%d", freePort(t))}, dir)
		url := webViewURL(t, out)
		if err := chromedp.Do(ctx, chromedp.Navigate(url+"#migration"),
			chromedp.WaitVisible(`#migration table[data-role=differences] tbody tr`), chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()) // the window: the whole list is long
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(outDir, "web-ingress-nginx-migration.png")
		if err := os.WriteFile(name, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", name, len(png))
	})
}
