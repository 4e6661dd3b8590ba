// Package cputime measures the CPU time a test's process used, for limits
// that must hold on a loaded machine: other processes stretch wall time,
// not this process's CPU time.
package cputime

import "time"

// Process returns the CPU time (user and system, all threads) the process
// has used so far, and whether this system measures it (unix); elsewhere
// it returns 0, false and a limit on it cannot be checked.
func Process() (time.Duration, bool) { return process() }
