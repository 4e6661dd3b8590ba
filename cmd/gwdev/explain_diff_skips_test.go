package main

import (
	"strings"
	"testing"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/app"
)

// diffSkip is why the differential test compared a probe only up to the
// backend: what the data plane did next depends on something explain does
// not do, and explain's output must say so.
type diffSkip string

// diffSkips are the only reasons (compareTraces returns no other).
const (
	// skipExternalAuth: an ExternalAuth filter; explain does not ask the
	// auth server, so whether the backend is reached is the server's call.
	// Explain says "not done: ExternalAuth at … would be asked".
	skipExternalAuth diffSkip = "ExternalAuth not asked"
	// skipWeightedPick: the data plane picked another of several weighted
	// backends at random. Explain lists them under "candidates".
	skipWeightedPick diffSkip = "another weighted pick"
	// skipBackendFailed: the data plane reached for the backend explain
	// names (or its TLS) and that failed. Explain says "not done: backend
	// … not dialled" or "the TLS handshake of BackendTLSPolicy … not made".
	skipBackendFailed diffSkip = "backend failed"
)

// skipSaid checks that explain's output says what it did not do for a
// probe compared only up to the backend ("" : it says so, or nothing was
// skipped); otherwise it returns what is missing.
func skipSaid(skip diffSkip, tab *table.Table, ex *emulator.Trace) string {
	notDone := strings.Join(app.ExplainNotDone(tab, ex), "\n")
	switch skip {
	case "":
		return ""
	case skipExternalAuth:
		if !strings.Contains(notDone, "ExternalAuth at ") || !strings.Contains(notDone, "explain does not call it") {
			return "no ExternalAuth line under not done: " + notDone
		}
	case skipWeightedPick:
		if len(ex.Candidates) < 2 {
			return "fewer than two candidates"
		}
	case skipBackendFailed:
		if !strings.Contains(notDone, " not dialled: ") && !strings.Contains(notDone, "the TLS handshake of BackendTLSPolicy") {
			return "no backend line under not done: " + notDone
		}
	default:
		return "not one of the diffSkips"
	}
	return ""
}

// checkDiffSkips asserts the skip list is what it claims: the corpus's
// samples exercise ExternalAuth (samples/external-auth) and a backend that
// fails (samples/backend-tls, /wrong-ca), and skipped probes stay a small
// part of the corpus.
func checkDiffSkips(t *testing.T, probes int, skipped map[diffSkip]int) {
	t.Helper()
	for _, s := range []diffSkip{skipExternalAuth, skipBackendFailed} {
		if skipped[s] == 0 {
			t.Errorf("no probe was compared only up to the backend because of %q: the corpus lost the samples that show it, or the skip is no longer needed", s)
		}
	}
	total := 0
	for _, n := range skipped {
		total += n
	}
	if total*10 > probes {
		t.Errorf("%d of %d probes compared only up to the backend (%v): more than a tenth", total, probes, skipped)
	}
}
