package app

import (
	"slices"

	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
)

// configChanged reads gwdev.yaml again and applies the last watch state
// with it: new mappings take effect at once. A gwdev.yaml that no longer
// reads is reported as a problem while the last good settings keep
// serving.
func (r *Session) configChanged() {
	// The watch also signals when the folder appears or comes back: a
	// gwdev.yaml that is still absent (or unchanged) is no reload of it.
	sig := project.ConfigSignature(r.dir)
	if sig == r.cfgSeen {
		return
	}
	r.cfgSeen = sig
	before := r.project.Renders()
	path := r.readConfig()
	if r.cfgErr == nil && !sameRenders(before, r.project.Renders()) {
		r.watcher.SetRenders(r.project.Renders()) // the watcher runs them and sends an update
	}
	if r.lastUpdate == nil {
		return
	}
	u := *r.lastUpdate
	u.Changed, u.Took, u.Root, u.Stale = []string{configName(path, r.dir)}, 0, watch.RootSteady, r.lastUpdate.Stale
	r.apply(&u, false)
}

// readConfig reads gwdev.yaml again into r.project (its mistake into
// r.cfgErr) and returns the file read.
func (r *Session) readConfig() string {
	path, err := r.project.Reread(r.crdsFlag)
	r.cfgErr = err
	return path
}

// configName names gwdev.yaml for the reload line.
func configName(path, dir string) string {
	if path != "" {
		return path
	}
	return dir + "/gwdev.yaml"
}

// withConfigProblem returns u with the last gwdev.yaml mistake among its
// load problems (u itself when there is none); u is not modified.
func (r *Session) withConfigProblem(u *watch.Update) *watch.Update {
	if r.cfgErr == nil {
		return u
	}
	lr := *u.Result
	lr.Problems = append(slices.Clip(lr.Problems), project.ConfigProblem(r.cfgErr))
	c := *u
	c.Result = &lr
	return &c
}

// sameRenders reports whether two render: lists are the same commands with
// the same consent.
func sameRenders(a, b []watch.Render) bool {
	return slices.EqualFunc(a, b, func(x, y watch.Render) bool {
		return x.Command == y.Command && x.Dir == y.Dir && slices.Equal(x.Watch, y.Watch) && x.Consent == y.Consent
	})
}
