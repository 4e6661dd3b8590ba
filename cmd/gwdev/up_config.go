package main

import (
	"errors"
	"slices"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// projectOptions is what gwdev.yaml and the command line give the engine.
type projectOptions struct {
	// path is the gwdev.yaml read ("": none).
	path string
	// mappings are the backend mappings, where the place each was given.
	mappings, where map[string]string
	profiles        map[string]string
	ycCerts         map[string]engine.PEMCertificate
}

// projectOptions reads dir's gwdev.yaml and merges it with the flags.
func (o *upOptions) projectOptions(dir string) (projectOptions, error) {
	cfg, path, err := loadProjectConfig(dir)
	if err != nil {
		return projectOptions{path: path}, err
	}
	p := projectOptions{path: path}
	if p.mappings, p.where, err = backendMappings(cfg, o.backends); err != nil {
		return p, err
	}
	if p.profiles, p.ycCerts, err = profileOptions(cfg, dir, o.profiles); err != nil {
		return p, err
	}
	return p, nil
}

// set puts p into the engine's options.
func (p projectOptions) set(opts *engine.Options) {
	opts.BackendMappings, opts.Profiles, opts.YCCertificates = p.mappings, p.profiles, p.ycCerts
}

// configChanged reads gwdev.yaml again and applies the last watch state
// with it: new mappings take effect at once. A gwdev.yaml that no longer
// reads is reported as a problem while the last good settings keep
// serving.
func (r *reloader) configChanged() {
	p := r.readConfig()
	if r.lastUpdate == nil {
		return
	}
	u := *r.lastUpdate
	u.Changed, u.Took, u.Root, u.Stale = []string{configName(p.path, r.dir)}, 0, watch.RootSteady, r.lastUpdate.Stale
	r.apply(&u, false)
}

// readConfig reads gwdev.yaml again into r.proj (or r.cfgErr) and returns
// what it read.
func (r *reloader) readConfig() projectOptions {
	p, err := r.reread(r.dir)
	r.cfgErr = err
	if err == nil {
		r.proj = p
	}
	return p
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
func (r *reloader) withConfigProblem(u *watch.Update) *watch.Update {
	if r.cfgErr == nil {
		return u
	}
	p := watch.Problem{Message: r.cfgErr.Error()}
	var ce *configError
	if errors.As(r.cfgErr, &ce) {
		p = ce.problem()
	}
	lr := *u.Result
	lr.Problems = append(slices.Clip(lr.Problems), p)
	c := *u
	c.Result = &lr
	return &c
}
