//go:build unix

package main

import "syscall"

// raiseFileLimit raises the soft limit on open descriptors to the hard
// limit and returns the limit now in force (0: unknown).
func raiseFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	if rl.Cur < rl.Max {
		want := rl
		want.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err == nil {
			rl = want
		}
	}
	return uint64(rl.Cur)
}
