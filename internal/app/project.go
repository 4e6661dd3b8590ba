package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// This file is the one project pipeline every command runs: sources
// (folders, files, stdin, gwdev.yaml's render: commands, kustomizations)
// plus gwdev.yaml and the flags → a loader judging against one CRD bundle
// → engine.Translate with options built in one place (engineOptions) →
// the result. No other file of cmd/gwdev makes a loader or engine.Options
// (TestOnePipeline), so two commands cannot read the same folder two ways.

// projectFlags are the flags that say how a project is read, as each
// command has them (a command without a flag leaves it zero).
type projectFlags struct {
	// backends are --backend ns/name:port=host:port flags.
	backends []string
	// profiles are --profile CLASS=PROFILE flags.
	profiles []string
	// crds is --crds ("" : gwdev.yaml's crds:, else the newest CRDs).
	crds string
	// classes are --class names (nil: every class).
	classes []string
	// noKustomize is --kustomize=false.
	noKustomize bool
}

// project is a command's project: where the manifests come from, what
// gwdev.yaml and the flags add, and the loader that judges them.
type project struct {
	// sources are the folders and files to read; "-" is stdin (nil: none,
	// the manifests come as bytes, see loadBytes).
	sources []string
	// dir is the folder whose gwdev.yaml was read ("" : none).
	dir string
	// cfg is what gwdev.yaml and the flags give the engine; `gwdev up`
	// replaces it when gwdev.yaml changes.
	cfg projectOptions
	// classes are the GatewayClass names gwdev manages (nil: every one).
	classes []string
	// backendFlags and profileFlags are kept to read gwdev.yaml again
	// (reread).
	backendFlags, profileFlags []string
	// loader loads and validates, against the CRDs --crds or gwdev.yaml
	// names.
	loader *watch.Loader
}

// openProject reads the project of sources: gwdev.yaml is read when
// sources is one folder (or one path that does not exist yet, as for
// `gwdev up`), merged with the flags, and the loader is made for the CRDs
// they name.
func openProject(sources []string, f projectFlags) (*project, error) {
	p := &project{sources: sources, classes: f.classes, backendFlags: f.backends, profileFlags: f.profiles}
	if len(sources) == 1 && sources[0] != "-" {
		if st, err := os.Stat(sources[0]); err != nil || st.IsDir() {
			p.dir = sources[0]
		}
	}
	cfg, err := p.reread()
	if err != nil {
		return nil, err
	}
	p.cfg = cfg
	crds, err := crdBundle(f.crds, cfg)
	if err != nil {
		return nil, err
	}
	if p.loader, err = newLoader(crds); err != nil {
		return nil, err
	}
	p.loader.NoKustomize = f.noKustomize
	return p, nil
}

// reread reads the project's gwdev.yaml again with the flags (it does not
// change p: see `gwdev up`'s reloader, which decides what to keep).
func (p *project) reread() (projectOptions, error) {
	return readProject(p.dir, p.backendFlags, p.profileFlags)
}

// sibling is the project of the folder dir, read with p's flags (its own
// gwdev.yaml) and judged by p's loader, so against the same CRDs: the
// revision `gwdev diff` compares with.
func (p *project) sibling(dir string) (*project, error) {
	q := *p
	q.sources, q.dir = []string{dir}, dir
	cfg, err := q.reread()
	if err != nil {
		return nil, err
	}
	q.cfg = cfg
	return &q, nil
}

// load reads every source (stdin from in) and merges them.
func (p *project) load(in io.Reader) (*watch.LoadResult, error) {
	var results []*watch.LoadResult
	for _, src := range p.sources {
		if src == "-" {
			data, err := io.ReadAll(in)
			if err != nil {
				return nil, fmt.Errorf("reading stdin: %w", err)
			}
			results = append(results, p.loader.LoadBytes("<stdin>", data))
			continue
		}
		results = append(results, p.loader.Load(src, watch.Sources{Renders: p.cfg.renders}))
	}
	switch len(results) {
	case 0:
		return &watch.LoadResult{Snapshot: &engine.Snapshot{}}, nil
	case 1:
		return results[0], nil // already sorted and deduplicated
	}
	return watch.Merge(results...), nil
}

