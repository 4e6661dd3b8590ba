package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
)

// checkOutputs are the formats check's -o/--output and --format take.
var checkOutputs = []string{"summary", "yaml", "json", "github", "sarif"}

// checkOptions are the flags of `gwdev check`.
type checkOptions struct {
	// trust is --trust (trust.go).
	trust bool

	output  string
	format  string
	files   []string
	classes []string
	strict  bool
	// kustomize builds folders holding a kustomization (--kustomize).
	kustomize bool
	// policies adds the Policies section to the summary.
	policies bool
	// now, when set (RFC 3339), replaces the clock in status (for tests).
	now string

	// profiles are --profile CLASS=PROFILE flags (profiles.go).
	profiles []string
	// crds is --crds (crds.go).
	crds string
	// clusterMode compares a cluster's status with the spec's
	// (check_cluster.go); cluster says which cluster.
	clusterMode bool
	cluster     clusterFlags
}

func newCheckCmd() *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [DIR]",
		Short: "Load and translate manifests once; print problems and computed status",
		Long: `check loads every manifest under DIR (default: the current directory), translates them
like a conformant controller and prints a summary, problems first, each with file:line.
With -o yaml|json it prints every loaded object with its computed status instead, and
the findings beside them (severity, code, object, parent, field, file, line, column,
message, hint): the List's "findings" in JSON, a last CheckFindings document in YAML.
--format github prints GitHub Actions annotations (::error file=…,line=…::…), --format
sarif a SARIF 2.1.0 log for code scanning (docs/ci.md).
A folder holding a kustomization.yaml is built as kubectl kustomize builds it; gwdev.yaml's
render: commands run once and their output is checked with the files, when you allowed the
folder to run them (--trust, or a trust record from gwdev trust DIR); otherwise each command
not run is a problem that says so.

With --cluster it reads the objects and the status their controller wrote from the cluster of
your kubeconfig (--context, -n or -A, as kubectl) and prints every condition where that status
and the spec's disagree.

Exit status: 0 when every object is accepted and resolved, 1 when any object has a
False condition or failed to load or when there is no manifest to check, 2 on usage
errors (a folder or file that does not exist among them). With --cluster: 1 when any condition
disagrees.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "summary", "output format: "+formatList(checkOutputs))
	f.StringVar(&o.format, "format", "", "the same as -o (github: workflow annotations; sarif: SARIF 2.1.0)")
	f.StringArrayVarP(&o.files, "filename", "f", nil, "manifest file or directory to read (repeatable; - reads stdin)")
	f.StringSliceVar(&o.classes, "class", nil, "manage only these GatewayClass names (default: every class the Gateways name)")
	f.BoolVar(&o.strict, "strict", false, "exit 1 on warnings too")
	f.BoolVar(&o.kustomize, "kustomize", true, "build a folder holding a kustomization.yaml as kubectl kustomize does (false: read its files one by one)")
	f.BoolVar(&o.policies, "policies", false, "list, for every object a policy targets, the policies that apply and those refused, and why")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	f.BoolVar(&o.clusterMode, "cluster", false, "read the objects and the status their controller wrote from the cluster of your kubeconfig, and print every condition where that status and the spec's disagree")
	o.cluster.add(f)
	f.StringVar(&o.now, "now", "", "use this RFC 3339 time as the current time (for reproducible output)")
	_ = f.MarkHidden("now")
	return cmd
}

func (o *checkOptions) run(cmd *cobra.Command, args []string) error {
	if o.format != "" {
		if o.output != "summary" && o.output != o.format {
			return fmt.Errorf("-o %s and --format %s disagree: give one", o.output, o.format)
		}
		o.output = o.format
	}
	if !slices.Contains(checkOutputs, o.output) {
		return fmt.Errorf("unknown output format %q (want %s)", o.output, formatList(checkOutputs))
	}
	if len(args) > 0 && len(o.files) > 0 {
		return fmt.Errorf("give either DIR or -f, not both")
	}
	sources := o.files
	if len(args) > 0 {
		sources = args
	}
	if len(sources) == 0 {
		sources = []string{"."}
	}
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	if o.now != "" {
		t, err := time.Parse(time.RFC3339, o.now)
		if err != nil {
			return fmt.Errorf("--now: %w", err)
		}
		now = metav1.NewTime(t)
	}
	if o.clusterMode {
		if len(args) > 0 || len(o.files) > 0 {
			return fmt.Errorf("--cluster reads the cluster: give no DIR or -f")
		}
		if o.output != "summary" || o.policies || o.strict {
			return fmt.Errorf("--cluster prints the comparison only: -o, --policies and --strict do not apply")
		}
		return o.runCluster(cmd.Context(), cmd.OutOrStdout(), now)
	}
	for _, src := range sources {
		if _, err := os.Stat(src); src != "-" && errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: no such file or directory", src)
		}
	}
	st, err := app.Once(sources, project.Flags{Profiles: o.profiles, CRDs: o.crds, Classes: o.classes, NoKustomize: !o.kustomize, Trust: o.trust},
		app.OnceOptions{In: cmd.InOrStdin(), Now: now, KeepTable: o.policies, Where: strings.Join(sourceNames(sources), ", ")})
	if err != nil {
		return err
	}
	lr, res := st.Update.Result, st.Result

	out := cmd.OutOrStdout()
	if st.Empty != "" {
		// Nothing loaded and nothing refused: a folder with no manifests
		// is not a pass (a CI job pointed at the wrong folder must fail).
		w := out
		if o.output != "summary" {
			w = cmd.ErrOrStderr()
		}
		fmt.Fprintln(w, st.Empty)
		return exitError{exitProblems}
	}
	switch o.output {
	case "yaml":
		if err := report.WriteObjectsYAML(out, res); err != nil {
			return err
		}
		if err := report.WriteFindingsYAML(out, report.Findings(lr, res)); err != nil {
			return err
		}
		report.WriteLoadProblems(cmd.ErrOrStderr(), lr)
	case "json":
		if err := report.WriteObjectsJSON(out, res, report.Findings(lr, res)); err != nil {
			return err
		}
		report.WriteLoadProblems(cmd.ErrOrStderr(), lr)
	case "github":
		fs := report.Findings(lr, res)
		report.WriteGitHub(out, fs)
		fmt.Fprintln(out, report.GitHubSummary(fs))
	case "sarif":
		if err := report.WriteSARIF(out, report.Findings(lr, res), buildVersion().Version); err != nil {
			return err
		}
	default:
		report.WriteSummary(out, lr, res, st.Load, st.Load+st.Translate)
		if o.policies {
			report.WritePolicies(out, res)
		}
	}
	if len(lr.Problems) > 0 || res.HasErrors() || (o.strict && hasWarnings(res)) {
		return exitError{exitProblems}
	}
	return nil
}

func hasWarnings(res *engine.Result) bool {
	for _, f := range res.Findings {
		if f.Severity == engine.SeverityWarning {
			return true
		}
	}
	return false
}

// sourceNames names check's sources as its messages do ("-" is <stdin>).
func sourceNames(sources []string) []string {
	names := make([]string, len(sources))
	for i, src := range sources {
		names[i] = src
		if src == "-" {
			names[i] = "<stdin>"
		}
	}
	return names
}
