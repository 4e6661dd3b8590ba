package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gwdev/gwdev/watch"
)

// projectOptions is what gwdev.yaml and the command line give the engine.
type projectOptions struct {
	// path is the gwdev.yaml read ("": none).
	path string
	// mappings are the backend mappings, where the place each was given.
	mappings, where map[string]string
	profiles        map[string]string
	// profileOpts are engine.Options.ProfileOptions (nil: none).
	profileOpts map[string]any
	// crds is gwdev.yaml's crds: ("": none), a bundle name or a file path
	// relative to the working directory; crdsWhere is where it was given.
	crds, crdsWhere string
	// renders are gwdev.yaml's render: commands, each with the user's
	// consent to run it (project.reread).
	renders []watch.Render
	// configData is gwdev.yaml's content (nil: none); remote is the user's
	// consent for kustomizations to fetch remote resources (consent.go).
	configData []byte
	remote     watch.Consent
}

// readProject reads dir's gwdev.yaml ("": no folder, the flags alone) and
// merges it with the --backend and --profile flags: what every command
// gives the engine from the project.
func readProject(dir string, backendFlags, profileFlags []string) (projectOptions, error) {
	cfg, p := &projectConfig{}, projectOptions{}
	if dir != "" {
		c, path, err := loadProjectConfig(dir)
		if p.path = path; err != nil {
			return p, err
		}
		cfg = c
	}
	var err error
	if p.mappings, p.where, err = backendMappings(cfg, backendFlags); err != nil {
		return p, err
	}
	if p.profiles, p.profileOpts, err = profileOptions(cfg, dir, profileFlags); err != nil {
		return p, err
	}
	if cfg.CRDs != "" {
		p.crds, p.crdsWhere = cfg.CRDs, cfg.where["crds"].String()
		if !slices.Contains(watch.CRDBundleNames(), p.crds) && !filepath.IsAbs(p.crds) {
			p.crds = filepath.Join(dir, p.crds)
		}
	}
	p.renders, p.configData = cfg.Renders, cfg.data
	return p, nil
}

// configChanged reads gwdev.yaml again and applies the last watch state
// with it: new mappings take effect at once. A gwdev.yaml that no longer
// reads is reported as a problem while the last good settings keep
// serving.
func (r *Session) configChanged() {
	// The watch also signals when the folder appears or comes back: a
	// gwdev.yaml that is still absent (or unchanged) is no reload of it.
	sig := configSignature(r.dir)
	if sig == r.cfgSeen {
		return
	}
	r.cfgSeen = sig
	before := r.project.cfg.renders
	p := r.readConfig()
	if r.cfgErr == nil && !sameRenders(before, p.renders) {
		r.watcher.SetRenders(p.renders) // the watcher runs them and sends an update
	}
	if r.lastUpdate == nil {
		return
	}
	u := *r.lastUpdate
	u.Changed, u.Took, u.Root, u.Stale = []string{configName(p.path, r.dir)}, 0, watch.RootSteady, r.lastUpdate.Stale
	r.apply(&u, false)
}

// configSignature is what the folder's gwdev.yaml (or gwdev.yml) holds:
// its name and bytes, "" when there is none.
func configSignature(dir string) string {
	for _, name := range configNames {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return name + "\x00" + string(b)
		}
	}
	return ""
}

// readConfig reads gwdev.yaml again into r.project (or r.cfgErr) and returns
// what it read.
func (r *Session) readConfig() projectOptions {
	p, err := r.project.reread()
	r.cfgErr = err
	if err == nil {
		if !r.crdsFlag && p.crds != r.project.cfg.crds {
			// The loader was made for the CRDs at start; say so rather
			// than judge against CRDs gwdev.yaml no longer names.
			r.cfgErr = &configError{File: p.path, Field: "crds", Message: fmt.Sprintf(
				"changed from %q to %q while gwdev up runs: manifests are still judged against %q; restart gwdev up to use the new CRDs",
				r.project.cfg.crds, p.crds, r.project.cfg.crds)}
			p.crds, p.crdsWhere = r.project.cfg.crds, r.project.cfg.crdsWhere
		}
		r.project.cfg = p
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
func (r *Session) withConfigProblem(u *watch.Update) *watch.Update {
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

// sameRenders reports whether two render: lists are the same commands with
// the same consent.
func sameRenders(a, b []watch.Render) bool {
	return slices.EqualFunc(a, b, func(x, y watch.Render) bool {
		return x.Command == y.Command && x.Dir == y.Dir && slices.Equal(x.Watch, y.Watch) && x.Consent == y.Consent
	})
}
