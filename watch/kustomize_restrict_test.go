package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKustomizeKeepsKubectlsRestrictionsWithConsent: consent lets a
// kustomization fetch remote resources, nothing more. Built with kubectl's
// defaults, it still cannot load a file outside its folder tree (../ or an
// absolute path), run an exec KRM function or inflate a Helm chart: each is
// a problem at the kustomization, and nothing it asked for is loaded or run.
func TestKustomizeKeepsKubectlsRestrictionsWithConsent(t *testing.T) {
	for name, c := range map[string]struct{ kust, want string }{
		"parent folder": {"resources: [../outside/secret.yaml]\n", "kustomize build failed"},
		"absolute path": {"resources: [OUTSIDE/secret.yaml]\n", "kustomize build failed"},
		"exec function": {"resources: [svc.yaml]\ntransformers: [fn.yaml]\n", "kustomize build failed"},
		// refused before helm is looked for (no helm binary needed)
		"helm chart": {"resources: [svc.yaml]\nhelmCharts: [{name: shop, repo: oci://example.invalid/charts, version: 1.0.0}]\n", "--enable-helm"},
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			outside := filepath.Join(parent, "outside")
			writeTree(t, outside, map[string]string{"secret.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: outside}\nspec: {ports: [{port: 80}]}\n"})
			marker := filepath.Join(outside, "ran")
			kust := strings.ReplaceAll(c.kust, "OUTSIDE", outside)
			dir := filepath.Join(parent, "proj")
			writeTree(t, dir, map[string]string{
				"kustomization.yaml": kust,
				"svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata: {name: inside}\nspec: {ports: [{port: 80}]}\n",
				"fn.yaml": "apiVersion: example.com/v1\nkind: Touch\nmetadata:\n  name: touch\n  annotations:\n" +
					"    config.kubernetes.io/function: |\n      exec:\n        path: ./touch.sh\n",
				"touch.sh": "#!/bin/sh\ntouch " + marker + "\ncat\n",
			})
			if err := os.Chmod(filepath.Join(dir, "touch.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			res := newTestLoader(t).Load(dir, Sources{Remote: Consent{Given: true}})
			if len(res.Problems) == 0 || !strings.Contains(res.Problems[0].Message, c.want) {
				t.Errorf("problems %v, want the kustomization refused", res.Problems)
			}
			for _, o := range res.Snapshot.Services {
				if o.Name == "outside" {
					t.Errorf("the Service outside the kustomization's tree was loaded")
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the exec function ran")
			}
		})
	}
}
