package watch

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// sourceState is what the watcher keeps about a kustomize build or a render
// command: what it read, to know when to run it again.
type sourceState struct {
	// build is the last build of a kustomization (nil for a render).
	build *kustomizeBuild
	// render is the command (nil for a build).
	render *Render
	// stamps are the inputs as they were when last built or run.
	stamps map[string]statStamp
	// warnings are the last run's (a render's stderr).
	warnings []Warning
}

// stale reports whether an input changed since the last run: an event
// named it, or its size, time or existence differ.
func (s *sourceState) stale(touched map[string]bool) bool {
	for p, st := range s.stamps {
		if touched[p] || stampOf(p) != st {
			return true
		}
	}
	return false
}

// stampsOf stamps the files a build read.
func stampsOf(read map[string][]byte) map[string]statStamp {
	out := make(map[string]statStamp, len(read))
	for p := range read {
		out[p] = stampOf(p)
	}
	return out
}

// SetRenders replaces the render commands (gwdev.yaml changed): new and
// changed commands run, and the outputs of removed ones are dropped.
func (w *Watcher) SetRenders(rs []Render) {
	select {
	case <-w.renderSet:
	default:
	}
	w.renderSet <- slices.Clone(rs)
}

// rescanSources builds the kustomizations the walk found and runs the
// render commands, each again only when one of its inputs changed (or the
// root came back), recording their outputs in w.files under their names.
// It marks them present and returns the names whose output changed. w.mu
// is held.
func (w *Watcher) rescanSources(kusts []kustomizationDir, touched map[string]bool, root RootEvent, present map[string]bool) []string {
	var changed []string
	touchedAbs := map[string]bool{}
	for p := range touched {
		if abs, err := filepath.Abs(p); err == nil {
			touchedAbs[abs] = true
		}
	}
	var builds []*kustomizeBuild
	rebuilt := map[*kustomizeBuild]bool{}
	builtDirs := map[string]*sourceState{}
	for _, k := range kusts {
		if old := w.builds[k.dir]; old != nil && old.build.file == k.file && root != RootBack && !old.stale(touchedAbs) {
			builds = append(builds, old.build)
			builtDirs[k.dir] = old
			continue
		}
		b := buildKustomization(k.dir, k.file, w.remote)
		rebuilt[b] = true
		builds = append(builds, b)
		builtDirs[k.dir] = &sourceState{build: b, stamps: stampsOf(b.read)}
	}
	w.builds = builtDirs
	for _, b := range usedBy(builds) {
		present[b.name] = true
		if !rebuilt[b] && w.files[b.name] != nil {
			continue
		}
		wf := mergeFile(w.files[b.name], w.loader.loadKustomization(b), 0, time.Time{})
		wf.source = builtDirs[b.dir]
		w.files[b.name] = wf
		changed = append(changed, b.name)
	}
	for _, r := range w.renders {
		name := r.Name()
		present[name] = true
		old := w.files[name]
		if old != nil && old.source != nil && root != RootBack && !old.source.renderStale(r, touchedAbs) {
			continue
		}
		rr := r.run(w.ctx)
		c, warnings := w.loader.loadRender(rr)
		c.files = 1
		wf := mergeFile(old, c, 0, time.Time{})
		wf.source = &sourceState{render: &rr.render, stamps: rr.stamps, warnings: warnings}
		w.files[name] = wf
		changed = append(changed, name)
	}
	w.watchInputs()
	return changed
}

// renderStale reports whether a render must run again: its command or
// watch list changed, an event named a file under what it watches, or a
// watched file changed, appeared or went.
func (s *sourceState) renderStale(r Render, touched map[string]bool) bool {
	if s.render == nil || s.render.Command != r.Command || s.render.Dir != r.Dir || !slices.Equal(s.render.Watch, r.Watch) || s.render.Consent != r.Consent {
		return true
	}
	for p := range touched {
		for _, wp := range r.watchPaths() {
			if p == wp || within(p, wp) {
				return true
			}
		}
	}
	return !maps.Equal(s.stamps, r.stamps())
}

// inputs is the set of files (absolute) that builds and renders read:
// they are not loaded as manifests.
func (w *Watcher) inputs() map[string]bool {
	set := map[string]bool{}
	for _, s := range w.builds {
		for p, data := range s.build.read {
			if data != nil {
				set[p] = true
			}
		}
	}
	for _, f := range w.files {
		if f.source != nil && f.source.render != nil {
			for p := range f.source.stamps {
				set[p] = true
			}
		}
	}
	return set
}

// watchInputs watches the folders of inputs outside the root (a base in
// ../base, a chart elsewhere), so that saving them runs the build again.
func (w *Watcher) watchInputs() {
	add := func(dir string) {
		if dir == w.abs || within(dir, w.abs) || w.linkDirs[dir] {
			return
		}
		if w.fsw.Add(dir) == nil {
			w.linkDirs[dir] = true
		}
	}
	for _, s := range w.builds {
		for p := range s.build.read {
			add(filepath.Dir(p))
		}
	}
	for _, r := range w.renders {
		for _, p := range r.watchPaths() {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				add(p)
			}
			for f := range stampTree(p) {
				add(filepath.Dir(f))
			}
		}
	}
}
