package tui

import (
	"crypto/x509"
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine/table"
)

// CommandFor is the dashboard's copy-as-curl for another front end (the
// web view): the command line that repeats t (curl, grpcurl, openssl or
// nc), verifying the server over TLS as the dashboard's c does, against
// the CA files gwdev knows (caFiles), the system's roots, or not (-k).
// notes say what was left out (redacted headers) and how TLS is verified.
func CommandFor(t emulator.Trace, tab *table.Table, caFiles []string) (cmd string, notes []string, err error) {
	var st serverTrust
	if overTLS(t) {
		st = trustChecker{caFiles: caFiles, systemRoots: x509.SystemCertPool, now: time.Now}.trustFor(t, tab)
	}
	return commandWithNotes(t, st)
}

// commandWithNotes is commandLineTrusting with what the status line says
// beside it: headers left out, and how the command verifies the server.
func commandWithNotes(t emulator.Trace, st serverTrust) (cmd string, notes []string, err error) {
	cmd, redacted, err := commandLineTrusting(t, st) // request_cmd.go
	if err != nil {
		return "", nil, err
	}
	if redacted > 0 {
		notes = append(notes, plural(redacted, "redacted or cut header")+" left out")
	}
	switch {
	case st.verifies():
		notes = append(notes, st.note)
	case st.note != "":
		notes = append(notes, insecureNote(t, st)) // request_trust.go
	}
	return cmd, notes, nil
}
