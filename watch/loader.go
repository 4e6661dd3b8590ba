package watch

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Loader reads manifests and validates them. Build one per process with
// NewLoader: the CRD validators it uses are compiled lazily, once per CRD
// version, and shared. A Loader is safe for concurrent use.
type Loader struct {
	crds *crdSet
	// bundle, when set, is the cluster's CRDs objects are judged against
	// (NewLoaderFor); nil: crds, with channel notes.
	bundle *CRDBundle
	// BulkLoad, when set, is called when a load of many files starts
	// (LoadDir, or a watcher reload of more than one file); the function it
	// returns is called when that load ends. The CLI raises the garbage
	// collector's target with it: loading allocates a great many short-lived
	// objects. nil: nothing is called.
	BulkLoad func() (done func())
	// Collect, when set, is called between the batches of a load of more
	// than compactBatchDocs documents, before the batch's objects are copied
	// together (compact.go); the CLI runs the garbage collector there, a
	// process-wide action that is not the loader's to take. nil: loads are
	// not batched and objects stay where decoding put them.
	Collect func()
	// NoKustomize reads a folder holding a kustomization file file by file,
	// like any other folder, instead of building it (kustomize.go).
	NoKustomize bool
	// scratch holds *docScratch, one per document being loaded.
	scratch sync.Pool
	// noMapReuse makes every document's maps anew (mapfree.go); tests
	// compare the two.
	noMapReuse bool
}

// NewLoader returns a Loader. It fails only if the embedded CRDs are
// missing (a build problem: run go generate ./watch).
func NewLoader() (*Loader, error) {
	crds := processCRDs()
	if err := crds.check(); err != nil {
		return nil, err
	}
	return &Loader{crds: crds}, nil
}

// warm compiles the validators of every Gateway API kind's stored version,
// which a Loader otherwise does on first use (about half a second for a
// Gateway and an HTTPRoute). The watcher calls it in the background when
// its root does not exist yet, so that the folder, once it appears, loads
// as fast as one that was there at start.
func (l *Loader) warm() {
	for _, k := range allKinds {
		if k.crd != "" {
			_, _ = l.crds.schema(k.crd, k.version)
		}
	}
}

// LoadDir loads every manifest under root, recursively: *.yaml, *.yml and
// *.json files, skipping dotfiles, dot-directories and editor temporary
// files, following symlinks but not into loops. When root is a file, only
// that file is loaded, whatever its name. A folder holding a kustomization
// file is built as `kubectl kustomize` builds it (unless NoKustomize).
// Problems reading files are in the result like any other problem. It runs
// inside BulkLoad.
func (l *Loader) LoadDir(root string) *LoadResult {
	return l.Load(root, Sources{})
}

// Sources are where manifests come from besides root's files.
type Sources struct {
	// Renders are commands whose output is loaded like a file (render.go).
	Renders []Render
	// Remote is the user's consent for kustomizations to fetch remote
	// resources (zero: none, kustomize_remote.go).
	Remote Consent
}

// Load is LoadDir plus the renders of src, run once each. It runs inside
// BulkLoad.
func (l *Loader) Load(root string, src Sources) *LoadResult {
	defer l.bulkLoad()()
	found := findManifests(root, !l.NoKustomize)
	builds := l.buildAll(found.kusts, src.Remote)
	inputs := readByBuilds(builds)
	for f := range renderInputs(src.Renders) {
		inputs[f] = true
	}
	files := withoutInputs(found.files, inputs)
	in := make([]fileInput, len(files))
	parallel(len(files), func(i int) {
		data, p := readManifest(files[i])
		in[i] = fileInput{path: files[i].path, data: data, problem: p}
	})
	c := l.loadFiles(in, found.problems)
	parts := []collected{c}
	for _, b := range builds {
		parts = append(parts, l.loadKustomization(b))
	}
	warnings := append(found.warnings, chartWarnings(found.charts, inputs)...)
	for _, r := range src.Renders {
		rc, w := l.loadRender(r.run(context.Background()))
		rc.files = 1
		parts = append(parts, rc)
		warnings = append(warnings, w...)
	}
	all := joinCollected(parts)
	res := all.result()
	res.Warnings = warnings
	return res
}

// buildAll builds every kustomization found, dropping those another one
// read (usedBy).
func (l *Loader) buildAll(kusts []kustomizationDir, remote Consent) []*kustomizeBuild {
	builds := make([]*kustomizeBuild, len(kusts))
	for i, k := range kusts {
		builds[i] = buildKustomization(k.dir, k.file, remote)
	}
	return usedBy(builds)
}

// joinCollected merges several loads as collect does (the first definition
// of an object wins, the others are problems).
func joinCollected(parts []collected) collected {
	if len(parts) == 1 {
		return parts[0]
	}
	var (
		files    int
		objs     []loaded
		problems []Problem
		skipped  []Skipped
	)
	for _, p := range parts {
		files += p.files
		objs = append(objs, p.objs...)
		problems = append(problems, p.problems...)
		skipped = append(skipped, p.skipped...)
	}
	return collect(files, objs, problems, skipped)
}

// LoadBytes loads the content of one file, named file in sources and
// problems (use "-" for standard input). The watcher calls it for each
// changed file and combines the per-file results with Merge.
func (l *Loader) LoadBytes(file string, data []byte) *LoadResult {
	return l.load([]fileInput{{path: file, data: data}}, nil)
}

// fileInput is the content of one manifest file, or why it could not be
// read.
type fileInput struct {
	path    string
	data    []byte
	problem *Problem
}

// load loads files and assembles the result (loadFiles).
func (l *Loader) load(inputs []fileInput, problems []Problem) *LoadResult {
	c := l.loadFiles(inputs, problems)
	return c.result()
}

