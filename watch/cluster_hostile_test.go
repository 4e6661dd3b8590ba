package watch

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/gwdev/gwdev/engine"
)

// FuzzCheckListed: an object checkListed accepts for a kind is of that
// kind's apiVersion and kind, in the namespace asked for, and its namespace
// and name are valid names (so none is "..", has a slash or is absolute).
func FuzzCheckListed(f *testing.F) {
	f.Add(uint8(1), "gateway.networking.k8s.io/v1", "../../../../x", "default", "g", "")
	f.Add(uint8(1), "gateway.networking.k8s.io/v1", "Gateway", "../x", "g", "")
	f.Add(uint8(1), "gateway.networking.k8s.io/v1", "Gateway", "default", "g", "default")
	f.Add(uint8(0), "gateway.networking.k8s.io/v1", "GatewayClass", "x", "c", "")
	f.Add(uint8(1), "apps/v1", "Gateway", "default", "../../g", "")
	kinds := engine.Kinds()
	f.Fuzz(func(t *testing.T, which uint8, apiVersion, kind, namespace, name, asked string) {
		k := kinds[int(which)%len(kinds)]
		gv := schema.GroupVersion{Group: k.Group, Version: k.Version}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"namespace": namespace, "name": name}}}
		if err := checkListed(k, gv, asked, u); err != nil {
			if !strings.Contains(err.Error(), "refused") {
				t.Errorf("error without its verdict: %v", err)
			}
			return
		}
		switch {
		case apiVersion != gv.String() || kind != k.Kind:
			t.Errorf("accepted %q %q for %s %s", apiVersion, kind, gv, k.Kind)
		case !k.Namespaced && namespace != "":
			t.Errorf("accepted namespace %q for the cluster-scoped %s", namespace, k.Kind)
		case k.Namespaced && (len(validation.IsDNS1123Label(namespace)) > 0 || !filepath.IsLocal(namespace)):
			t.Errorf("accepted namespace %q", namespace)
		case k.Namespaced && asked != "" && namespace != asked:
			t.Errorf("accepted namespace %q, %q asked for", namespace, asked)
		case len(validation.IsDNS1123Subdomain(name)) > 0 || !filepath.IsLocal(name):
			t.Errorf("accepted name %q", name)
		}
	})
}

// TestClusterCredentialsAreRedacted: the user information of the
// kubeconfig's server moves into basic auth (no URL client-go makes holds
// it), and every credential is taken out of text, in the forms it takes in
// URLs too; a token in the URL's user name is a credential.
func TestClusterCredentialsAreRedacted(t *testing.T) {
	rc := &rest.Config{Host: "https://tok3n:p%40ss%20word@example.com:6443/prefix", BearerToken: "bearer-token-1"}
	c := guardCredentials(rc)
	if rc.Host != "https://example.com:6443/prefix" || rc.Username != "" || rc.Password != "" {
		t.Errorf("with a token: host %q, basic auth %q:%q; want the user information dropped (the token is sent)", rc.Host, rc.Username, rc.Password)
	}
	text := `Get "https://tok3n:p%40ss%20word@example.com:6443/x": you sent Bearer bearer-token-1 as tok3n with p@ss word, or https://other:thing@host`
	got := c.redact(text)
	for _, secret := range []string{"tok3n", "p@ss word", "p%40ss%20word", "bearer-token-1", "other:thing"} {
		if strings.Contains(got, secret) {
			t.Errorf("redact left %q in:\n%s", secret, got)
		}
	}
	if !strings.Contains(got, "https://"+engine.Redacted+"@example.com:6443/x") {
		t.Errorf("redact: %s", got)
	}
	rc = &rest.Config{Host: "admin:secret-pass@example.com"}
	guardCredentials(rc)
	if rc.Host != "https://example.com" || rc.Username != "admin" || rc.Password != "secret-pass" {
		t.Errorf("without a token: host %q, basic auth %q:%q; want the user information as basic auth", rc.Host, rc.Username, rc.Password)
	}
	if got := serverName("https://u:p@example.com:6443/a?token=x#f"); got != "https://example.com:6443/a" {
		t.Errorf("serverName: %q", got)
	}
}
