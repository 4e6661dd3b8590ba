package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/freeport"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
)

// benchmarkReload is the pieces of `gwdev up`'s reload after one saved
// file, on a folder of n HTTPRoutes from bench/genroutes: the watcher's
// update (walk, loading the changed file, merging), the translation (from
// the previous result, as the reloader does) and the data plane's Apply.
// Each piece is reported as a metric (ms/op of its own: table-ms is the
// translation until the table, translate-ms until the whole result); the
// benchmark's own time includes the watcher's debounce too. With full, the
// translation is TranslateNext, which reuses nothing (as before
// engine/incremental.go), and so neither does Apply.
func benchmarkReload(b *testing.B, n int, full bool) {
	dir := filepath.Join(b.TempDir(), "routes")
	cmd := exec.Command("go", "run", "../../bench/genroutes", "-n", strconv.Itoa(n), "-port", strconv.Itoa(freeport.TCP(b, "127.0.0.1")), "-o", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("genroutes: %v\n%s", err, out)
	}
	l, err := project.NewLoader(nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := l.Watch(ctx, dir, watch.WatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	srv := emulator.New(emulator.Config{})
	defer srv.Close(context.Background())
	opts := engine.Options{}
	prev, finish := engine.TranslateTableFirst(nil, w.Current().Result.Snapshot, opts)
	finish()
	if err := srv.Apply(prev.Table).Err(); err != nil {
		b.Fatal(err)
	}
	var load, tableAt, translate, apply time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("probe-%d", i)
		doc := fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: team-0}\nspec:\n  parentRefs: [{name: shared, namespace: infra}]\n  hostnames: [%s.example.com]\n  rules:\n  - backendRefs: [{name: app-0, port: 8080}]\n", name, name)
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, []byte(doc), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name+".yaml")); err != nil {
			b.Fatal(err)
		}
		u := <-w.Updates()
		load += u.Took
		start := time.Now()
		var res *engine.Result
		if full {
			res = engine.TranslateNext(prev, u.Result.Snapshot, opts)
			tableAt += time.Since(start)
		} else {
			var finish func()
			res, finish = engine.TranslateTableFirst(prev, u.Result.Snapshot, opts)
			tableAt += time.Since(start)
			finish()
			if res.Reuse.Reused < n {
				b.Fatalf("reload %d reused %d routes of %d", i, res.Reuse.Reused, n)
			}
		}
		translate += time.Since(start)
		start = time.Now()
		srv.Apply(res.Table)
		apply += time.Since(start)
		prev = res
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(per(load), "load-ms/op")
	b.ReportMetric(per(tableAt), "table-ms/op")
	b.ReportMetric(per(translate), "translate-ms/op")
	b.ReportMetric(per(apply), "apply-ms/op")
}

// BenchmarkReload1000HTTPRoutes is one saved file's reload with 1,000
// HTTPRoutes (bench/reload.sh measures it end to end).
func BenchmarkReload1000HTTPRoutes(b *testing.B) { benchmarkReload(b, 1000, false) }

// BenchmarkReload10000HTTPRoutes is one saved file's reload with 10,000
// HTTPRoutes.
func BenchmarkReload10000HTTPRoutes(b *testing.B) { benchmarkReload(b, 10000, false) }

// BenchmarkReload10000HTTPRoutesFull is BenchmarkReload10000HTTPRoutes
// translating and compiling everything, for comparison in the same run.
func BenchmarkReload10000HTTPRoutesFull(b *testing.B) { benchmarkReload(b, 10000, true) }
