package project

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// This file is the one project pipeline every command runs: sources
// (folders, files, stdin, gwdev.yaml's render: commands, kustomizations)
// plus gwdev.yaml and the flags → a loader judging against one CRD bundle
// → engine.Translate with options built in one place (engineOptions) →
// the result. No package but this one makes a loader, names
// engine.Options or calls the engine's translation (internal/guard's
// TestOnePipeline), so two commands cannot read the same folder two ways.

// Flags are the flags that say how a project is read, as each
// command has them (a command without a flag leaves it zero).
type Flags struct {
	// Backends are --backend ns/name:port=host:port flags.
	Backends []string
	// Profiles are --profile CLASS=PROFILE flags.
	Profiles []string
	// CRDs is --crds ("" : gwdev.yaml's crds:, else the newest CRDs).
	CRDs string
	// Classes are --class names (nil: every class).
	Classes []string
	// NoKustomize is --kustomize=false.
	NoKustomize bool
	// Trust is --trust: the folder's gwdev.yaml may run its render:
	// commands and its kustomizations may fetch remote resources, without
	// a trust record (consent.go).
	Trust bool
	// PortOffset is where the data plane serves a port it cannot bind
	// (engine.Options.PortOffset: 0, the default offset; negative, no
	// fallback), so that check warns about a backend at port+offset too.
	PortOffset int32
}

// Project is a command's project: where the manifests come from, what
// gwdev.yaml and the flags add, and the loader that judges them.
type Project struct {
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
	// portOffset is Flags.PortOffset.
	portOffset int32
	// backendFlags and profileFlags are kept to read gwdev.yaml again
	// (reread).
	backendFlags, profileFlags []string
	// loader loads and validates, against the CRDs --crds or gwdev.yaml
	// names.
	loader *watch.Loader
	// consent is where the user's consent to run the folder's commands and
	// fetch its remote resources comes from (consent.go).
	consent consentSource
}

// Open reads the project of sources: gwdev.yaml is read when
// sources is one folder (or one path that does not exist yet, as for
// `gwdev up`), merged with the flags, and the loader is made for the CRDs
// they name.
func Open(sources []string, f Flags) (*Project, error) {
	p := &Project{sources: sources, classes: f.Classes, portOffset: f.PortOffset, backendFlags: f.Backends, profileFlags: f.Profiles,
		consent: consentSource{flag: f.Trust, record: true}}
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
	crds, err := crdBundle(f.CRDs, cfg)
	if err != nil {
		return nil, err
	}
	if p.loader, err = NewLoader(crds); err != nil {
		return nil, err
	}
	p.loader.NoKustomize = f.NoKustomize
	return p, nil
}

// reread reads the project's gwdev.yaml again with the flags (it does not
// change p: see the Session (session_config.go), which decides what to
// keep).
func (p *Project) reread() (projectOptions, error) {
	o, err := readProject(p.dir, p.backendFlags, p.profileFlags)
	if err != nil {
		return o, err
	}
	o.remote = p.consent.of(p.dir, o.configData)
	for i := range o.renders {
		o.renders[i].Consent = o.remote
	}
	return o, nil
}

// Sibling is the project of the folder dir, read with p's flags (its own
// gwdev.yaml) and judged by p's loader, so against the same CRDs: the
// revision `gwdev diff` compares with. The trust record never applies to
// it (it is a temporary folder holding someone's revision): its commands
// run and its remote resources are fetched only when trustRevision
// (--trust-revision) says so.
func (p *Project) Sibling(dir string, trustRevision bool) (*Project, error) {
	q := *p
	q.sources, q.dir = []string{dir}, dir
	q.consent = consentSource{flag: trustRevision, flagName: "--trust-revision"}
	cfg, err := q.reread()
	if err != nil {
		return nil, err
	}
	q.cfg = cfg
	return &q, nil
}

// Load reads every source (stdin from in) and merges them.
func (p *Project) Load(in io.Reader) (*watch.LoadResult, error) {
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
		results = append(results, p.loader.Load(src, watch.Sources{Renders: p.cfg.renders, Remote: p.cfg.remote}))
	}
	switch len(results) {
	case 0:
		return &watch.LoadResult{Snapshot: &engine.Snapshot{}}, nil
	case 1:
		return results[0], nil // already sorted and deduplicated
	}
	return watch.Merge(results...), nil
}

// LoadDir loads the folder dir (its files and kustomizations) with p's
// loader, against p's CRDs and with p's consent to fetch remote
// resources, but not dir's own gwdev.yaml or p's render: commands: the
// manifests alone. The test scaffolding (internal/testkit) loads its
// samples this way.
func (p *Project) LoadDir(dir string) *watch.LoadResult {
	return p.loader.Load(dir, watch.Sources{Remote: p.cfg.remote})
}

// ConfigPath is the gwdev.yaml read ("": none).
func (p *Project) ConfigPath() string { return p.cfg.path }

// Renders are gwdev.yaml's render: commands.
func (p *Project) Renders() []watch.Render { return p.cfg.renders }

// CRDsName names the bundle the project's manifests are judged against,
// as --crds takes it.
func (p *Project) CRDsName() string { return loaderCRDsName(p.loader) }

