package watch

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"
)

// originAnnotation is the annotation kustomize writes on every object when
// a kustomization asks for buildMetadata: [originAnnotations]: the file
// (relative to the folder built) the object came from.
const originAnnotation = "config.kubernetes.io/origin"

// KustomizationFile returns the name of the kustomization file in dir
// (kustomization.yaml, kustomization.yml or Kustomization, as kustomize
// looks for them), or "" when dir holds none.
func KustomizationFile(dir string) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return name
		}
	}
	return ""
}

// kustomizeBuild is one `kubectl kustomize DIR`: the objects it built, or
// why it failed, and every file it read.
type kustomizeBuild struct {
	// dir is the folder built, as walked (root-joined).
	dir string
	// file is its kustomization file (dir joined with the name).
	file string
	// name is how sources and problems name the built output:
	// "kustomize build DIR".
	name string
	// data is the built YAML, one document per object (nil on failure).
	data []byte
	// docs are the built objects in data's order.
	docs []builtDoc
	// read maps every file the build read (absolute, cleaned) to its
	// content, nil for a file it looked for that was not there.
	read map[string][]byte
	// err is why the build failed (nil: it did not).
	err error
	// remote are the remote entries not fetched for want of consent
	// (kustomize_remote.go); the build failed when there is any.
	remote []remoteRef
	// consent is the user's consent the build was made with.
	consent Consent
}

// builtDoc is one object of a build's output.
type builtDoc struct {
	// line is the 1-based line of data where the object starts.
	line int
	// origin is the file the object came from (root-joined like dir), ""
	// when kustomize did not say (some generators).
	origin string
}

// kustomizeMu serialises builds: kustomize keeps process-wide state (the
// OpenAPI schema a kustomization may set) while it builds.
var kustomizeMu sync.Mutex

// buildKustomization builds dir the way `kubectl kustomize dir` does
// (kustomize/api's krusty with kubectl's defaults: loads restricted to the
// kustomization's folder tree, no plugins, no Helm), asking kustomize for
// origin annotations to place problems in the files objects came from.
// Without consent (consent.Given false) nothing remote is fetched
// (kustomize_remote.go).
func buildKustomization(dir, file string, consent Consent) *kustomizeBuild {
	b := &kustomizeBuild{dir: dir, file: file, name: "kustomize build " + dir, read: map[string][]byte{}, consent: consent}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		b.err = err
		return b
	}
	rfs := &recordingFS{FileSystem: filesys.MakeFsOnDisk(), read: b.read,
		root: filepath.Join(absDir, filepath.Base(file)), local: !consent.Given}
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified // kubectl kustomize's default: legacy order unless the kustomization sets one
	kustomizeMu.Lock()
	m, err := krusty.MakeKustomizer(opts).Run(rfs, absDir)
	kustomizeMu.Unlock()
	b.remote = rfs.remote
	if err != nil {
		b.err = err
		return b
	}
	var buf bytes.Buffer
	line := 1
	for _, r := range m.Resources() {
		doc := builtDoc{line: line}
		if o, err := r.GetOrigin(); err == nil && o != nil && o.Path != "" && o.Repo == "" {
			doc.origin = filepath.Join(dir, o.Path)
		}
		if !rfs.userOrigin {
			stripOrigin(r)
		}
		y, err := r.AsYAML()
		if err != nil {
			b.err = fmt.Errorf("writing %s: %w", r.CurId(), err)
			return b
		}
		if buf.Len() > 0 {
			buf.WriteString("---\n")
			line++
			doc.line = line
		}
		buf.Write(y)
		line += bytes.Count(y, []byte("\n"))
		b.docs = append(b.docs, doc)
	}
	b.data = buf.Bytes()
	return b
}

// stripOrigin removes the origin annotation gwdev asked for and the
// kustomization did not.
func stripOrigin(r *resource.Resource) {
	ann := r.GetAnnotations()
	if _, ok := ann[originAnnotation]; !ok {
		return
	}
	delete(ann, originAnnotation)
	_ = r.SetAnnotations(ann)
}

// recordingFS is the disk as kustomize sees it, remembering every file read
// (so that `up` watches them) and adding buildMetadata: [originAnnotations]
// to the kustomization built.
type recordingFS struct {
	filesys.FileSystem
	mu   sync.Mutex
	read map[string][]byte
	// root is the absolute path of the kustomization file built.
	root string
	// userOrigin is true when that kustomization asks for origin
	// annotations itself (then they stay in the objects, as in kubectl's
	// output).
	userOrigin bool
	// local refuses every kustomization and plugin configuration that
	// names a remote resource, recording its entries in remote
	// (kustomize_remote.go).
	local  bool
	remote []remoteRef
}

// ReadFile reads path from disk and records it.
func (f *recordingFS) ReadFile(path string) ([]byte, error) {
	data, err := f.FileSystem.ReadFile(path)
	abs := filepath.Clean(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		if _, ok := f.read[abs]; !ok {
			f.read[abs] = nil
		}
		return data, err
	}
	f.read[abs] = data
	if f.local {
		if refs := refuseRemote(abs, data); len(refs) > 0 {
			f.remote = append(f.remote, refs...)
			return nil, fmt.Errorf("%s names %d remote resource(s), not fetched without consent", path, len(refs))
		}
	}
	if abs == f.root {
		data = f.withOrigins(data)
	}
	return data, nil
}

