//go:build !unix

package main

// raiseFileLimit is a no-op where descriptors have no rlimit; 0: unknown.
func raiseFileLimit() uint64 { return 0 }
