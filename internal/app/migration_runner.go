package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/tui"
	"github.com/gwdev/gwdev/watch"
)

// migrationRunTimeout bounds one comparison for the dashboard; what it did
// not send by then is counted as left out (the view says how many).
const migrationRunTimeout = 30 * time.Second

// migrationRunner compares the folder's Ingresses with their Gateway API
// conversion (migrate --compare's compareMigration) for the dashboard's
// Migration view after every reload that has Ingresses, off the watch loop
// and the UI: one comparison at a time on its own loopback listeners; a
// newer reload cancels the running one and is compared next (only the
// latest waits).
type migrationRunner struct {
	// send delivers the results (Program.Send).
	send func(tui.MigrationMsg)
	// compare is compareMigration (tests may replace it).
	compare func(ctx context.Context, proj *project, lr *watch.LoadResult, mo engine.MigrationOptions) (*migrationComparison, error)

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
	proj   project // a copy: gwdev.yaml may change while it runs
	lr     *watch.LoadResult
	reload int
}

func newMigrationRunner(send func(tui.MigrationMsg)) *migrationRunner {
	return &migrationRunner{send: send, compare: compareMigration}
}

// submit asks for a comparison of lr (the load of reload number reload),
// read with proj. It returns at once.
func (r *migrationRunner) submit(ctx context.Context, proj *project, lr *watch.LoadResult, reload int) {
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
func (r *migrationRunner) loop(ctx context.Context) {
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
		r.send(tui.MigrationMsg{Reload: job.reload, Running: true})
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
func (r *migrationRunner) run(ctx context.Context, job *migrationJob) tui.MigrationMsg {
	if len(job.lr.Snapshot.Ingresses) == 0 {
		return tui.MigrationMsg{Reload: job.reload, Err: fmt.Errorf("no Ingress left in the folder")}
	}
	c, err := r.compare(ctx, &job.proj, job.lr, engine.MigrationOptions{})
	if err != nil {
		return tui.MigrationMsg{Reload: job.reload, Err: err}
	}
	return migrationMsg(c, job.reload)
}

// wait waits for the running comparison to end (after ctx ends).
func (r *migrationRunner) wait() { r.wg.Wait() }

// migrationMsg is the dashboard's form of a comparison.
func migrationMsg(c *migrationComparison, reload int) tui.MigrationMsg {
	msg := tui.MigrationMsg{Reload: reload, Requests: c.Requests, LeftOut: c.LeftOut, Kept: len(c.Kept)}
	for _, d := range c.Differences {
		md := tui.MigrationDifference{Request: d.requestLine(), Ingress: d.Request.ingress, From: d.Request.from,
			IngressRule: d.Ingress.Rule, IngressSource: d.Ingress.Source, GatewayRule: d.Gateway.Rule, GatewaySource: d.Gateway.Source}
		for _, f := range d.Fields {
			md.Fields = append(md.Fields, tui.MigrationField{Name: f, Ingress: d.Ingress.field(f), Gateway: d.Gateway.field(f)})
		}
		msg.Differences = append(msg.Differences, md)
	}
	for _, p := range c.Converted.Problems {
		msg.Problems = append(msg.Problems, p.String())
	}
	seen := map[string]bool{}
	for _, d := range c.Dropped {
		k := d.Source.String() + d.Ingress.String() + d.What + d.Why
		if !seen[k] {
			seen[k] = true
			msg.Dropped = append(msg.Dropped, tui.MigrationDropped{Ingress: d.Ingress, Source: d.Source, What: d.What, Why: d.Why})
		}
	}
	return msg
}