// Exists records a file kustomize looked for and did not find (a missing
// kustomization file or resource), so that its creation rebuilds.
func (f *recordingFS) Exists(path string) bool {
	ok := f.FileSystem.Exists(path)
	if !ok {
		f.mu.Lock()
		if _, seen := f.read[filepath.Clean(path)]; !seen {
			f.read[filepath.Clean(path)] = nil
		}
		f.mu.Unlock()
	}
	return ok
}

// withOrigins adds originAnnotations to the kustomization's buildMetadata.
// Content that does not parse is returned as is: kustomize words the error.
func (f *recordingFS) withOrigins(data []byte) []byte {
	var k map[string]any
	if err := sigsyaml.Unmarshal(data, &k); err != nil || k == nil {
		return data
	}
	meta, _ := k["buildMetadata"].([]any)
	for _, m := range meta {
		if m == kustypes.OriginAnnotations {
			f.userOrigin = true
			return data
		}
	}
	k["buildMetadata"] = append(meta, kustypes.OriginAnnotations)
	out, err := sigsyaml.Marshal(k)
	if err != nil {
		return data
	}
	return out
}

// readFiles lists the files the build read or looked for, sorted.
func (b *kustomizeBuild) readFiles() []string {
	files := make([]string, 0, len(b.read))
	for p := range b.read {
		files = append(files, p)
	}
	sort.Strings(files)
	return files
}

// load loads the built objects and places them and their problems in the
// files they came from (placeBuilt). A failed build is one problem at the
// kustomization file.
func (l *Loader) loadKustomization(b *kustomizeBuild) collected {
	read := 0 // the files the build read
	for _, data := range b.read {
		if data != nil {
			read++
		}
	}
	if len(b.remote) > 0 {
		return collected{files: read, problems: remoteProblems(b, b.consent)}
	}
	if b.err != nil {
		return collected{files: read, problems: []Problem{{File: b.file, Message: "kustomize build failed: " + relErr(b.err, b.dir)}}}
	}
	c := l.loadFiles([]fileInput{{path: b.name, data: slices.Clone(b.data)}}, nil)
	c.files = read
	pl := newBuildPlacer(b)
	for i := range c.objs {
		pl.placeObject(&c.objs[i])
	}
	for i := range c.problems {
		pl.placeProblem(&c.problems[i])
	}
	for i := range c.skipped {
		if d := pl.doc(c.skipped[i].Line); d != nil && d.origin != "" {
			if od := pl.originDoc(d, c.skipped[i].Kind, c.skipped[i].Name); od != nil {
				c.skipped[i].File, c.skipped[i].Line = d.origin, od.line
			}
		}
	}
	sortProblems(c.problems)
	return c
}

// relErr words a kustomize error with the build's folder instead of its
// absolute path where kustomize printed one.
func relErr(err error, dir string) string {
	msg := err.Error()
	if filepath.IsAbs(dir) {
		return msg
	}
	// Paths under the working directory, as the folder was given.
	if wd, e := os.Getwd(); e == nil {
		msg = strings.ReplaceAll(msg, "'"+wd+string(filepath.Separator), "'")
		msg = strings.ReplaceAll(msg, " "+wd+string(filepath.Separator), " ")
	}
	return msg
}

// isKustomizationName reports whether a file's base name is one kustomize
// reads as a kustomization.
func isKustomizationName(name string) bool {
	return slices.Contains(konfig.RecognizedKustomizationFileNames(), name)
}

// usedBy drops the builds another build read (a base or component built
// as part of an overlay is not built again on its own), returning the
// kept ones.
func usedBy(builds []*kustomizeBuild) []*kustomizeBuild {
	var kept []*kustomizeBuild
	for _, b := range builds {
		abs, _ := filepath.Abs(b.file)
		used := false
		for _, o := range builds {
			if o != b {
				if data, ok := o.read[abs]; ok && data != nil {
					used = true
					break
				}
			}
		}
		if !used {
			kept = append(kept, b)
		}
	}
	return kept
}

// readByBuilds is the set of files (absolute) that builds read: they are
// the builds' inputs, not manifests of their own.
func readByBuilds(builds []*kustomizeBuild) map[string]bool {
	set := map[string]bool{}
	for _, b := range builds {
		for p, data := range b.read {
			if data != nil {
				set[p] = true
			}
		}
	}
	return set
}

// withoutInputs removes from files those a build or render reads.
func withoutInputs(files []manifestFile, inputs map[string]bool) []manifestFile {
	if len(inputs) == 0 {
		return files
	}
	return slices.DeleteFunc(files, func(f manifestFile) bool {
		abs, err := filepath.Abs(f.path)
		return err == nil && inputs[abs]
	})
}

// statStamp is what a rebuild compares: a file's size and time, or its
// absence.
type statStamp struct {
	exists bool
	size   int64
	mod    int64
}

func stampOf(path string) statStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return statStamp{}
	}
	return statStamp{exists: true, size: fi.Size(), mod: fi.ModTime().UnixNano()}
}

// stampTree stamps a file, or every file under a folder (dot entries
// skipped), for render inputs given as folders.
func stampTree(path string) map[string]statStamp {
	out := map[string]statStamp{}
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out[p] = statStamp{}
			return nil
		}
		if p != path && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			out[p] = stampOf(p)
		}
		return nil
	})
	if len(out) == 0 {
		out[path] = statStamp{}
	}
	return out
}
