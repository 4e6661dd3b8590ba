package engine_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestEveryReasonExplained translates every engine golden case and the
// samples, and checks that each condition reason the engine emits gets an
// explanation (engine.ReasonHint, which the dashboard, check and SARIF show). gwdev's own notes (findings without a
// condition) are free text; those without an explanation are only logged.
func TestEveryReasonExplained(t *testing.T) {
	files, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no engine golden cases: %v", err)
	}
	samples, _ := filepath.Glob("../samples/*/*.yaml")
	files = append(files, samples...)
	l := testkit.Project(t)
	seen := map[string]bool{}
	missing, notes := map[string]string{}, map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lr := l.LoadBytes(f, data)
		res := engine.Translate(lr.Snapshot, engine.Options{Now: goldenNow})
		for _, fd := range res.Findings {
			if fd.Reason == "" {
				if engine.NoteHint(fd.Kind) == "" {
					notes[fd.Message] = f
				}
				continue
			}
			seen[fd.Reason] = true
			if engine.ReasonHint(fd.Type, fd.Reason) == "" {
				missing[fd.Condition()+" "+fd.Reason] = f
			}
		}
	}
	keys := make([]string, 0, len(missing))
	for k := range missing {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("no explanation for %s (from %s)", k, missing[k])
	}
	for n, f := range notes {
		t.Logf("note without explanation (shown without one): %s (from %s)", n, f)
	}
	if len(seen) < 20 {
		t.Errorf("only %d reasons seen; the engine cases did not load", len(seen))
	}
}

// TestReasonTable lists every negative reason the engine writes (grep
// engine/*.go for Reason constants): each must have an explanation.
func TestReasonTable(t *testing.T) {
	reasons := []string{
		"AddressNotAssigned", "AddressNotUsable", "BackendNotFound", "ConfigurationChanged", "Conflicted",
		"HostnameConflict", "Invalid", "InvalidCACertificateKind", "InvalidCACertificateRef", "InvalidCertificateRef",
		"InvalidKind", "InvalidParameters", "InvalidRouteKinds", "ListenersNotValid", "NoMatchingListenerHostname",
		"NoMatchingParent", "NotAllowed", "NotAllowedByListeners", "NoValidCACertificate", "OverlappingHostnames",
		"ParentNotAccepted", "ParentNotProgrammed", "Pending", "ProtocolConflict", "RefNotPermitted",
		"TargetNotFound", "UnsupportedAddress", "UnsupportedProtocol", "UnsupportedValue",
	}
	for _, r := range reasons {
		for _, cond := range []string{"Accepted", "ResolvedRefs", "Programmed", "Conflicted"} {
			if engine.ReasonHint(cond, r) == "" {
				t.Errorf("no explanation for %s %s", cond, r)
			}
		}
	}
}