// loadFiles splits every file into documents, loads the documents on a
// small worker pool and collects the objects, without building a Snapshot.
func (l *Loader) loadFiles(inputs []fileInput, problems []Problem) collected {
	type job struct {
		file  string
		chunk chunk
	}
	// Each file is checked and split on its own, side by side: one
	// goroutine splitting 9 MB of YAML (10,000 HTTPRoutes and their
	// Services) took 20-45 ms while the other cores waited.
	type split struct {
		chunks  []chunk
		problem *Problem
	}
	splits := make([]split, len(inputs))
	parallel(len(inputs), func(i int) {
		in := &inputs[i]
		data := in.data
		in.data = nil // the chunks hold it now
		if in.problem != nil {
			splits[i].problem = in.problem
			return
		}
		data, p := checkContent(in.path, data)
		if p != nil {
			splits[i].problem = p
			return
		}
		chunks, docs := splitDocumentsAtMost(data, MaxFileDocuments)
		if chunks == nil {
			splits[i].problem = tooManyDocuments(in.path, docs)
			return
		}
		kept := chunks[:0]
		for _, c := range chunks {
			if !blankDocument(c.data) {
				kept = append(kept, c)
			}
		}
		splits[i].chunks = kept
	})
	docs := 0
	for _, sp := range splits {
		docs += len(sp.chunks)
	}
	jobs := make([]job, 0, docs)
	for i, sp := range splits {
		if sp.problem != nil {
			problems = append(problems, *sp.problem)
			continue
		}
		for _, c := range sp.chunks {
			jobs = append(jobs, job{file: inputs[i].path, chunk: c})
		}
		splits[i] = split{}
	}
	batch := len(jobs)
	if l.Collect != nil && len(jobs) > compactBatchDocs {
		batch = collectBatch(len(jobs))
	}
	// Results are kept for one batch at a time, each batch's objects
	// gathered into a slice of their own: a result for every document of
	// the load (72 bytes each, most of them for documents that load one
	// object or nothing) was a third of the load's heap for 1,000,000
	// documents.
	var (
		results = make([]docResult, min(batch, len(jobs)))
		parts   [][]loaded
		n       int
		skipped []Skipped
	)
	// Each worker shares ports and scalars among the objects it copies
	// (compact.go): a value is then held once per worker, not once.
	workers := workersFor(batch)
	ports := make([]sharedPorts, workers)
	scalars := make([]sharedScalars, workers)
	// Each worker reuses the maps of the objects it loaded (mapfree.go),
	// for this load only: lists kept with the worker's scratch outlived
	// the load (up to 1,024 maps each).
	free := make([]mapFreeList, workers)
	for lo := 0; lo < len(jobs); lo += batch {
		hi := min(lo+batch, len(jobs))
		parallelWorkers(hi-lo, func(w, i int) {
			var maps *mapFreeList
			if !l.noMapReuse {
				maps = &free[w]
			}
			results[i] = l.loadDocument(jobs[lo+i].file, jobs[lo+i].chunk, maps)
			// Nothing loaded keeps the text, so a file's bytes can go as
			// soon as its last document is loaded.
			jobs[lo+i].chunk.data = nil
		})
		if batch < len(jobs) {
			l.Collect()
			// The copies are made on every worker: one goroutine
			// copying while the others waited was a tenth of a large
			// load's wall time (10,000 HTTPRoutes: 8 batches of ~13 ms).
			parallelWorkers(hi-lo, func(w, i int) {
				compact(results[i].objs, &ports[w], &scalars[w])
			})
		}
		part := gatherBatch(results[:hi-lo], &problems, &skipped)
		n += len(part)
		parts = append(parts, part)
	}
	// One exact allocation, each batch's slice dropped as it is copied:
	// growing objs by appending held two or three copies of the records
	// (100+ bytes per object) at the end of the load.
	var objs []loaded
	switch len(parts) {
	case 0:
	case 1:
		objs = parts[0]
	default:
		objs = make([]loaded, 0, n)
		for i, part := range parts {
			objs = append(objs, part...)
			parts[i] = nil
		}
	}
	return collect(len(inputs), objs, problems, skipped)
}

// gatherBatch returns the objects of a batch's results in one exact slice,
// appends their problems and skipped objects, and clears the results.
func gatherBatch(results []docResult, problems *[]Problem, skipped *[]Skipped) []loaded {
	n := 0
	for _, r := range results {
		n += len(r.objs)
	}
	objs := make([]loaded, 0, n)
	for i := range results {
		r := &results[i]
		objs = append(objs, r.objs...)
		*problems = append(*problems, r.problems...)
		*skipped = append(*skipped, r.skipped...)
		*r = docResult{}
	}
	return objs
}

// parallel calls fn(0) … fn(n-1) on up to GOMAXPROCS goroutines.
func parallel(n int, fn func(i int)) { parallelWorkers(n, func(_, i int) { fn(i) }) }

// workersFor is how many goroutines parallel runs for n jobs (at least 1).
func workersFor(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }

// parallelWorkers is parallel telling fn which of its workersFor(n)
// workers runs it, from 0.
func parallelWorkers(n int, fn func(worker, i int)) {
	workers := workersFor(n)
	if workers <= 1 {
		for i := range n {
			fn(0, i)
		}
		return
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(w, i)
			}
		})
	}
	wg.Wait()
}

// bulkLoad calls BulkLoad, if set, and returns its done function (never
// nil).
func (l *Loader) bulkLoad() func() {
	if l.BulkLoad == nil {
		return func() {}
	}
	if done := l.BulkLoad(); done != nil {
		return done
	}
	return func() {}
}
