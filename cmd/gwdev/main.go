// Command gwdev is a local development emulator for the Kubernetes Gateway
// API: it translates a folder of manifests like a conformant controller,
// reports status, and (with `up`) serves the result on loopback.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes of every gwdev command.
const (
	exitOK       = 0
	exitProblems = 1
	exitUsage    = 2
)

// exitError carries an exit code out of a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes gwdev with args and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintln(stderr, "gwdev:", err)
		return exitUsage
	}
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "gwdev",
		Short:         "Local emulator for the Kubernetes Gateway API",
		Long:          "gwdev translates Gateway API manifests like a conformant controller would, reports their status,\nand serves the routes on loopback so you can curl them before you deploy.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(dirFirst(newCheckCmd()), dirFirst(newUpCmd()), newExplainCmd(), dirFirst(newCertsCmd()), newVersionCmd(), dirFirst(newMigrateCmd()),
		newDiffCmd(), dirFirst(newGraphCmd()), newCRDsCmd(), newPullCmd(), newTrustCmd(), dirFirst(newLSPCmd()), dirFirst(newTestCmd()))
	// gwdev --version prints what gwdev version prints.
	root.Version = versionText()
	root.SetVersionTemplate("{{.Version}}")
	usageOnArgErrors(root)
	registerCompletions(root)
	return root
}

// usageOnArgErrors makes every command's wrong positional arguments a
// usage error that says what the command takes: its Use line and where
// its help is (exit 2, as for an unknown flag).
func usageOnArgErrors(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		usageOnArgErrors(c)
	}
	if cmd.Args == nil {
		return
	}
	check := cmd.Args
	cmd.Args = func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return fmt.Errorf("%s: %w\nusage: %s\nrun '%s --help' for the arguments and flags", c.Name(), err, c.UseLine(), c.CommandPath())
		}
		return nil
	}
}
