package watch

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

const renderRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop}
spec:
  parentRefs: [{name: web}]
  rules: [{backendRefs: [{name: %s, port: 80}]}]
`

// allowed is the user's consent, which the tests of what a render does
// give explicitly.
var allowed = Consent{Given: true}

// TestRenderOutputIsLoadedAndRerunOnChange renders with a shell command
// (sed over a template it watches): the output is loaded under the
// command's name, the template is not read as a manifest, a change reruns
// the command, and a failing run (a new command from SetRenders) keeps the
// last good objects with its stderr.
func TestRenderOutputIsLoadedAndRerunOnChange(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"tmpl/route.yaml": strings.Replace(renderRoute, "%s", "SERVICE", 1),
		"service.txt":     "shop\n",
	})
	r := Render{Index: 0, Dir: dir, Consent: allowed, Command: `sed "s/SERVICE/$(cat service.txt)/" tmpl/route.yaml`,
		Watch: []string{"tmpl", "service.txt"}}
	l := newTestLoader(t)
	res := l.Load(dir, Sources{Renders: []Render{r}})
	if len(res.Problems) > 0 || len(res.Snapshot.HTTPRoutes) != 1 {
		t.Fatalf("Load: problems %v, %d routes (the template must not load as a manifest)", res.Problems, len(res.Snapshot.HTTPRoutes))
	}
	key := res.Snapshot.HTTPRoutes[0]
	if src := res.Snapshot.SourceOf(objectKey(kindHTTPRoute, key.Namespace, key.Name)); src.File != r.Name() || src.Line != 1 {
		t.Errorf("source = %s, want %s:1", src, r.Name())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := l.Watch(ctx, dir, WatchOptions{Debounce: 20 * time.Millisecond, Renders: []Render{r}})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"service.txt": "shop-v2\n"})
	// Written in place: on a loaded machine the render may first run on
	// the emptied file; the save's update is the one that read it.
	u := waitUpdate(t, w, func(u *Update) bool { return serviceOf(u) == "shop-v2" })
	if got := serviceOf(u); got != "shop-v2" || !slices.Contains(u.Changed, r.Name()) {
		t.Fatalf("after the change: backend %q, changed %v; want shop-v2 and the render", got, u.Changed)
	}
	// gwdev.yaml now gives a command that fails.
	w.SetRenders([]Render{{Index: 0, Dir: dir, Consent: allowed, Command: `echo "render broke" >&2; exit 3`, Watch: r.Watch}})
	u = waitUpdate(t, w, func(u *Update) bool { return len(u.Result.Problems) > 0 })
	p := u.Result.Problems[0]
	if !strings.Contains(p.Message, "exit status 3") || !strings.Contains(p.Message, "render broke") || serviceOf(u) != "shop-v2" || len(u.Stale) != 1 {
		t.Fatalf("a failing render: problem %q, backend %q, stale %v; want exit status 3 with stderr and the last good shop-v2", p, serviceOf(u), u.Stale)
	}
}

// waitUpdate waits for an update that satisfies ok.
func waitUpdate(t *testing.T, w *Watcher, ok func(*Update) bool) *Update {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case u := <-w.Updates():
			if ok(u) {
				return u
			}
		case <-deadline:
			t.Fatal("no such update within 10s")
		}
	}
}

func serviceOf(u *Update) string {
	rs := u.Result.Snapshot.HTTPRoutes
	if len(rs) != 1 || len(rs[0].Spec.Rules) == 0 || len(rs[0].Spec.Rules[0].BackendRefs) == 0 {
		return ""
	}
	return string(rs[0].Spec.Rules[0].BackendRefs[0].Name)
}

// TestHelmChartFolderIsNotReadAsManifests: a chart's templates are never
// loaded; without a render command reading the chart, a warning says how
// to render it.
func TestHelmChartFolderIsNotReadAsManifests(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"chart/Chart.yaml":           "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
		"chart/templates/route.yaml": "kind: HTTPRoute\nmetadata: {name: {{ .Release.Name }}}\n",
	})
	l := newTestLoader(t)
	res := l.LoadDir(dir)
	if len(res.Problems) > 0 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "render it with a render: command") {
		t.Fatalf("problems %v, warnings %v; want no problem and one warning about rendering the chart", res.Problems, res.Warnings)
	}
	res = l.Load(dir, Sources{Renders: []Render{{Dir: dir, Consent: allowed, Command: "true", Watch: []string{"chart"}}}})
	if len(res.Problems) > 0 || len(res.Warnings) != 0 {
		t.Fatalf("with a render reading the chart: problems %v, warnings %v; want none", res.Problems, res.Warnings)
	}
}

// TestRenderLimitsAndStderrAreSaid: a render that runs past its time, one
// whose output is over the 10 MiB file limit and one that fails with a
// long stderr are problems saying so (stderr cut to its last 4 KiB); a
// render that succeeds and writes to stderr loads, with a warning quoting
// it. Nothing is silent.
func TestRenderLimitsAndStderrAreSaid(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir() // the commands run in src, outside the folder loaded
	writeTree(t, src, map[string]string{"route.yaml": strings.Replace(renderRoute, "%s", "shop", 1)})
	long := strings.Repeat("x", 5000)
	for _, tc := range []struct {
		name    string
		render  Render
		problem string // "" : loads
		warning string
	}{
		{"timeout", Render{Command: "sleep 5; cat route.yaml", Timeout: 200 * time.Millisecond},
			"command failed: stopped after 200ms (the time a render may take)", ""},
		{"too large", Render{Command: "head -c 10485761 /dev/zero"},
			"command failed: output too large: 10485761 bytes is over the 10 MiB (10485760 bytes) limit", ""},
		{"long stderr", Render{Command: "printf 'first%s' >&2; exit 1"},
			"command failed: exit status 1; stderr:\n…" + long[:4096-5], ""},
		{"stderr on success", Render{Command: "echo 'deprecated flag' >&2; cat route.yaml"},
			"", "the command succeeded and wrote to stderr: deprecated flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.render
			r.Dir, r.Consent = src, allowed
			r.Command = strings.Replace(r.Command, "%s", long, 1)
			res := newTestLoader(t).Load(dir, Sources{Renders: []Render{r}})
			if tc.problem == "" {
				if len(res.Problems) > 0 || len(res.Snapshot.HTTPRoutes) != 1 {
					t.Errorf("problems %v, %d routes; want the route loaded", res.Problems, len(res.Snapshot.HTTPRoutes))
				}
			} else if len(res.Problems) != 1 || res.Problems[0].File != r.Name() || !strings.HasPrefix(res.Problems[0].Message, tc.problem) ||
				strings.Contains(res.Problems[0].Message, "first") {
				t.Errorf("problems %.300v; want one at %q starting %.200q", res.Problems, r.Name(), tc.problem)
			}
			var warnings []string
			for _, w := range res.Warnings {
				warnings = append(warnings, w.Message)
			}
			if (tc.warning != "") != slices.Contains(warnings, tc.warning) || (tc.warning == "" && len(warnings) > 0) {
				t.Errorf("warnings %q; want %q", warnings, tc.warning)
			}
		})
	}
}

// TestRenderOutputOverTheLimitIsNotKept: a render writing 64 MiB is
// reported with its whole size, but the run keeps no more than the limit
// (and a byte) in memory.
func TestRenderOutputOverTheLimitIsNotKept(t *testing.T) {
	rr := Render{Command: "head -c 67108864 /dev/zero", Dir: t.TempDir(), Consent: allowed}.run(context.Background())
	if rr.err == nil || rr.err.Error() != "output too large: 67108864 bytes is over the 10 MiB (10485760 bytes) limit" {
		t.Errorf("err = %v", rr.err)
	}
	if len(rr.stdout) > MaxFileSize+1 {
		t.Errorf("kept %d bytes of output, want at most %d", len(rr.stdout), MaxFileSize+1)
	}
}

// TestRenderWithoutConsentIsNotRun: a render the user did not allow is
// never started (its marker file is not created), and a problem names the
// command and says how to allow it; the folder's files still load.
func TestRenderWithoutConsentIsNotRun(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"route.yaml": strings.Replace(renderRoute, "%s", "shop", 1)})
	r := Render{Index: 0, Dir: dir, Command: "touch MARKER; echo ---", Consent: Consent{Hint: "run `gwdev trust DIR`"}}
	l := newTestLoader(t)
	res := l.Load(dir, Sources{Renders: []Render{r}})
	if _, err := os.Stat(filepath.Join(dir, "MARKER")); err == nil {
		t.Fatal("the command ran without consent")
	}
	if len(res.Problems) != 1 || res.Problems[0].Kind != ProblemNotAllowed || !strings.Contains(res.Problems[0].Message, `"touch MARKER; echo ---"`) ||
		!strings.Contains(res.Problems[0].Message, "gwdev trust DIR") || len(res.Snapshot.HTTPRoutes) != 1 {
		t.Fatalf("problems %v, %d routes; want one NotAllowed problem naming the command and the hint, and the folder's route", res.Problems, len(res.Snapshot.HTTPRoutes))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := l.Watch(ctx, dir, WatchOptions{Debounce: 20 * time.Millisecond, Renders: []Render{r}})
	if err != nil {
		t.Fatal(err)
	}
	if ps := w.Current().Result.Problems; len(ps) != 1 || ps[0].Kind != ProblemNotAllowed {
		t.Errorf("watch: problems %v; want the NotAllowed one", ps)
	}
	if _, err := os.Stat(filepath.Join(dir, "MARKER")); err == nil {
		t.Fatal("the watcher ran the command without consent")
	}
}

// TestRenderStderrIsBounded: a render writing 64 MiB to stderr holds only
// the last maxRenderStderr bytes of it, and the run allocates far less than
// it wrote.
func TestRenderStderrIsBounded(t *testing.T) {
	const wrote = 64 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rr := Render{Command: "head -c 67108864 /dev/zero | tr '\\0' x >&2; echo END >&2; exit 1", Dir: t.TempDir(), Consent: allowed}.run(context.Background())
	runtime.ReadMemStats(&after)
	if rr.stderrBuf == nil || rr.stderrBuf.n != wrote+4 || cap(rr.stderrBuf.ring) > maxRenderStderr {
		t.Fatalf("stderr buffer %+v; want %d bytes counted in a ring of at most %d", rr.stderrBuf, wrote+4, maxRenderStderr)
	}
	if !strings.HasSuffix(rr.stderr, "xxxEND") || len(rr.stderr) > maxRenderStderr+len("…") {
		t.Errorf("stderr kept %d bytes ending %q; want its last %d bytes", len(rr.stderr), rr.stderr[max(0, len(rr.stderr)-10):], maxRenderStderr)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("the run allocated %d bytes for %d bytes of stderr; want a bounded buffer", alloc, wrote)
	}
}

// TestTailBufferKeepsTheEnd: writes of every size keep exactly the last max
// bytes, in order.
func TestTailBufferKeepsTheEnd(t *testing.T) {
	var all []byte
	tb := newTailBuffer(10)
	for i, n := range []int{3, 4, 5, 1, 12, 2, 9, 10, 0, 7} {
		p := []byte(strings.Repeat(string(rune('a'+i)), n))
		all = append(all, p...)
		tb.Write(p)
		want := all[max(0, len(all)-10):]
		if got := tb.Bytes(); string(got) != string(want) || tb.n != int64(len(all)) {
			t.Fatalf("after write %d: %q (n %d), want %q (n %d)", i, got, tb.n, want, len(all))
		}
	}
}
