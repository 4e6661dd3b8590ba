package watch

import (
	"strings"
	"testing"
)

// TestClusterTrustBundleLoaded: a certificates.k8s.io/v1 ClusterTrustBundle
// is loaded cluster-scoped with its trustBundle; a bundle holding no
// certificate, or a block that is not a CERTIFICATE, is refused as the
// apiserver refuses it, naming spec.trustBundle.
func TestClusterTrustBundleLoaded(t *testing.T) {
	l := newTestLoader(t)
	const ca = "-----BEGIN CERTIFICATE-----\nMIIBYzCCAQmgAwIBAgIBATAKBggqhkjOPQQDAjAYMRYwFAYDVQQDEw1nd2RldiB0\nZXN0IENBMCAXDTI1MDEwMTAwMDAwMFoYDzIxMjUwMTAxMDAwMDAwWjAYMRYwFAYD\nVQQDEw1nd2RldiB0ZXN0IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAERuP6\nRHc+/3tAYdlbxdecyiZV6QxGL9GIg/4zdLJbNkPKmEfmn+jcyuk6lJckA6BvKp3o\nm3CtL+YhSS2YuHbn1qNCMEAwDgYDVR0PAQH/BAQDAgKEMA8GA1UdEwEB/wQFMAMB\nAf8wHQYDVR0OBBYEFFV+vqG1N/n9C0hUAlsxG47a/XoeMAoGCCqGSM49BAMCA0gA\nMEUCIQDY46HDLB4356fyIm5Kbj1LeQavgMozcMC2PrCGF1tWhwIgfLBug8X5Gq9K\nE3iP0xPPS4v++PzkKSEneJ6Y6qCvgvU=\n-----END CERTIFICATE-----\n"
	res := l.LoadBytes("ok.yaml", []byte("apiVersion: certificates.k8s.io/v1\nkind: ClusterTrustBundle\nmetadata: {name: ca}\nspec:\n  trustBundle: |\n    "+strings.ReplaceAll(strings.TrimSpace(ca), "\n", "\n    ")+"\n"))
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	if got := res.Snapshot.ClusterTrustBundles; len(got) != 1 || got[0].Name != "ca" || got[0].Namespace != "" || got[0].Spec.TrustBundle != ca || got[0].Kind != "ClusterTrustBundle" {
		t.Fatalf("loaded %+v", got)
	}
	for _, c := range []struct{ name, bundle, want string }{
		{"empty", `""`, "spec.trustBundle: Invalid value: \"<omitted>\": at least one trust anchor must be provided"},
		{"key", `"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"`, "entry 0 has bad block type PRIVATE KEY"},
		{"garbage", `"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"`, "spec.trustBundle: Invalid value"},
	} {
		res := l.LoadBytes(c.name+".yaml", []byte("apiVersion: certificates.k8s.io/v1\nkind: ClusterTrustBundle\nmetadata: {name: "+c.name+"}\nspec: {trustBundle: "+c.bundle+"}\n"))
		if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].String(), c.want) || len(res.Snapshot.ClusterTrustBundles) != 0 {
			t.Errorf("%s: problems %v, want one containing %q", c.name, res.Problems, c.want)
		}
	}
}
