package engine_test

import (
	"os"
	"strings"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestFrontendTrustBundleWithNamespace: the v1.7.0 spec says the namespace
// of a ClusterTrustBundle reference "MUST be unset". The CRD refuses one
// with a namespace, so only a Snapshot built in Go can hold it: the engine
// then refuses the reference (InvalidCACertificateRef, naming the reason)
// instead of looking the bundle up in a namespace or asking for a
// ReferenceGrant.
func TestFrontendTrustBundleWithNamespace(t *testing.T) {
	data, err := os.ReadFile("testdata/tls-frontend-ca-clustertrustbundle.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	snap := testkit.Load(t, "ctb.yaml", data)
	ns := gwv1.Namespace("team-a")
	snap.Gateways[0].Spec.TLS.Frontend.Default.Validation.CACertificateRefs[0].Namespace = &ns
	res := engine.Translate(snap, engine.Options{Now: goldenNow})
	var got []string
	for _, l := range res.Objects.Gateways[0].Status.Listeners {
		for _, c := range l.Conditions {
			if c.Type == "ResolvedRefs" || c.Type == "Accepted" {
				got = append(got, c.Type+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
			}
		}
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{
		"Accepted=False NoValidCACertificate",
		"ResolvedRefs=False InvalidCACertificateRef: spec.tls.frontend caCertificateRefs[0]: ClusterTrustBundle gwdev-ca is cluster-scoped: namespace must be unset",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("listener conditions:\n%s\nwant %q", joined, want)
		}
	}
}
