package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// crdsFlagUsage is the help of --crds, on every command that loads
// manifests.
const crdsFlagUsage = "judge manifests against these CRDs, as that cluster's API server would: an embedded bundle " +
	"(v1.5.1-standard, v1.6.3-experimental…; gwdev crds list) or a file of kubectl get crd -o yaml " +
	"(default: gwdev.yaml's crds:, else gwdev's own release, experimental channel, with a note for each object an older or standard cluster would not take)"

// addCRDsFlag registers --crds on a command's flags.
func addCRDsFlag(f *pflag.FlagSet, v *string) {
	f.StringVar(v, "crds", "", crdsFlagUsage)
}

// crdBundle resolves --crds (flag) or, without it, gwdev.yaml's crds: to
// the bundle to judge manifests against (nil: the newest experimental
// CRDs). A name of an embedded bundle wins over a file of that name.
func crdBundle(flag string, proj projectOptions) (*watch.CRDBundle, error) {
	v, where := flag, "--crds"
	if v == "" {
		v, where = proj.crds, proj.crdsWhere+": crds"
	}
	if v == "" {
		return nil, nil
	}
	if slices.Contains(watch.CRDBundleNames(), v) {
		return watch.EmbeddedCRDBundle(v)
	}
	data, err := os.ReadFile(v)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %q is neither an embedded bundle (%s) nor a file", where, v, strings.Join(watch.CRDBundleNames(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	b, err := watch.ReadCRDBundle(v, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return b, nil
}

// loaderCRDsName names the bundle a loader judges against, as --crds
// takes it.
func loaderCRDsName(l *watch.Loader) string {
	if b := l.CRDs(); b != nil {
		return b.Name
	}
	return watch.DefaultCRDBundleName()
}

// addChannelNotes adds the loader's channel notes (objects an older or
// standard-channel cluster would not take; only without --crds) to the
// result's findings as notes (severity info: check --strict does not fail
// on them), after the engine's own.
func addChannelNotes(res *engine.Result, lr *watch.LoadResult) {
	for _, n := range lr.Notes {
		res.Findings = append(res.Findings, engine.Finding{Severity: engine.SeverityInfo, Object: n.Object,
			Source: engine.Source{File: n.File, Line: n.Line}, Message: n.Message})
	}
}

func newCRDsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "crds",
		Short: "The Gateway API CRD bundles gwdev can judge manifests against (--crds)",
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the embedded CRD bundles, with the kinds and versions each serves",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printCRDBundles(cmd.OutOrStdout())
		},
	}
	cmd.AddCommand(list)
	return cmd
}

// printCRDBundles writes every embedded bundle and its kinds.
func printCRDBundles(out io.Writer) error {
	for _, name := range watch.CRDBundleNames() {
		b, err := watch.EmbeddedCRDBundle(name)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, name)
		for _, k := range b.Kinds() {
			fmt.Fprintln(out, "  "+k)
		}
	}
	fmt.Fprintf(out, "\nWithout --crds gwdev judges against %s (its own release) and notes what needs more than %s.\n",
		watch.DefaultCRDBundleName(), watch.CRDBundleNames()[0])
	return nil
}
