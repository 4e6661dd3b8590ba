package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// MigrationState is one message of a MigrationRunner: a comparison of
// reload number Reload started (Running), ended (Comparison) or failed
// (Err).
type MigrationState struct {
	Reload  int
	Running bool
	// Comparison is the finished comparison (nil: running or failed).
	Comparison *report.MigrationComparison
	Err        error
}

// migrationRunTimeout bounds one comparison for the dashboard; what it did
// not send by then is counted as left out (the view says how many).
const migrationRunTimeout = 30 * time.Second

// MigrationRunner compares the folder's Ingresses with their Gateway API
// conversion (migrate --compare's CompareMigration) for the dashboard's
// Migration view after every reload that has Ingresses, off the watch loop
// and the UI: one comparison at a time on its own loopback listeners; a
// newer reload cancels the running one and is compared next (only the
// latest waits).
type MigrationRunner struct {
	// send delivers the results (Program.Send).
	send func(MigrationState)
	// compare is CompareMigration (tests may replace it).
	compare func(ctx context.Context, proj *project.Project, lr *watch.LoadResult, mo ingressnginx.MigrationOptions) (*report.MigrationComparison, error)

	mu      sync.Mutex
	cancel  context.CancelFunc // of the running comparison (nil: none)
	next    *migrationJob      // the newest reload waiting (nil: none)
	running bool
	// hadIngresses is set once a compared state had Ingresses: a state
	// without them is then compared too (to clear the view).
	hadIngresses bool
	wg           sync.WaitGroup
}

// migrationJob is one reload to compare.
type migrationJob struct {
	proj   project.Project // a copy: gwdev.yaml may change while it runs
	lr     *watch.LoadResult
	reload int
}

// NewMigrationRunner returns a runner that delivers what it compares to
// send.
func NewMigrationRunner(send func(MigrationState)) *MigrationRunner {
	return &MigrationRunner{send: send, compare: CompareMigration}
}

// Submit asks for a comparison of lr (the load of reload number reload),
// read with proj. It returns at once.
func (r *MigrationRunner) Submit(ctx context.Context, proj *project.Project, lr *watch.LoadResult, reload int) {
	if lr == nil || lr.Snapshot == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	has := len(lr.Snapshot.Ingresses) > 0
	if !has && !r.hadIngresses {
		return
	}
	r.hadIngresses = has
	r.next = &migrationJob{proj: *proj, lr: lr, reload: reload}
	if r.running {
		if r.cancel != nil {
			r.cancel() // the newer state is what counts
		}
		return
	}
	r.running = true
	r.wg.Add(1)
	go r.loop(ctx)
}

// loop runs the waiting jobs until none is left.
func (r *MigrationRunner) loop(ctx context.Context) {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		job := r.next
		r.next = nil
		if job == nil || ctx.Err() != nil {
			r.running, r.cancel = false, nil
			r.mu.Unlock()
			return
		}
		run, cancel := context.WithTimeout(ctx, migrationRunTimeout)
		r.cancel = cancel
		r.mu.Unlock()
		r.send(MigrationState{Reload: job.reload, Running: true})
		msg := r.run(run, job)
		cancel()
		r.mu.Lock()
		superseded := r.next != nil
		r.mu.Unlock()
		if ctx.Err() != nil || superseded {
			continue // stopping, or a newer state is compared next
		}
		r.send(msg)
	}
}

// run compares one job.
func (r *MigrationRunner) run(ctx context.Context, job *migrationJob) MigrationState {
	if len(job.lr.Snapshot.Ingresses) == 0 {
		return MigrationState{Reload: job.reload, Err: fmt.Errorf("no Ingress left in the folder")}
	}
	c, err := r.compare(ctx, &job.proj, job.lr, ingressnginx.MigrationOptions{})
	if err != nil {
		return MigrationState{Reload: job.reload, Err: err}
	}
	return MigrationState{Reload: job.reload, Comparison: c}
}

// Wait waits for the running comparison to end (after ctx ends).
func (r *MigrationRunner) Wait() { r.wg.Wait() }
