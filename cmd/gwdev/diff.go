package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/spf13/cobra"
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

// diffFormats are the formats diff's --format takes (report.WriteDiff's).
var diffFormats = []string{"text", "github", "sarif", "json"}

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
	f.StringVar(&o.format, "format", "text", "output format: "+formatList(diffFormats))
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	f.BoolVar(&o.trustRevision, "trust-revision", false, "the compared revision's gwdev.yaml may run its render: commands and its kustomizations may fetch remote resources (a trust record never applies to a revision)")
	return cmd
}

func (o *diffOptions) run(out, errOut io.Writer, args []string) error {
	if !slices.Contains(diffFormats, o.format) {
		return fmt.Errorf("unknown format %q (want %s)", o.format, formatList(diffFormats))
	}
	base, dir := app.SplitDiffArgs(args)
	rep, err := app.Diff(app.DiffArgs{Base: base, Dir: dir, Flags: project.Flags{Profiles: o.profiles, CRDs: o.crds, Trust: o.trust},
		TrustRevision: o.trustRevision,
		Note:          func(l string) { fmt.Fprintf(errOut, "gwdev diff: %s\n", l) }})
	if err != nil {
		return err
	}
	if err := report.WriteDiff(out, o.format, *rep, buildVersion().Version); err != nil {
		return err
	}
	if rep.Worse > 0 {
		return exitError{exitProblems}
	}
	return nil
}
