package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
)

// mainBranches are tried in order to find the default BASE.
var mainBranches = []string{"main", "master", "origin/main", "origin/master"}

// DiffArgs says what `gwdev diff` compares: BASE ("": the merge base with
// the main branch) and DIR, read with Flags (both sides judged against the
// same CRDs).
type DiffArgs struct {
	Base, Dir string
	Flags     project.Flags
	// TrustRevision is --trust-revision: BASE's render: commands run and
	// its kustomizations fetch remote resources (the trust record never
	// applies to a revision).
	TrustRevision bool
	// Note is told, as they are found, of the files of BASE's tree left out
	// of the comparison (nil: not told).
	Note func(string)
}

// SplitDiffArgs reads diff's positional arguments: [BASE] [DIR]. With one
// argument, it is DIR when it is a folder git does not know as a revision,
// else BASE.
func SplitDiffArgs(args []string) (base, dir string) {
	base, dir = "", "."
	switch len(args) {
	case 2:
		base, dir = args[0], args[1]
	case 1:
		if st, err := os.Stat(args[0]); err == nil && st.IsDir() && !isRevision(".", args[0]) {
			dir = args[0]
		} else {
			base = args[0]
		}
	}
	return base, dir
}

// Diff translates DIR as it is at BASE (extracted from git into a
// temporary folder) and in the working tree and compares the two.
func Diff(a DiffArgs) (*report.DiffReport, error) {
	base, dir := a.Base, a.Dir
	repo, err := openRepo(dir)
	if err != nil {
		return nil, err
	}
	// Loaded by absolute path, the two trees name their files the same way
	// once the tree's own folder is cut off (see newStatusView).
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	baseRef := base
	if base == "" {
		base, baseRef, err = repo.mainMergeBase()
		if err != nil {
			return nil, err
		}
	}
	commit, err := repo.git("rev-parse", "--verify", "--quiet", base+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("BASE %q is not a git revision", base)
	}
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	// Both sides are judged against the same CRDs: --crds, else the
	// working tree's gwdev.yaml crds:.
	head, err := project.Open([]string{absDir}, a.Flags)
	if err != nil {
		return nil, err
	}
	headLR, headRes, err := head.LoadAndTranslate(now)
	if err != nil {
		return nil, err
	}
	headView := newStatusView(headLR, headRes, repo.pathMapper(absDir))

	tmp, err := os.MkdirTemp("", "gwdev-diff-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	baseDir, left, err := repo.extract(commit, tmp)
	if err != nil {
		return nil, err
	}
	for _, l := range left {
		if a.Note != nil {
			a.Note(fmt.Sprintf("at %s, %s", base, l))
		}
	}
	baseView := &statusView{}
	if baseDir != "" {
		baseProj, err := head.Sibling(baseDir, a.TrustRevision)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", base, err)
		}
		baseLR, baseRes, err := baseProj.LoadAndTranslate(now)
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", base, err)
		}
		baseView = newStatusView(baseLR, baseRes, repo.pathMapper(baseDir))
	}
	rep := &report.DiffReport{Base: commit, BaseRef: baseRef, Dir: dir, Changes: compareViews(baseView, headView)}
	for _, d := range rep.Changes {
		if d.Worse {
			rep.Worse++
		}
		if d.Better {
			rep.Better++
		}
	}
	return rep, nil
}

// gitRepo is the repository DIR belongs to.
type gitRepo struct {
	// root is the work tree's top directory; prefix is DIR relative to it
	// ("" for the top, else slash-separated with a trailing slash).
	root, prefix string
}

func openRepo(dir string) (*gitRepo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("gwdev diff needs git on PATH")
	}
	r := &gitRepo{root: dir}
	top, err := r.git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not in a git work tree: %w", dir, err)
	}
	prefix, err := r.git("rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	return &gitRepo{root: top, prefix: prefix}, nil
}

// git runs git in the repository and returns its trimmed output.
func (r *gitRepo) git(args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("git", append([]string{"-C", r.root}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

func isRevision(dir, rev string) bool {
	r := &gitRepo{root: dir}
	_, err := r.git("rev-parse", "--verify", "--quiet", rev+"^{commit}")
	return err == nil
}

// mainMergeBase returns the merge base of HEAD with the first main branch
// that exists, and a description of it.
func (r *gitRepo) mainMergeBase() (string, string, error) {
	for _, b := range mainBranches {
		if _, err := r.git("rev-parse", "--verify", "--quiet", b+"^{commit}"); err != nil {
			continue
		}
		mb, err := r.git("merge-base", "HEAD", b)
		if err != nil {
			return "", "", err
		}
		return mb, "merge base with " + b, nil
	}
	return "", "", fmt.Errorf("no branch %s: give BASE (a branch, tag or commit)", strings.Join(mainBranches, ", "))
}

// pathMapper returns how to show the paths of a tree loaded from dir: as
// repository paths (repoPath), in file names and inside messages.
func (r *gitRepo) pathMapper(dir string) pathMapper {
	return pathMapper{file: func(p string) string { return r.repoPath(dir, p) },
		text: strings.NewReplacer(dir+string(filepath.Separator), r.prefix).Replace}
}

// pathMapper maps a loaded tree's paths to repository paths.
type pathMapper struct {
	file func(string) string
	text func(string) string
}

// repoPath turns a path the loader reported for a tree loaded from dir
// into the path relative to the repository root, slash-separated, as
// GitHub annotations want it.
func (r *gitRepo) repoPath(dir, p string) string {
	if p == "" {
		return ""
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(p)
	}
	return r.prefix + filepath.ToSlash(rel)
}

// ExtractTree writes the tree of dir (a folder in a git work tree) at
// commit into the folder into, as `gwdev diff` reads BASE: it returns the
// folder holding dir's files ("": dir did not exist at commit) and, worded,
// the entries left out (symlinks out of the tree, names taken twice).
func ExtractTree(dir, commit, into string) (string, []string, error) {
	r, err := openRepo(dir)
	if err != nil {
		return "", nil, err
	}
	return r.extract(commit, into)
}
