package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gwdev/gwdev/internal/trust"
	"github.com/gwdev/gwdev/watch"
)

// A folder can ask gwdev to run commands (gwdev.yaml's render:) and to
// fetch from the network (a kustomization's remote resources). gwdev does
// either only with the user's consent for that folder, as direnv loads a
// folder's .envrc only once allowed: --trust on the command line (CI on a
// trusted branch), or a trust record written by `gwdev trust DIR`, kept
// outside the folder (internal/trust) and tied to its gwdev.yaml's content.
// A revision `gwdev diff` extracts is never trusted by the record, only by
// --trust-revision.

// trustFlagUsage is --trust's help, the same on every command.
const trustFlagUsage = "this folder's gwdev.yaml may run its render: commands and its kustomizations may fetch remote resources (without it, only a trust record from gwdev trust DIR allows that)"

// addTrustFlag adds --trust to a command that loads a project.
func addTrustFlag(f *pflag.FlagSet, v *bool) {
	f.BoolVar(v, "trust", false, trustFlagUsage)
}

// consentSource is where a project's consent comes from.
type consentSource struct {
	// flag is --trust (or, for a diff revision, --trust-revision).
	flag bool
	// flagName names the flag in hints ("": --trust).
	flagName string
	// record says the trust record applies (false: a folder gwdev made,
	// such as a diff revision, which only the flag trusts).
	record bool
}

// of is the consent for the folder dir ("": no folder, the flag alone)
// whose gwdev.yaml holds config: given by the flag, or by a trust record
// of this folder with this gwdev.yaml. Otherwise its hint says how to give
// it; a record that cannot be read trusts nothing, and the hint says why.
func (s consentSource) of(dir string, config []byte) watch.Consent {
	flag := s.flagName
	if flag == "" {
		flag = "--trust"
	}
	if s.flag {
		return watch.Consent{Given: true}
	}
	if !s.record || dir == "" {
		return watch.Consent{Hint: "pass " + flag}
	}
	hint := fmt.Sprintf("read the folder's gwdev.yaml and kustomizations, then run `gwdev trust %s` (or pass %s)", shellWord(dir), flag)
	store, err := trust.Open()
	if err != nil {
		return watch.Consent{Hint: hint + "; " + err.Error()}
	}
	ok, err := store.Trusted(dir, config)
	if err != nil {
		return watch.Consent{Hint: hint + "; " + err.Error()}
	}
	return watch.Consent{Given: ok, Hint: hint}
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '~' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
	path, data, err := readConfigFile(dir)
	if err != nil {
		return err
	}
	var renders []watch.Render
	if path != "" {
		cfg, err := parseProjectConfig(path, data)
		if err != nil {
			return fmt.Errorf("not trusted: %w", err)
		}
		renders = cfg.Renders
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
		} else if _, data, err := readConfigFile(f.Dir); err != nil {
			state = err.Error()
		} else if trust.ConfigSum(data) != f.ConfigSum {
			state = "gwdev.yaml changed since: not trusted until gwdev trust again"
		}
		fmt.Fprintf(out, "%s\t%s\t%s\n", f.Dir, f.ConfigSum, state)
	}
	return nil
}
