package main

import (
	"fmt"
	"io"

	"github.com/gwdev/gwdev/watch"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

// profileFlagUsage documents --profile.
const profileFlagUsage = "use an implementation profile for a GatewayClass: CLASS=PROFILE (repeatable; profiles: generic, gwin; gwin-default is gwin by default)"

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
