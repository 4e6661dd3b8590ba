package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPolicies(t *testing.T) {
	out, _, code := runGwdev(t, "", "check", "--policies", "../../samples/backend-tls")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"\nPolicies:\n  Service default/secure-app\n    ✓ BackendTLSPolicy default/secure-app  Accepted: TLS to the backends, SNI app.internal, CA ConfigMap default/backend-ca"} {
		if !strings.Contains(out, want) {
			t.Errorf("check --policies lacks %q:\n%s", want, out)
		}
	}
	if plain, _, _ := runGwdev(t, "", "check", "../../samples/backend-tls"); strings.Contains(plain, "Policies:") {
		t.Error("the Policies section is shown without --policies")
	}

	// A refused policy says why: a conflict names the winner.
	dir := t.TempDir()
	data, err := os.ReadFile("../../engine/testdata/btlsp-conflict-name-order.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runGwdev(t, "", "check", "--policies", dir)
	want := "    ✗ BackendTLSPolicy default/conflicted-2  Conflicted: not applied: BackendTLSPolicy default/conflicted-1 targets the same Service and is older or sorts first"
	if !strings.Contains(out, want) {
		t.Errorf("check --policies lacks %q:\n%s", want, out)
	}
}

func TestExplainPolicies(t *testing.T) {
	out, _, code := runGwdev(t, "", "explain", "--dir", "../../samples/backend-tls", "http://app.example.com:8081/wrong-ca")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	want := "  policies:      Service default/wrong-ca: ✓ BackendTLSPolicy default/wrong-ca  Accepted: TLS to the backends, SNI app.internal, CA ConfigMap default/other-ca"
	if !strings.Contains(out, want) {
		t.Errorf("explain lacks %q:\n%s", want, out)
	}
}
