package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gwdev/gwdev/internal/report"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// diffOptions are the flags of `gwdev diff`.
type diffOptions struct {
	// trust is --trust (trust.go); trustRevision is --trust-revision: the
	// compared revision's render: commands run and its kustomizations fetch
	// remote resources (the trust record never applies to it).
	trust, trustRevision bool

	format   string
	profiles []string
	// crds is --crds (crds.go).
	crds string
	// dir is --dir ("" : DIR or the current directory).
	dir string
}

// mainBranches are tried in order to find the default BASE.
var mainBranches = []string{"main", "master", "origin/main", "origin/master"}

func newDiffCmd() *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff [BASE] [DIR]",
		Short: "Compare the computed status at a git revision with the working tree",
		Long: `diff translates the manifests under DIR (default: the current directory) twice, as they
are at the git revision BASE and as they are in the working tree, and lists what changed:
objects added and removed, conditions whose status or reason changed, gwdev's own
warnings (such as shadowed rules) that appeared or went away, files that stopped loading,
and routes that gained or lost traffic on a listener.

The revision's render: commands never run and its kustomizations fetch nothing remote unless
--trust-revision is given (a trust record never applies to it); the working tree's need --trust
or a trust record (gwdev trust DIR), as for every command.

BASE defaults to the merge base of HEAD with the main branch: the first of main, master,
origin/main and origin/master that exists. With one argument, it is BASE when git knows
it as a revision, else DIR.

Exit status: 1 when something got worse (a condition turned into a problem, a new warning
or error, a file that no longer loads, a route that lost traffic), 0 otherwise, 2 on
usage or git errors. --format github prints GitHub Actions annotations; sarif a SARIF
2.1.0 log for code scanning (docs/ci.md); json prints the list for other tools.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.dir != "" { // --dir: every argument is BASE
				if len(args) == 2 && args[1] != o.dir {
					return fmt.Errorf("two folders given: %s and --dir %s", args[1], o.dir)
				}
				base := "" // the default BASE
				if len(args) > 0 {
					base = args[0]
				}
				args = []string{base, o.dir}
			}
			return o.run(cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.dir, "dir", "d", "", "the folder of manifests (the same as giving DIR)")
	f.StringVar(&o.format, "format", "text", "output format: text, github, sarif or json")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	f.BoolVar(&o.trustRevision, "trust-revision", false, "the compared revision's gwdev.yaml may run its render: commands and its kustomizations may fetch remote resources (a trust record never applies to a revision)")
	return cmd
}

// diffReport is the JSON form of a diff.
type diffReport struct {
	// Base is the commit compared against; BaseRef how it was chosen.
	Base    string     `json:"base"`
	BaseRef string     `json:"baseRef"`
	Dir     string     `json:"dir"`
	Worse   int        `json:"worse"`
	Better  int        `json:"better"`
	Changes []diffItem `json:"changes"`
}

func (o *diffOptions) run(out, errOut io.Writer, args []string) error {
	switch o.format {
	case "text", "github", "sarif", "json":
	default:
		return fmt.Errorf("unknown format %q (want text, github, sarif or json)", o.format)
	}
	base, dir := "", "."
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
	repo, err := openRepo(dir)
	if err != nil {
		return err
	}
	// Loaded by absolute path, the two trees name their files the same way
	// once the tree's own folder is cut off (see newStatusView).
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	baseRef := base
	if base == "" {
		base, baseRef, err = repo.mainMergeBase()
		if err != nil {
			return err
		}
	}
	commit, err := repo.git("rev-parse", "--verify", "--quiet", base+"^{commit}")
	if err != nil {
		return fmt.Errorf("BASE %q is not a git revision", base)
	}
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	// Both sides are judged against the same CRDs: --crds, else the
	// working tree's gwdev.yaml crds:.
	head, err := openProject([]string{absDir}, projectFlags{profiles: o.profiles, crds: o.crds, trust: o.trust})
	if err != nil {
		return err
	}
	headLR, headRes, err := head.loadAndTranslate(now)
	if err != nil {
		return err
	}
	headView := newStatusView(headLR, headRes, repo.pathMapper(absDir))

	tmp, err := os.MkdirTemp("", "gwdev-diff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	baseDir, left, err := repo.extract(commit, tmp)
	if err != nil {
		return err
	}
	for _, l := range left {
		fmt.Fprintf(errOut, "gwdev diff: at %s, %s\n", base, l)
	}
	baseView := &statusView{}
	if baseDir != "" {
		baseProj, err := head.sibling(baseDir, o.trustRevision)
		if err != nil {
			return fmt.Errorf("at %s: %w", base, err)
		}
		baseLR, baseRes, err := baseProj.loadAndTranslate(now)
		if err != nil {
			return fmt.Errorf("at %s: %w", base, err)
		}
		baseView = newStatusView(baseLR, baseRes, repo.pathMapper(baseDir))
	}
	rep := diffReport{Base: commit, BaseRef: baseRef, Dir: dir, Changes: compareViews(baseView, headView)}
	for _, d := range rep.Changes {
		if d.Worse {
			rep.Worse++
		}
		if d.Better {
			rep.Better++
		}
	}
	switch o.format {
	case "json":
		err = printDiffJSON(out, rep)
	case "github":
		printDiffGitHub(out, rep)
	case "sarif":
		err = report.WriteSARIF(out, diffFindings(rep), buildVersion().Version)
	default:
		printDiffText(out, rep)
	}
	if err != nil {
		return err
	}
	if rep.Worse > 0 {
		return exitError{exitProblems}
	}
	return nil
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
