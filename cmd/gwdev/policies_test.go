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

// TestCheckPoliciesXBackendTrafficPolicy: check --policies shows what an
// XBackendTrafficPolicy does to its Service and to each route sending to
// it, and a conflicted one says which policy won.
func TestCheckPoliciesXBackendTrafficPolicy(t *testing.T) {
	for _, tc := range []struct {
		golden string
		want   []string
	}{
		{"xbtp-attached", []string{
			"  Service default/svc\n    ✓ XBackendTrafficPolicy default/svc-traffic  Accepted: retries limited to 30% of requests per 10s (at least 3 per 2s); retries beyond the budget answer 503; session persistence Cookie \"sticky\" on rules without their own",
			"  HTTPRoute default/web\n    ✓ XBackendTrafficPolicy default/svc-traffic  Accepted: httproute/default/web/rule/0: retries limited by the budget of Service/default/svc, session persistence Cookie \"sticky\"; httproute/default/web/rule/1: requests count toward the retry budget of Service/default/svc, session persistence: the rule's own wins over the policy's",
			"  GRPCRoute default/rpc\n    ✓ XBackendTrafficPolicy default/svc-traffic  Accepted: grpcroute/default/rpc/rule/0: requests count toward the retry budget of Service/default/svc, session persistence Cookie \"sticky\"",
		}},
		{"xbtp-conflicted", []string{
			"    ✗ XBackendTrafficPolicy default/a-newer  Conflicted: not applied: Service default/svc: XBackendTrafficPolicy default/b-older targets it too and is older or sorts first",
		}},
	} {
		dir := t.TempDir()
		data, err := os.ReadFile("../../engine/testdata/" + tc.golden + ".in.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "m.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, _, _ := runGwdev(t, "", "check", "--policies", dir)
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: check --policies lacks %q:\n%s", tc.golden, want, out)
			}
		}
	}
}