// loadBytes loads manifests that come as bytes (a cluster's objects, the
// converted manifests of migrate), named name in messages.
func (p *project) loadBytes(name string, data []byte) *watch.LoadResult {
	return p.loader.LoadBytes(name, data)
}

// watchDir watches the project's one folder (its first source), running
// gwdev.yaml's render: commands.
func (p *project) watchDir(ctx context.Context, opts watch.WatchOptions) (*watch.Watcher, error) {
	opts.Renders = p.cfg.renders
	return p.loader.Watch(ctx, p.sources[0], opts)
}

// translation says what a translation computes beyond the project's own
// options; it never says what the project says (classes, backends,
// profiles).
type translation struct {
	// now is the time in status (zero: the epoch, no expiry checks).
	now metav1.Time
	// prev is the last translation, whose addresses Gateways keep (nil:
	// none; gwdev up sets it).
	prev *engine.Result
	// noServing leaves Result.Routes out (check).
	noServing bool
	// tight translates with a low GC target (check, a one-shot process).
	tight bool
	// ingressHTTPPort and ingressHTTPSPort are the ingress-nginx classes'
	// ports (0: 80 and 443).
	ingressHTTPPort, ingressHTTPSPort int32
}

// engineOptions is the one constructor of engine.Options: what the
// project (gwdev.yaml and the flags) says, plus what t asks to compute.
func engineOptions(cfg projectOptions, classes []string, t translation) engine.Options {
	return engine.Options{Classes: classes, Now: t.now, NoServing: t.noServing,
		BackendMappings: cfg.mappings, Profiles: cfg.profiles, ProfileOptions: cfg.profileOpts,
		IngressHTTPPort: t.ingressHTTPPort, IngressHTTPSPort: t.ingressHTTPSPort}
}

// translate translates snap with the project's options.
func (p *project) translate(snap *engine.Snapshot, t translation) *engine.Result {
	opts := engineOptions(p.cfg, p.classes, t)
	switch {
	case t.prev != nil:
		return engine.TranslateNext(t.prev, snap, opts)
	case t.tight:
		return translateTight(snap, opts)
	}
	return engine.Translate(snap, opts)
}

// loadAndTranslate loads the sources and translates them at now.
func (p *project) loadAndTranslate(now metav1.Time) (*watch.LoadResult, *engine.Result, error) {
	lr, err := p.load(nil)
	if err != nil {
		return nil, nil, err
	}
	return lr, p.translate(lr.Snapshot, translation{now: now}), nil
}

// translateTableFirst is translate in two steps
// (engine.TranslateTableFirst): `gwdev up` applies the routing table while
// finish computes the rest of the result; until finish returns only the
// table may be read.
func (p *project) translateTableFirst(snap *engine.Snapshot, t translation) (res *engine.Result, finish func()) {
	return engine.TranslateTableFirst(t.prev, snap, engineOptions(p.cfg, p.classes, t))
}

// addLoadFindings adds to res what `check` and `up` report beside the
// engine's findings: the loader's warnings and notes, and the backend
// mappings nothing uses.
func (p *project) addLoadFindings(res *engine.Result, lr *watch.LoadResult) {
	addLoadWarnings(res, lr)
	addFindings(res, mappingFindings(res.Objects, p.cfg.mappings, p.cfg.where))
}

// newLoader returns a loader that raises the GC target while it loads many
// files and collects garbage between the batches of a large load, so that
// it can pack each batch's objects together (watch/compact.go). crds is
// the bundle to judge against (nil: the newest experimental CRDs).
func newLoader(crds *watch.CRDBundle) (*watch.Loader, error) {
	l, err := watch.NewLoaderFor(crds)
	if err != nil {
		return nil, err
	}
	l.BulkLoad = relaxGC
	l.Collect = runtime.GC
	return l, nil
}

// translateTight translates with the garbage collector target at
// translateGCPercent (gc.go); a lower GOGC, or GOGC=off, is left alone.
func translateTight(snap *engine.Snapshot, opts engine.Options) *engine.Result {
	prev := debug.SetGCPercent(translateGCPercent)
	if prev < translateGCPercent {
		debug.SetGCPercent(prev)
	}
	defer debug.SetGCPercent(prev)
	return engine.Translate(snap, opts)
}
