package app

import (
	"context"
	"sync"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// TestMigrationRunnerLatestWins: submit returns at once while a comparison
// runs; reloads arriving meanwhile cancel it and only the newest is
// compared next; a folder without Ingresses starts none (until one had
// them: then the view is told they are gone).
func TestMigrationRunnerLatestWins(t *testing.T) {
	var (
		mu   sync.Mutex
		sent []MigrationState
		ran  []int
	)
	release := make(chan struct{})
	started := make(chan int, 10)
	r := NewMigrationRunner(func(m MigrationState) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, m)
	})
	r.compare = func(ctx context.Context, _ *project.Project, lr *watch.LoadResult, _ ingressnginx.MigrationOptions) (*report.MigrationComparison, error) {
		n := lr.Files
		mu.Lock()
		ran = append(ran, n)
		mu.Unlock()
		started <- n
		if n == 1 {
			select { // the first one runs until a newer reload cancels it
			case <-ctx.Done():
			case <-release:
			}
		}
		return &report.MigrationComparison{Requests: n, Converted: &watch.LoadResult{}}, nil
	}
	withIngress := func(files int) *watch.LoadResult {
		return &watch.LoadResult{Files: files, Snapshot: &engine.Snapshot{Ingresses: []*networkingv1.Ingress{{}}}}
	}
	ctx := t.Context()
	proj := &project.Project{}
	r.Submit(ctx, proj, &watch.LoadResult{Snapshot: &engine.Snapshot{}}, 0) // no Ingress: nothing runs
	r.Submit(ctx, proj, withIngress(1), 1)
	if n := <-started; n != 1 {
		t.Fatalf("first comparison of reload %d", n)
	}
	done := make(chan struct{})
	go func() {
		r.Submit(ctx, proj, withIngress(2), 2)
		r.Submit(ctx, proj, withIngress(3), 3)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("submit blocks while a comparison runs")
	}
	if n := <-started; n != 3 {
		t.Errorf("compared reload %d after the running one, want the newest (3)", n)
	}
	close(release)
	r.Submit(ctx, proj, &watch.LoadResult{Snapshot: &engine.Snapshot{}}, 4) // the Ingresses are gone
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		last := MigrationState{}
		if len(sent) > 0 {
			last = sent[len(sent)-1]
		}
		mu.Unlock()
		if last.Reload == 4 && !last.Running {
			if last.Err == nil {
				t.Errorf("reload 4 without Ingresses: %+v", last)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no result for reload 4; sent %+v", sent)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 2 || ran[0] != 1 || ran[1] != 3 {
		t.Errorf("compared %v, want [1 3] (2 superseded, 0 and 4 without Ingresses)", ran)
	}
	for _, m := range sent {
		if !m.Running && (m.Reload == 1 || m.Reload == 2) {
			t.Errorf("a superseded comparison's result was sent: %+v", m)
		}
	}
	r.Wait()
}

// TestMigrationRunnerBesideReloads: the dashboard's comparison reads the
// load up's reloader translates at the same time (run with -race): the
// real CompareMigration on samples/ingress-nginx while the same snapshot
// is translated again, as reloads do.
func TestMigrationRunnerBesideReloads(t *testing.T) {
	proj, err := project.Open([]string{"../../samples/ingress-nginx"}, project.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	lr, err := proj.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan MigrationState, 4)
	r := NewMigrationRunner(func(m MigrationState) {
		if !m.Running {
			got <- m
		}
	})
	r.Submit(t.Context(), proj, lr, 0)
	var prev *engine.Result
	for range 3 {
		prev = proj.Translate(lr.Snapshot, project.Translation{Now: metav1.Now(), Prev: prev})
	}
	select {
	case m := <-got:
		c := m.Comparison
		if m.Err != nil || c == nil || c.Requests == 0 || len(c.Differences) == 0 || len(c.Dropped) == 0 {
			t.Fatalf("comparison: err %v, %+v", m.Err, c)
		}
		if d := c.Differences[0]; d.Request.Ingress.Kind != "Ingress" || d.Request.From.Line == 0 || d.Ingress.Source == "" {
			t.Errorf("a difference without its Ingress or file:line: %+v", d)
		}
	case <-time.After(migrationRunTimeout + 10*time.Second):
		t.Fatal("no comparison")
	}
	r.Wait()
}
