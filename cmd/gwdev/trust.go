package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/trust"
	"github.com/gwdev/gwdev/watch"
)

// trustFlagUsage is --trust's help, the same on every command.
const trustFlagUsage = "this folder's gwdev.yaml may run its render: commands and its kustomizations may fetch remote resources (without it, only a trust record from gwdev trust DIR allows that)"

// addTrustFlag adds --trust to a command that loads a project.
func addTrustFlag(f *pflag.FlagSet, v *bool) {
	f.BoolVar(v, "trust", false, trustFlagUsage)
}

// trustOptions are the flags of `gwdev trust`.
type trustOptions struct {
	revoke, list bool
}

func newTrustCmd() *cobra.Command {
	o := &trustOptions{}
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Allow a folder's gwdev.yaml to run its render: commands and its kustomizations to fetch remote resources",
		Long: `trust records that you allow the folder DIR (default: the current directory) to make gwdev run
commands and reach the network: the render: commands of its gwdev.yaml run, and its
kustomizations may fetch remote resources (http(s) URLs and git repositories). Without that,
gwdev loads the rest of the folder and reports each command it did not run and each remote
resource it did not fetch as a problem.

Read the folder's gwdev.yaml and kustomizations first. The record is kept outside the folder
(in gwdev's folder of your configuration folder, or $GWDEV_CONFIG_DIR), keyed by the folder's
real path and the content of its gwdev.yaml: any change to gwdev.yaml (a git pull, a pull
request) withdraws the consent until you trust the folder again. A revision gwdev diff
compares with is never trusted by the record (pass --trust-revision to gwdev diff).

--revoke DIR removes the folder's record; --list lists the trusted folders.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) > 0 {
				dir = args[0]
			}
			return o.run(cmd.OutOrStdout(), dir, len(args) > 0)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.revoke, "revoke", false, "stop trusting DIR")
	f.BoolVar(&o.list, "list", false, "list the trusted folders and whether their gwdev.yaml changed since")
	return cmd
}

func (o *trustOptions) run(out io.Writer, dir string, dirGiven bool) error {
	if o.revoke && o.list {
		return errors.New("give --revoke or --list, not both")
	}
	store, err := trust.Open()
	if err != nil {
		return err
	}
	switch {
	case o.list:
		if dirGiven {
			return errors.New("--list lists every trusted folder: give no DIR")
		}
		return listTrusted(out, store)
	case o.revoke:
		removed, err := store.Revoke(dir)
		if err != nil {
			return err
		}
		if !removed {
			fmt.Fprintf(out, "gwdev: %s was not trusted\n", dir)
			return nil
		}
		fmt.Fprintf(out, "gwdev: %s is no longer trusted: its render: commands do not run and its kustomizations fetch nothing\n", dir)
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: not a folder", dir)
	}
	path, data, err := project.ReadConfigFile(dir)
	if err != nil {
		return err
	}
	var renders []watch.Render
	if path != "" {
		if renders, err = project.ConfigRenders(path, data); err != nil {
			return fmt.Errorf("not trusted: %w", err)
		}
	}
	folder, err := store.Grant(dir, data)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "gwdev: trusted %s (%s until it changes)\n", folder.Dir, configLabel(path, folder.ConfigSum))
	for _, r := range renders {
		fmt.Fprintf(out, "  runs: %s\n", r.Command)
	}
	fmt.Fprintln(out, "  its kustomizations may fetch remote resources")
	return nil
}

// configLabel names the gwdev.yaml a consent is tied to.
func configLabel(path, sum string) string {
	if path == "" {
		return "no gwdev.yaml, " + sum
	}
	return path + " " + sum
}

// listTrusted prints the trusted folders, saying whether each one's
// gwdev.yaml still is the one trusted.
func listTrusted(out io.Writer, store *trust.Store) error {
	folders, err := store.List()
	if err != nil {
		return err
	}
	if len(folders) == 0 {
		fmt.Fprintf(out, "gwdev: no trusted folder (%s)\n", store.Path())
		return nil
	}
	for _, f := range folders {
		state := "gwdev.yaml as trusted"
		if _, err := os.Stat(f.Dir); err != nil {
			state = "the folder is gone"
		} else if _, data, err := project.ReadConfigFile(f.Dir); err != nil {
			state = err.Error()
		} else if trust.ConfigSum(data) != f.ConfigSum {
			state = "gwdev.yaml changed since: not trusted until gwdev trust again"
		}
		fmt.Fprintf(out, "%s\t%s\t%s\n", f.Dir, f.ConfigSum, state)
	}
	return nil
}