// LoadBytes loads manifests that come as bytes (a cluster's objects, the
// converted manifests of migrate), named name in messages.
func (p *Project) LoadBytes(name string, data []byte) *watch.LoadResult {
	return p.loader.LoadBytes(name, data)
}

// WatchDir watches the project's one folder (its first source), running
// gwdev.yaml's render: commands.
func (p *Project) WatchDir(ctx context.Context, opts watch.WatchOptions) (*watch.Watcher, error) {
	opts.Renders, opts.Remote = p.cfg.renders, p.cfg.remote
	return p.loader.Watch(ctx, p.sources[0], opts)
}

// Translation says what a translation computes beyond the project's own
// options; it never says what the project says (classes, backends,
// profiles).
type Translation struct {
	// Now is the time in status (zero: the epoch, no expiry checks).
	Now metav1.Time
	// Prev is the last translation, whose addresses Gateways keep (nil:
	// none; the Session sets it).
	Prev *engine.Result
	// NoServing leaves Result.Routes out (check).
	NoServing bool
	// Tight translates with the collector sized as for a load (check, a
	// one-shot process: translateGC).
	Tight bool
	// IngressHTTPPort and IngressHTTPSPort are the ingress-nginx classes'
	// ports (0: 80 and 443).
	IngressHTTPPort, IngressHTTPSPort int32
}

// engineOptions is the one constructor of engine.Options: what the
// project (gwdev.yaml and the flags) says, plus what t asks to compute.
func engineOptions(cfg projectOptions, classes []string, portOffset int32, t Translation) engine.Options {
	return engine.Options{Classes: classes, Now: t.Now, NoServing: t.NoServing, PortOffset: portOffset,
		BackendMappings: cfg.mappings, Profiles: cfg.profiles, ProfileOptions: cfg.profileOpts,
		IngressHTTPPort: t.IngressHTTPPort, IngressHTTPSPort: t.IngressHTTPSPort}
}

// Translate translates snap with the project's options.
func (p *Project) Translate(snap *engine.Snapshot, t Translation) *engine.Result {
	opts := engineOptions(p.cfg, p.classes, p.portOffset, t)
	switch {
	case t.Prev != nil:
		return engine.TranslateNext(t.Prev, snap, opts)
	case t.Tight:
		return translateTight(snap, opts)
	}
	return Translate(snap, opts)
}

// Translate is the pipeline's one call of engine.Translate: snap with
// opts. Project.Translate builds opts from the project (gwdev.yaml, the
// flags); only the test scaffolding (internal/testkit), whose tests say
// the engine's options themselves, calls it directly.
func Translate(snap *engine.Snapshot, opts engine.Options) *engine.Result {
	return engine.Translate(snap, opts)
}

// LoadAndTranslate loads the sources and translates them at now.
func (p *Project) LoadAndTranslate(now metav1.Time) (*watch.LoadResult, *engine.Result, error) {
	lr, err := p.Load(nil)
	if err != nil {
		return nil, nil, err
	}
	return lr, p.Translate(lr.Snapshot, Translation{Now: now}), nil
}

// TranslateTableFirst is Translate in two steps
// (engine.TranslateTableFirst): `gwdev up` applies the routing table while
// finish computes the rest of the result; until finish returns only the
// table may be read.
func (p *Project) TranslateTableFirst(snap *engine.Snapshot, t Translation) (res *engine.Result, finish func()) {
	return engine.TranslateTableFirst(t.Prev, snap, engineOptions(p.cfg, p.classes, p.portOffset, t))
}

// ReleaseValidators lets go of the compiled validators, the process's
// and p's loader's (watch.Loader.ReleaseValidators), for a process that
// loads once (check); a later load compiles them again.
func (p *Project) ReleaseValidators() { p.loader.ReleaseValidators() }

// AddLoadFindings adds to res what `check` and `up` report beside the
// engine's findings: the loader's warnings and notes, and the backend
// mappings nothing uses.
func (p *Project) AddLoadFindings(res *engine.Result, lr *watch.LoadResult) {
	addLoadWarnings(res, lr)
	AddFindings(res, mappingFindings(res.Objects, p.cfg.mappings, p.cfg.where))
}

// NewLoader returns a loader that raises the GC target while it loads many
// files and collects garbage between the batches of a large load, so that
// it can pack each batch's objects together (watch/compact.go). crds is
// the bundle to judge against (nil: the newest experimental CRDs).
func NewLoader(crds *watch.CRDBundle) (*watch.Loader, error) {
	l, err := watch.NewLoaderFor(crds)
	if err != nil {
		return nil, err
	}
	l.BulkLoad = loadGC
	l.Collect = runtime.GC
	return l, nil
}

// translateTight translates with the garbage collector sized as for a
// load (translateGC, gc.go).
func translateTight(snap *engine.Snapshot, opts engine.Options) *engine.Result {
	defer translateGC()()
	return Translate(snap, opts)
}

// Enum returns the values the project's CRD bundle allows for the field at
// path of objects of apiVersion and kind (watch.Loader.Enum; nil: none).
func (p *Project) Enum(apiVersion, kind string, path []string) []string {
	return p.loader.Enum(apiVersion, kind, path)
}
