package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// migrateOptions are the flags of gwdev migrate.
type migrateOptions struct {
	// trust is --trust (trust.go).
	trust bool

	output    string
	compare   bool
	format    string
	namespace string
	class     string
	// backends, profiles and crds are --backend, --profile and --crds, as
	// for up (internal/app).
	backends, profiles []string
	crds               string
	// emitTests is --emit-tests FILE.
	emitTests string
}

func newMigrateCmd() *cobra.Command {
	o := &migrateOptions{}
	cmd := &cobra.Command{
		Use:   "migrate DIR",
		Short: "Convert the ingress-nginx Ingresses in DIR to Gateway API manifests (--compare: run both and show every difference)",
		Long: `migrate reads DIR, serves its Ingresses as ingress-nginx would (the same emulation gwdev up runs)
and writes Gateway API manifests that do the same wherever the Gateway API can say it: a Gateway
per IngressClass with its listeners and certificates, an HTTPRoute per host (two when HTTP
redirects to HTTPS), ReferenceGrants where routes or the Gateway refer across namespaces. The
rules keep ingress-nginx's order and matches (a regex path stays a case-insensitive prefix
RegularExpression that says so), canary weights become backendRef weights.

Every annotation or behaviour that is not carried over is written as a comment above its route
and listed on stderr with the Ingress's file:line. Output goes to stdout, or to -o FILE.

With --emit-tests FILE, migrate also writes FILE, routing tests (gwdev test) whose cases are the
requests --compare generates with the answers the Ingresses get as ingress-nginx: run them against
the converted routes to keep checking them against the old behaviour.

With --compare, nothing is written: both sides run in this process on loopback listeners, requests
generated from the Ingress rules go to both, and every difference is printed.

Exit status: 2 on usage errors; 1 when the converted manifests are refused or pruned by the CRDs,
when something security-relevant was not carried over (basic or external auth, client
certificates, address allow or deny lists, rate limits, a WAF: anything whose drop lets more
clients in; they are listed last, each with why), and with --compare when anything differs or was
dropped; 0 otherwise.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "write the manifests to this file (default: stdout)")
	f.BoolVar(&o.compare, "compare", false, "run the Ingresses and the converted routes side by side and print every difference")
	f.StringVar(&o.format, "format", "text", "--compare output: "+formatList(report.MigrationFormats)+" (github: workflow annotations)")
	f.StringVar(&o.emitTests, "emit-tests", "", "also write FILE (a new *.gwtest.yaml): the ingress-nginx side's answers as routing test cases")
	f.StringVar(&o.namespace, "gateway-namespace", "default", "namespace of the Gateways")
	f.StringVar(&o.class, "gateway-class", "", "GatewayClass of the Gateways (default: the IngressClass's name)")
	f.StringArrayVar(&o.backends, "backend", nil, "as for up: namespace/service:port=host:port (--compare sends its requests there)")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	return cmd
}

func (o *migrateOptions) run(cmd *cobra.Command, dir string) error {
	if !slices.Contains(report.MigrationFormats, o.format) {
		return fmt.Errorf("unknown --format %q (want %s)", o.format, formatList(report.MigrationFormats))
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no such file or directory", dir)
	}
	proj, err := project.Open([]string{dir}, project.Flags{Backends: o.backends, Profiles: o.profiles, CRDs: o.crds, Trust: o.trust})
	if err != nil {
		return err
	}
	lr, err := proj.Load(nil)
	if err != nil {
		return err
	}
	if len(lr.Snapshot.Ingresses) == 0 {
		report.WriteLoadProblems(cmd.ErrOrStderr(), lr)
		fmt.Fprintf(cmd.ErrOrStderr(), "No Ingress found in %s: nothing to migrate.\n", dir)
		return exitError{exitProblems}
	}
	if o.compare {
		return o.runCompare(cmd, proj, lr)
	}
	if o.emitTests != "" {
		if err := o.writeTests(cmd, dir, proj, lr); err != nil {
			return err
		}
	}
	// The output is judged as the folder was: against --crds (or
	// gwdev.yaml's crds:), so that a cluster's API server would take it.
	name := o.output
	if name == "" {
		name = "<stdout>"
	}
	m, err := app.Migrate(proj, lr, dir, name, o.migrationOptions())
	if err != nil {
		return err
	}
	if o.output == "" {
		if _, err := cmd.OutOrStdout().Write(m.Manifests); err != nil {
			return err
		}
	} else if err := os.WriteFile(o.output, m.Manifests, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", o.output, err)
	}
	report.WriteLoadProblems(cmd.ErrOrStderr(), lr)
	report.WriteDropped(cmd.ErrOrStderr(), m.Dropped)
	judged := report.WriteConvertedProblems(cmd.ErrOrStderr(), proj.CRDsName(), m.Converted)
	secure := report.WriteSecurityDropped(cmd.ErrOrStderr(), m.Dropped)
	if !judged || !secure {
		return exitError{exitProblems}
	}
	return nil
}

// migrationOptions are the choices of the flags.
func (o *migrateOptions) migrationOptions() ingressnginx.MigrationOptions {
	return ingressnginx.MigrationOptions{GatewayNamespace: o.namespace, GatewayClass: o.class}
}

// runCompare runs migrate --compare and prints the comparison.
func (o *migrateOptions) runCompare(cmd *cobra.Command, proj *project.Project, lr *watch.LoadResult) error {
	c, err := app.CompareMigration(cmd.Context(), proj, lr, o.migrationOptions())
	if err != nil {
		return err
	}
	if err := report.WriteMigrationComparison(cmd.OutOrStdout(), c, o.format, proj.CRDsName()); err != nil {
		return err
	}
	if c.Failed() {
		return exitError{exitProblems}
	}
	return nil
}

// writeTests writes --emit-tests FILE.
func (o *migrateOptions) writeTests(cmd *cobra.Command, dir string, proj *project.Project, lr *watch.LoadResult) error {
	if _, err := os.Stat(o.emitTests); err == nil {
		return fmt.Errorf("--emit-tests %s: the file exists; write into a new file", o.emitTests)
	}
	f, err := app.EmitMigrationTests(cmd.Context(), dir, project.Flags{Backends: o.backends, Profiles: o.profiles, CRDs: o.crds, Trust: o.trust}, proj, lr)
	if err != nil {
		return err
	}
	b, err := app.TestFileYAML(f, "the answers of "+dir+"'s Ingresses as ingress-nginx: gwdev migrate --emit-tests "+o.emitTests+" "+dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.emitTests, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d routing test cases to %s (run them: gwdev test --tests %s DIR)\n", len(f.Cases), o.emitTests, o.emitTests)
	return nil
}
