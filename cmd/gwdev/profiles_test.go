package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCheckProfileFlag(t *testing.T) {
	out, errOut, code := runGwdev(t, "", "check", "--profile", "gwdev=nginx", "../../samples/basic")
	if code != exitUsage || !strings.Contains(errOut, `--profile: "gwdev=nginx": want GATEWAYCLASS=PROFILE with PROFILE one of generic, gwin`) {
		t.Errorf("bad profile: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runGwdev(t, "", "check", "--profile", "gwdev=gwin", "../../samples/basic")
	if code != 0 || !strings.Contains(out, "implementation profile gwin") {
		t.Errorf("gwdev as gwin: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCheckGwdevYAMLProfilesAndYCCertificates: gwdev.yaml maps a class to
// the gwin profile and gives a YCCertificate's local PEM files.
func TestCheckGwdevYAMLProfilesAndYCCertificates(t *testing.T) {
	src, err := os.ReadFile("../../engine/testdata/gwin-gateway-valid.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for key, file := range map[string]string{"tls.crt": "shop.crt", "tls.key": "shop.key"} {
		m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(key) + `: (\S+)$`).FindSubmatch(src)
		pemData, err := base64.StdEncoding.DecodeString(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), pemData, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"gwdev.yaml": "profiles: {cloud: gwin}\nycCertificates:\n  shop-cert: {cert: shop.crt, key: shop.key}\n",
		"gw.yaml": `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  annotations: {gwin.yandex.cloud/listeners.rbac.action: DENY}
spec:
  gatewayClassName: cloud
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    tls: {certificateRefs: [{group: gwin.yandex.cloud, kind: YCCertificate, name: shop-cert}]}
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runGwdev(t, "", "check", dir)
	if code != 0 || !strings.Contains(out, "implementation profile gwin") || !strings.Contains(out, "rbac.action DENY without principals refuses nothing") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "gwdev.yaml"), []byte("ycCertificates:\n  shop-cert: {cert: missing.crt, key: shop.key}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runGwdev(t, "", "check", dir); code != exitUsage || !strings.Contains(errOut, "gwdev.yaml ycCertificates default/shop-cert: open ") {
		t.Errorf("missing PEM: exit %d: %s", code, errOut)
	}
}
