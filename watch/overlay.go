package watch

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Overlay holds files' contents that take the place of what is on disk:
// the unsaved text of an editor's open buffers (`gwdev lsp`). A Watcher
// given one (WatchOptions.Overlay) reads a file's overlaid content instead
// of the file, loads an overlaid file under its root that is not on disk
// yet, and reloads a file when its overlay is set or dropped, debounced as
// file events are. Nothing is ever written to disk. An Overlay is safe for
// concurrent use; the zero value is not usable (NewOverlay).
type Overlay struct {
	mu    sync.Mutex
	files map[string][]byte
	// touched are the paths set or dropped since the watcher last took
	// them; changed has a value when touched is not empty.
	touched map[string]bool
	changed chan struct{}
}

// NewOverlay returns an empty Overlay.
func NewOverlay() *Overlay {
	return &Overlay{files: map[string][]byte{}, touched: map[string]bool{}, changed: make(chan struct{}, 1)}
}

// Set makes data the content of the file at path (an absolute path, or the
// path as the watched root's walk names it). The Overlay keeps data: the
// caller must not modify it afterwards.
func (o *Overlay) Set(path string, data []byte) {
	path = filepath.Clean(path)
	o.mu.Lock()
	o.files[path] = data
	o.touch(path)
	o.mu.Unlock()
}

// Drop lets the file at path be read from disk again.
func (o *Overlay) Drop(path string) {
	path = filepath.Clean(path)
	o.mu.Lock()
	if _, ok := o.files[path]; ok {
		delete(o.files, path)
		o.touch(path)
	}
	o.mu.Unlock()
}

// touch records a change of path; o.mu is held.
func (o *Overlay) touch(path string) {
	o.touched[path] = true
	select {
	case o.changed <- struct{}{}:
	default:
	}
}

// content returns the overlaid content of path (ok false: none).
func (o *Overlay) content(path string) (data []byte, ok bool) {
	if o == nil {
		return nil, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	data, ok = o.files[filepath.Clean(path)]
	return data, ok
}

// take returns the paths set or dropped since the last take.
func (o *Overlay) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	paths := make([]string, 0, len(o.touched))
	for p := range o.touched {
		paths = append(paths, p)
	}
	clear(o.touched)
	slices.Sort(paths)
	return paths
}

// unwalked returns the overlaid paths under root with a manifest's name
// that are neither among walked (the files the walk found, inputs left
// out) nor read by a kustomization or render command (inputs, absolute
// paths): buffers not saved yet.
func (o *Overlay) unwalked(root string, walked []manifestFile, inputs map[string]bool) []manifestFile {
	if o == nil {
		return nil
	}
	have := make(map[string]bool, len(walked))
	for _, f := range walked {
		have[filepath.Clean(f.path)] = true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []manifestFile
	for p, data := range o.files {
		abs, _ := filepath.Abs(p)
		if have[p] || inputs[abs] || !IsManifestName(filepath.Base(p)) || !within(p, filepath.Clean(root)) {
			continue
		}
		out = append(out, manifestFile{path: p, size: int64(len(data))})
	}
	slices.SortFunc(out, func(a, b manifestFile) int { return strings.Compare(a.path, b.path) })
	return out
}

// changes delivers a value when paths were set or dropped (nil: no
// overlay, never).
func (o *Overlay) changes() <-chan struct{} {
	if o == nil {
		return nil
	}
	return o.changed
}

// read reads a file found by the walk, or its overlaid content.
func (o *Overlay) read(f manifestFile) ([]byte, *Problem) {
	if data, ok := o.content(f.path); ok {
		return data, nil // the loader checks the size of the content (checkContent)
	}
	return readManifest(f)
}
