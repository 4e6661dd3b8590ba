package engine_test

import (
	"encoding/base64"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/gwin"
	"github.com/gwdev/gwdev/internal/testkit"
)

// translateYAML loads manifests and translates them with opts.
func translateYAML(t *testing.T, manifests string, opts engine.Options) *engine.Result {
	t.Helper()
	opts.Now = goldenNow
	return testkit.Translate(t, "test.yaml", []byte(manifests), opts)
}

// findings renders the findings about one kind as "severity: message".
func findings(res *engine.Result, kind string) []string {
	var out []string
	for _, f := range res.Findings {
		if f.Object.Kind == kind {
			out = append(out, string(f.Severity)+": "+f.Condition()+" "+f.Message)
		}
	}
	return out
}

const profileGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  annotations:
    gwin.yandex.cloud/listeners.rbac.action: "PERMIT"
spec:
  gatewayClassName: CLASS
  listeners:
  - {name: http, protocol: HTTP, port: 80}
`

func TestProfileChosenByOptions(t *testing.T) {
	// Another class name, mapped to gwin: its annotations are validated.
	res := translateYAML(t, strings.ReplaceAll(profileGateway, "CLASS", "my-gwin"), engine.Options{Profiles: map[string]string{"my-gwin": "gwin"}})
	if got := findings(res, "Gateway"); len(got) != 1 || !strings.Contains(got[0], `Accepted=False invalid gwin settings: annotation gwin.yandex.cloud/listeners.rbac.action: "PERMIT" is not valid: want one of ALLOW, DENY`) {
		t.Errorf("my-gwin as gwin: %q", got)
	}
	// gwin-default mapped to generic: the annotations mean nothing.
	res = translateYAML(t, strings.ReplaceAll(profileGateway, "CLASS", "gwin-default"), engine.Options{Profiles: map[string]string{"gwin-default": "generic"}})
	if res.HasErrors() {
		t.Errorf("gwin-default as generic: %v", res.Findings)
	}
	// An unknown profile is an error and the class is generic.
	res = translateYAML(t, strings.ReplaceAll(profileGateway, "CLASS", "c"), engine.Options{Profiles: map[string]string{"c": "nginx"}})
	if got := findings(res, "GatewayClass"); !containsSub(got, `unknown implementation profile "nginx" (known: generic, gwin); using generic`) {
		t.Errorf("unknown profile: %q", got)
	}
	if got, want := engine.ProfileNames(), []string{"generic", "gwin"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ProfileNames %v", got)
	}
}

func containsSub(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// testdataTLSSecret returns the PEM certificate and key of the Secret
// "cert" in testdata/gwin-gateway-valid.in.yaml.
func testdataTLSSecret(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	b, err := os.ReadFile("testdata/gwin-gateway-valid.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	get := func(key string) []byte {
		m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(key) + `: (\S+)$`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("no %s in testdata", key)
		}
		out, err := base64.StdEncoding.DecodeString(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return get("tls.crt"), get("tls.key")
}

func TestYCCertificateFromLocalPEM(t *testing.T) {
	const gw = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwin-default
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    tls:
      certificateRefs: [{group: gwin.yandex.cloud, kind: YCCertificate, name: shop-cert}]
`
	crt, key := testdataTLSSecret(t)
	res := translateYAML(t, gw, engine.Options{ProfileOptions: map[string]any{gwin.Name: gwin.Options{YCCertificates: map[string]gwin.PEMCertificate{"default/shop-cert": {CertPEM: crt, KeyPEM: key}}}}})
	if res.HasErrors() {
		t.Fatalf("findings: %v", res.Findings)
	}
	l := res.Table.Gateways[0].Ports[0].Listeners[0]
	if l.TLS == nil || len(l.TLS.Certificates) != 1 || len(l.TLS.Certificates[0].DNSNames) == 0 {
		t.Errorf("listener TLS %+v", l.TLS)
	}
	// A PEM that does not parse is a clear ResolvedRefs reason.
	res = translateYAML(t, gw, engine.Options{ProfileOptions: map[string]any{gwin.Name: &gwin.Options{YCCertificates: map[string]gwin.PEMCertificate{"default/shop-cert": {CertPEM: crt, KeyPEM: crt}}}}})
	if got := findings(res, "Gateway"); !containsSub(got, "ResolvedRefs=False tls.certificateRefs[0]: YCCertificate default/shop-cert (local PEM files): ") {
		t.Errorf("bad PEM: %q", got)
	}
}
