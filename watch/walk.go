package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// manifestFile is a file found by the walk.
type manifestFile struct {
	path string
	size int64
	mod  time.Time // modification time, for the watcher
}

// IsManifestName reports whether a file of this base name is loaded when it
// is found in a directory: *.yaml, *.yml and *.json files that are neither
// dotfiles nor editor temporary files. The fsnotify watcher uses it to
// ignore irrelevant events.
func IsManifestName(name string) bool {
	if skipName(name) {
		return false
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// skipName reports whether a directory entry is never looked at: dotfiles,
// dot-directories, editor temporary files, gwdev.yaml and routing tests.
func skipName(name string) bool {
	switch {
	case strings.HasPrefix(name, "."): // dotfiles, .git, emacs lock files .#x
		return true
	case strings.HasSuffix(name, "~"): // emacs, gedit backups
		return true
	case strings.HasSuffix(name, ".swp"), strings.HasSuffix(name, ".swx"): // vim swap files
		return true
	case strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"): // emacs autosave
		return true
	case name == "4913": // vim's write test file
		return true
	case name == "gwdev.yaml", name == "gwdev.yml": // gwdev's project settings, not a manifest
		return true
	case IsRoutingTestName(name): // gwdev test's cases, not manifests
		return true
	}
	return false
}

// IsRoutingTestName reports whether a file of this base name holds routing
// tests (`gwdev test`): *.gwtest.yaml or *.gwtest.yml, any case. They sit
// beside the manifests and are never loaded as manifests.
func IsRoutingTestName(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".gwtest.yaml") || strings.HasSuffix(n, ".gwtest.yml")
}

// walker finds manifest files under a directory without following symlinked
// directories into loops and without reading the same file twice.
type walker struct {
	files []manifestFile
	// kustomize says whether folders with a kustomization file are built
	// (kusts) instead of walked.
	kustomize bool
	kusts     []kustomizationDir
	// charts are folders holding a Helm chart (Chart.yaml): templates,
	// not manifests, never walked.
	charts   []string
	problems []Problem
	warnings []Warning
	seen     map[fileID]bool // directories and files already visited
	// realRoot is the root with symlinks resolved, to tell symlinks that
	// lead out of it.
	realRoot string
}

// kustomizationDir is a folder the walk found holding a kustomization
// file, built instead of read file by file (kustomize.go).
type kustomizationDir struct {
	dir, file string
}

// walkResult is what a walk found.
type walkResult struct {
	files    []manifestFile
	problems []Problem
	warnings []Warning
	kusts    []kustomizationDir
	charts   []string
}

// findManifests lists the manifest files under root (or root itself when it
// is a file), in lexical order, with problems for what could not be read
// and a warning for each symlink followed out of root. With kustomize, a
// folder holding a kustomization file (root included, or root being that
// file) is listed in kusts and not walked.
func findManifests(root string, kustomize bool) walkResult {
	fi, err := os.Stat(root)
	if err != nil {
		return walkResult{problems: []Problem{{File: root, Message: describeStatError(err), Kind: statErrorKind(err)}}}
	}
	if !fi.IsDir() {
		if kustomize && isKustomizationName(filepath.Base(root)) {
			return walkResult{kusts: []kustomizationDir{{dir: filepath.Dir(root), file: root}}}
		}
		return walkResult{files: []manifestFile{{path: root, size: fi.Size(), mod: fi.ModTime()}}}
	}
	w := &walker{seen: map[fileID]bool{}, realRoot: realPath(root), kustomize: kustomize}
	w.walkDir(root, fi, map[fileID]string{})
	return walkResult{files: w.files, problems: w.problems, warnings: w.warnings, kusts: w.kusts, charts: w.charts}
}

// realPath resolves symlinks in path, falling back to the absolute path.
func realPath(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// leavesRoot returns a warning when the symlink at path leads out of the
// walked folder: gwdev follows it, but never silently.
func (w *walker) leavesRoot(path string) *Warning {
	target := realPath(path)
	if target == w.realRoot || within(target, w.realRoot) {
		return nil
	}
	return &Warning{File: path, Target: target,
		Message: fmt.Sprintf("symlink to %s, outside the folder: followed", target)}
}

// walkDir visits dir; ancestors maps the directories on the path from the
// root (by identity) to their paths, to detect symlinks pointing back up.
func (w *walker) walkDir(dir string, fi os.FileInfo, ancestors map[fileID]string) {
	id, hasID := idOf(fi)
	if hasID {
		w.seen[id] = true
		ancestors[id] = dir
		defer delete(ancestors, id)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.problems = append(w.problems, Problem{File: dir, Message: fmt.Sprintf("reading directory: %v", unwrapPathError(err)), Kind: ProblemUnreadable})
		return
	}
	if fi, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil && fi.Mode().IsRegular() {
		w.charts = append(w.charts, dir)
		return
	}
	if w.kustomize {
		if name := KustomizationFile(dir); name != "" {
			w.kusts = append(w.kusts, kustomizationDir{dir: dir, file: filepath.Join(dir, name)})
			return
		}
	}
	for _, e := range entries {
		name := e.Name()
		if skipName(name) {
			continue
		}
		path := filepath.Join(dir, name)
		info, err := e.Info()
		if err != nil {
			continue // removed while walking
		}
		var outside *Warning
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Stat(path)
			if err != nil {
				if errors.Is(err, syscall.ELOOP) {
					w.problems = append(w.problems, Problem{File: path, Message: "symlink loop: too many levels of symbolic links; not followed", Kind: ProblemSymlink})
				} else if IsManifestName(name) {
					w.problems = append(w.problems, Problem{File: path, Message: "broken symlink: " + describeStatError(err), Kind: ProblemSymlink})
				}
				continue
			}
			info = target
			outside = w.leavesRoot(path)
		}
		switch {
		case info.IsDir():
			if id, ok := idOf(info); ok {
				if up, loop := ancestors[id]; loop {
					w.problems = append(w.problems, Problem{File: path, Message: fmt.Sprintf("symlink loop: %s points back to %s; not followed", path, up), Kind: ProblemSymlink})
					continue
				}
				if w.seen[id] {
					continue // reached through another symlink already
				}
			}
			w.warn(outside)
			w.walkDir(path, info, ancestors)
		case info.Mode().IsRegular() && IsManifestName(name):
			if id, ok := idOf(info); ok {
				if w.seen[id] {
					continue // the same file through a symlink
				}
				w.seen[id] = true
			}
			w.warn(outside)
			w.files = append(w.files, manifestFile{path: path, size: info.Size(), mod: info.ModTime()})
		}
	}
}

// warn records a warning, if any.
func (w *walker) warn(wr *Warning) {
	if wr != nil {
		w.warnings = append(w.warnings, *wr)
	}
}

// describeStatError words an os.Stat error without repeating the path.
func describeStatError(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, syscall.ELOOP):
		return "symlink loop: too many levels of symbolic links"
	}
	return unwrapPathError(err).Error()
}

// statErrorKind is the ProblemKind of a stat error: a symlink loop is
// ProblemSymlink, others have none.
func statErrorKind(err error) ProblemKind {
	if errors.Is(err, syscall.ELOOP) {
		return ProblemSymlink
	}
	return ""
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
