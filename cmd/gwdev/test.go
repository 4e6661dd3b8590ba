package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
)

// testOptions are the flags of `gwdev test`.
type testOptions struct {
	trust    bool
	dir      string
	tests    string
	format   string
	backends []string
	profiles []string
	crds     string
	seed     uint64
	// record is --record FILE: the arguments after DIR are URLs.
	record string
	// update is --update.
	update bool
}

func newTestCmd() *cobra.Command {
	o := &testOptions{}
	cmd := &cobra.Command{
		Use:   "test [DIR] [--record FILE URL...]",
		Short: "Run routing tests: send each case through the data plane and check what it gets",
		Long: `test serves the manifests in DIR (default: the current directory) on loopback, as gwdev up
would but on free ports, and runs every routing test file below DIR (*.gwtest.yaml, or
--tests PATH): each case's request is sent by a real client (HTTP/1.1, HTTP/2, h2c, gRPC, TLS,
TCP, UDP) and what happened (the route, rule and match, the backend, the status, the response
headers, what the echo backend received, a redirect's Location, mirrors, ExternalAuth checks,
a TCP/UDP reply, a weighted split's shares, or a refusal and why) is checked against the
expectations the case gives; only those are checked. Test files are never loaded as manifests.

Exit status: 0 when every case passes, 1 when one fails, 2 on usage errors or a test file that
does not parse or expects the impossible (a port no listener has, a Service or route the folder
does not have), each error at file:line:column.

Formats (--format): human (default), junit (JUnit XML: one testsuite per file), json, github
(workflow annotations on the test file's lines), sarif (SARIF 2.1.0).

Examples:

  gwdev test samples/basic
  gwdev test --format junit samples/basic
  gwdev test samples/basic --record /tmp/basic.gwtest.yaml http://app.example.com:8080/api http://app.example.com:8080/

--record FILE sends each URL once and writes FILE with a case per URL that expects what happened
(the route, rule and match, the backend, the status, the path and Host the backend received, a
redirect's Location, a stream's reply, or the refusal): freeze today's routing before a change,
then run gwdev test --tests FILE after it.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir = "."
			if len(args) > 0 && !strings.Contains(args[0], "://") {
				o.dir, args = args[0], args[1:]
			}
			if o.record != "" {
				return o.runRecord(cmd, cmd.OutOrStdout(), args)
			}
			if len(args) > 0 {
				return fmt.Errorf("test takes one folder (URLs only with --record FILE): %s", strings.Join(args, " "))
			}
			return o.run(cmd, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.tests, "tests", "", "a test file or a folder of them (default: every *.gwtest.yaml below DIR)")
	f.StringVar(&o.format, "format", "human", "output format: "+formatList(report.RoutingTestFormats))
	f.Uint64Var(&o.seed, "seed", app.DefaultTestSeed, "seed of the weighted backend picks: the same seed, the same picks (a split's shares repeat)")
	f.StringVar(&o.record, "record", "", "write FILE (a new *.gwtest.yaml) with a case per URL expecting what happens now")
	f.BoolVar(&o.update, "update", false, "rewrite the expectations that fail to what happens now, in place, printing each change; then run again")
	f.StringArrayVar(&o.backends, "backend", nil, "as for up: namespace/service:port=host:port")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	return cmd
}

func (o *testOptions) flags() project.Flags {
	return project.Flags{Backends: o.backends, Profiles: o.profiles, CRDs: o.crds, Trust: o.trust}
}

func (o *testOptions) runRecord(cmd *cobra.Command, out io.Writer, urls []string) error {
	if _, err := os.Stat(o.record); err == nil {
		return fmt.Errorf("--record %s: the file exists; record into a new file (and compare, or remove it first)", o.record)
	}
	f, err := app.RecordTests(cmd.Context(), o.dir, o.flags(), urls, app.TestOptions{Seed: o.seed})
	if err != nil {
		return err
	}
	b, err := app.TestFileYAML(f, "recorded by: gwdev test "+o.dir+" --record "+o.record+" "+strings.Join(urls, " "))
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.record, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "recorded %s in %s\n", report.Plural(len(f.Cases), "case"), o.record)
	return nil
}

func (o *testOptions) run(cmd *cobra.Command, out, errOut io.Writer) error {
	if !slices.Contains(report.RoutingTestFormats, o.format) {
		return fmt.Errorf("unknown format %q (want %s)", o.format, formatList(report.RoutingTestFormats))
	}
	run, err := app.RunTests(cmd.Context(), o.dir, o.flags(),
		app.TestOptions{Tests: o.tests, Seed: o.seed})
	var tfe *app.TestFilesError
	if errors.As(err, &tfe) {
		fmt.Fprintln(errOut, tfe.Error())
		return exitError{exitUsage}
	}
	if err != nil {
		return err
	}
	if err := report.WriteRoutingTests(out, run, o.format, buildVersion().Version); err != nil {
		return err
	}
	if _, failed := run.Counts(); failed > 0 && o.update {
		notes, err := app.UpdateTests(run)
		for _, n := range notes {
			fmt.Fprintln(errOut, "updated", n)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(errOut, "running the tests again after --update:")
		if run, err = app.RunTests(cmd.Context(), o.dir, o.flags(), app.TestOptions{Tests: o.tests, Seed: o.seed}); err != nil {
			return err
		}
		if err := report.WriteRoutingTests(out, run, o.format, buildVersion().Version); err != nil {
			return err
		}
	}
	if _, failed := run.Counts(); failed > 0 {
		return exitError{exitProblems}
	}
	return nil
}
