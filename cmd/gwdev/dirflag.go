package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Every command that reads a folder of manifests takes it the same way: as
// the positional DIR (`gwdev check samples/basic`, `gwdev explain
// samples/basic URL`) or with --dir/-d (`gwdev check --dir samples/basic`).
// Both name the same thing; giving two different folders is a usage error.

// withDirFlag adds --dir/-d to cmd. dirArg says where DIR is among the
// positional arguments of a call with n of them (-1: none there); the
// wrapped RunE gets args with --dir put in that place when DIR itself was
// not given, so that the command reads one form only.
func withDirFlag(cmd *cobra.Command, dirArg func(n int) int, insertAt func(args []string) int) *cobra.Command {
	var dir string
	cmd.Flags().StringVarP(&dir, "dir", "d", "", "the folder of manifests (the same as giving DIR)")
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if dir == "" {
			return run(c, args)
		}
		if i := dirArg(len(args)); i >= 0 {
			if args[i] != dir {
				return fmt.Errorf("two folders given: %s and --dir %s", args[i], dir)
			}
			return run(c, args)
		}
		at := insertAt(args)
		with := append(append(append([]string{}, args[:at]...), dir), args[at:]...)
		return run(c, with)
	}
	return cmd
}

// dirFirst is withDirFlag's layout for `command [DIR]`.
func dirFirst(cmd *cobra.Command) *cobra.Command {
	return withDirFlag(cmd, func(n int) int {
		if n >= 1 {
			return 0
		}
		return -1
	}, func([]string) int { return 0 })
}
