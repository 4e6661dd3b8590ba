package main

import (
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// Shell completion of flag values and positional arguments (`gwdev
// completion bash|zsh|fish|powershell` writes cobra's script; the shell
// calls `gwdev __complete CMD ARGS… PREFIX`, answered here).

// outputFormats are the values each command's -o/--output or --format
// accepts, by command name and flag name: the closed sets its run
// validates (TestCompletedFormatsAreAccepted runs every one).
var outputFormats = map[string]map[string][]string{
	"check":   {"output": checkOutputs, "format": checkOutputs},
	"explain": {"output": explainOutputs},
	"graph":   {"format": graphFormats},
	"diff":    {"format": diffFormats},
	// migrate's -o is a file
	"migrate": {"format": report.MigrationFormats},
	"test":    {"format": report.RoutingTestFormats},
}

// formatList renders a set of values as help and errors name them:
// "text, github or json".
func formatList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// dirArgs says, for the commands that take a folder as a positional
// argument, how many positional arguments they take at most.
var dirArgs = map[string]int{"check": 1, "up": 1, "certs": 1, "graph": 1, "trust": 1, "migrate": 1, "pull": 1}

// registerCompletions adds value completion to every flag of cmd and its
// subcommands that has a closed or discoverable set of values, and folder
// completion to the positional DIR.
func registerCompletions(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		registerCompletions(c)
	}
	name := cmd.Name()
	f := cmd.Flags()
	register := func(flag string, fn cobra.CompletionFunc) {
		if f.Lookup(flag) != nil {
			// Only fails on an unknown or already registered flag,
			// both checked.
			_ = cmd.RegisterFlagCompletionFunc(flag, fn)
		}
	}
	for flag, values := range outputFormats[name] {
		register(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	register("crds", completeCRDs)
	register("profile", completeProfiles)
	register("context", completeContexts)
	register("dir", completeDirs)
	register("ca-dir", completeDirs)
	if max, ok := dirArgs[name]; ok && cmd.ValidArgsFunction == nil {
		cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) >= max {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveFilterDirs
		}
	}
	if name == "explain" {
		// explain [DIR] URL: the first argument may be the folder.
		cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return nil, cobra.ShellCompDirectiveFilterDirs
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
}

// completeDirs completes folders (the shell lists them, samples/… among
// them).
func completeDirs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// completeCRDs offers the embedded CRD bundles --crds takes by name (the
// list `gwdev crds list` prints); a value that names none of them is a
// file, which the shell completes.
func completeCRDs(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, n := range watch.CRDBundleNames() {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeProfiles completes --profile CLASS=PROFILE: before the "=", the
// GatewayClass names registered profiles are chosen for by default; after
// it, every registered profile.
func completeProfiles(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	class, _, hasEq := strings.Cut(toComplete, "=")
	if !hasEq {
		var out []cobra.Completion
		for _, c := range slices.Sorted(maps.Keys(engine.ProfileClasses())) {
			out = append(out, c+"=")
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	var out []cobra.Completion
	for _, p := range engine.ProfileNames() {
		out = append(out, class+"="+p)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeContexts lists the contexts of the kubeconfig the command would
// read: --kubeconfig, else $KUBECONFIG, else ~/.kube/config (client-go's
// loading rules, as watch.ReadCluster uses them).
func completeContexts(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f := cmd.Flags().Lookup("kubeconfig"); f != nil && f.Value.String() != "" {
		rules.ExplicitPath = f.Value.String()
	}
	cfg, err := rules.Load()
	if err != nil {
		// Not the error itself: a kubeconfig's parse error may quote its
		// credentials (watch redacts them where it reports one).
		cobra.CompErrorln("reading kubeconfig failed: gwdev check --cluster says why")
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return slices.Sorted(maps.Keys(cfg.Contexts)), cobra.ShellCompDirectiveNoFileComp
}
