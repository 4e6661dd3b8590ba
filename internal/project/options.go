package project

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

// ConfigSignature is what the folder's gwdev.yaml (or gwdev.yml) holds:
// its name and bytes, "" when there is none.
func ConfigSignature(dir string) string {
	for _, name := range configNames {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return name + "\x00" + string(b)
		}
	}
	return ""
}

// Reread reads gwdev.yaml again into p (`gwdev up`, when the file
// changes) and returns the file read ("": none). A gwdev.yaml that no
// longer reads is returned as an error (a *configError, see
// ConfigProblem) and p keeps its last good settings. Unless crdsFlag
// (--crds was given), a changed crds: is an error too, and p keeps
// judging against the CRDs its loader was made for.
func (p *Project) Reread(crdsFlag bool) (path string, err error) {
	o, err := p.reread()
	if err != nil {
		return o.path, err
	}
	if !crdsFlag && o.crds != p.cfg.crds {
		// The loader was made for the CRDs at start; say so rather
		// than judge against CRDs gwdev.yaml no longer names.
		err = &configError{File: o.path, Field: "crds", Message: fmt.Sprintf(
			"changed from %q to %q while gwdev up runs: manifests are still judged against %q; restart gwdev up to use the new CRDs",
			p.cfg.crds, o.crds, p.cfg.crds)}
		o.crds, o.crdsWhere = p.cfg.crds, p.cfg.crdsWhere
	}
	p.cfg = o
	return o.path, err
}

// ConfigProblem is a mistake in gwdev.yaml (an error of Open or Reread)
// as a load problem, placed at file:line:column when it is a
// *configError: the dashboard's Problems view and up's plain lines show
// it with the manifests' problems.
func ConfigProblem(err error) watch.Problem {
	var ce *configError
	if errors.As(err, &ce) {
		return ce.problem()
	}
	return watch.Problem{Message: err.Error()}
}
